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
#ifndef svdlr_EigenSolver_h
#define svdlr_EigenSolver_h

// The batched symmetric eigen-solver of the CUDA backend: cuSOLVER's cusolverDnXsyevBatched (64-bit API,
// CUDA >= 12.6) in float64 on the Gram matrices. It dominates the backend's time: measured on the H100,
// about 20-24 ms for 256 Gram matrices of 256 x 256 and about 80 ms for 16 of 1024 x 1024, with a large
// workspace (about 0.94 GB for the first batch), which the batch planner counts. The call blocks the
// calling thread for much of the solve (all of it at n = 1024), so the pipeline makes it from a solver
// thread. Eigenvalues come out in ascending order.

#include "svdlrCudaExport.h"

#include <cusolverDn.h>

#include <cstddef>
#include <cstdint>

namespace svdlr
{
namespace detail
{

struct EigenWorkspaceSize
{
  std::size_t deviceBytes{ 0 };
  std::size_t hostBytes{ 0 };
};

/** Workspace that SolveSymmetricEigenBatched needs for `count` matrices of n x n, in `mode`. */
SVDLR_CUDA_EXPORT EigenWorkspaceSize
QueryEigenWorkspace(cusolverDnHandle_t handle, cusolverDnParams_t params, std::int64_t n, std::int64_t count,
                    cusolverEigMode_t mode = CUSOLVER_EIG_MODE_VECTOR);

/** In place on the handle's stream.
 * matrices:    (count, n, n) column-major, symmetric (the lower triangle is read); on return the
 *              eigenvectors, column j belonging to eigenvalue j (CUSOLVER_EIG_MODE_VECTOR), or overwritten
 *              (CUSOLVER_EIG_MODE_NOVECTOR: the eigenvalues alone, for a σ pass).
 * eigenvalues: (count, n), ascending per matrix.
 * info:        (count) on the device; info[i] > 0 when matrix i did not converge.
 * The workspaces must have at least the sizes that QueryEigenWorkspace returned for the same n, count and mode. */
SVDLR_CUDA_EXPORT void
SolveSymmetricEigenBatched(cusolverDnHandle_t handle, cusolverDnParams_t params, double * matrices,
                           double * eigenvalues, int * info, std::int64_t n, std::int64_t count, void * deviceWorkspace,
                           std::size_t deviceWorkspaceBytes, void * hostWorkspace, std::size_t hostWorkspaceBytes,
                           cusolverEigMode_t mode = CUSOLVER_EIG_MODE_VECTOR);

} // namespace detail
} // namespace svdlr

#endif
