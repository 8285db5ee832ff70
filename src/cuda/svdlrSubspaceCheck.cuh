/*=========================================================================
 *
 *  Copyright SVDLowRankReconstruction contributors
 *
 *  Licensed under the Apache License, Version 2.0 (the "License");
 *  you may not use this file except in compliance with the License.
 *  You may obtain a copy of the License at
 *
 *         https://www.apache.org/licenses/LICENSE-2.0.txt
 *
 *  Unless required by applicable law or agreed to in writing, software
 *  distributed under the License is distributed on an "AS IS" BASIS,
 *  WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 *  See the License for the specific language governing permissions and
 *  limitations under the License.
 *
 *=========================================================================*/
#ifndef svdlr_SubspaceCheck_cuh
#define svdlr_SubspaceCheck_cuh

// The subspace solver's a-posteriori check on the GPU (the criterion: svdlrSubspaceCheck.h). After the
// eigen-solve of the Rayleigh-Ritz matrices, per matrix:
//   residuals  Rho = Z W - Q (W Theta)    (n x w): Z = G Q (left by IterateSubspace), W the eigenvectors of H,
//                                         so column i is G v_i - theta_i v_i for the Ritz pair (theta_i, v_i);
//   one block: tr(G), the w residual norms, the criterion -> a redo flag (1: redo with the exact solver).
// Cost: two (n x w) x (w x w) products and two small kernels, next to the iteration's 2 x 13 products with the
// n x n Gram matrix.

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace svdlr
{
namespace detail
{

struct SubspaceWorkspace;

/** Runs the check on the batch, on the handle's stream.
 * gram:        (count, n, n) the Gram matrices (unchanged by the subspace solver);
 * basis:       (count, n, w) Q; image: (count, n, w) Z = G Q;
 * eigenvectors (count, w, w) and eigenvalues (count, w) of H from the eigen-solver (ascending);
 * redo:        (count) 1 where the matrix fails the check, else 0.
 * workspace.inverse and workspace.check are overwritten; workspace.check then holds, per matrix, the w
 * residual norms (descending order of theta) and tr(G) at CheckData(). */
void
CheckSubspaceBatched(cublasHandle_t handle, cudaStream_t stream, const double * gram, const double * basis,
                     const double * image, const double * eigenvectors, const double * eigenvalues,
                     const SubspaceWorkspace & workspace, std::int64_t n, std::int64_t w, std::int64_t k,
                     std::int64_t count, int * redo);

} // namespace detail
} // namespace svdlr

#endif
