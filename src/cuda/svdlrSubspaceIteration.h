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
#ifndef svdlr_SubspaceIteration_h
#define svdlr_SubspaceIteration_h

// The subspace solver of the CUDA backend: block subspace iteration on the float64 Gram matrices G
// (n x n, from ComputeGramBatched), then a Rayleigh-Ritz step, so that only w x w matrices reach the
// eigen-solver instead of n x n ones (W1: 64 x 64 instead of 256 x 256).
//
//   Q <- orth(G Omega)                    Omega: a fixed pseudo-random n x w start block
//   repeat: Q <- orth(G Q)                (iterations - 1 times)
//   H  = Q^T G Q                          w x w, for SolveSymmetricEigenBatched
//   then, after the eigen-solve: Ritz vectors Q W_k, the leading k eigenvectors of H mapped back.
//
// orth() is CholeskyQR on a column-equilibrated cross-product matrix, by our own kernel (one block per
// matrix, in shared memory); a column that is numerically in the span of the previous ones is dropped
// (set to zero) rather than dividing by a vanishing pivot, so rank-deficient and all-zero slices of real
// MRI pass through without NaN (plain CholeskyQR breaks down on them, PERFORMANCE.md). The last
// orthonormalisation runs twice (CholeskyQR2), so that the Rayleigh-Ritz basis is orthonormal to
// float64 rounding. Everything is float64 and runs on cuBLAS's DGEMM (the H100's FP64 tensor cores) and
// the handle's stream.

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "svdlrCudaExport.h"

namespace svdlr
{
namespace detail
{

/** The solver's device buffers for a batch of `count` matrices, column-major per matrix. */
struct SubspaceWorkspace
{
  double * basis{ nullptr };   // (count, n, w)
  double * image{ nullptr };   // (count, n, w)
  double * small{ nullptr };   // (count, w, w): cross products, then H, then its eigenvectors
  double * inverse{ nullptr }; // (count, w, w): inverse Cholesky factors, then Ritz coefficients
  // The a-posteriori check (svdlrSubspaceCheck.cuh): residuals (count, n, w) | W Theta (count, w, w) |
  // per matrix the w residual norms and tr(G) (count, w + 1).
  double * check{ nullptr };

  /** Doubles that a batch of `count` needs, for SubspaceWorkspace::Within. */
  static std::size_t
  Doubles(std::int64_t n, std::int64_t w, std::size_t count)
  {
    return count * static_cast<std::size_t>(2 * n * w + 2 * w * w) + CheckDoubles(n, w, count);
  }

  static std::size_t
  CheckDoubles(std::int64_t n, std::int64_t w, std::size_t count)
  {
    return count * static_cast<std::size_t>(n * w + w * w + w + 1);
  }

  /** The buffers laid out one after the other in `memory` (at least Doubles(n, w, count)). */
  static SubspaceWorkspace
  Within(double * memory, std::int64_t n, std::int64_t w, std::size_t count)
  {
    const std::size_t blocks = count * static_cast<std::size_t>(n * w);
    const std::size_t squares = count * static_cast<std::size_t>(w * w);
    return { memory, memory + blocks, memory + 2 * blocks, memory + 2 * blocks + squares,
             memory + 2 * blocks + 2 * squares };
  }

  double *
  CheckScaled(std::int64_t n, std::int64_t w, std::size_t count) const
  {
    return check + count * static_cast<std::size_t>(n * w);
  }

  /** Per matrix (w + 1 doubles): the w Ritz residual norms, largest Ritz value first, then tr(G). */
  double *
  CheckData(std::int64_t n, std::int64_t w, std::size_t count) const
  {
    return check + count * static_cast<std::size_t>(n * w + w * w);
  }
};

/** out = orth(in), both (count, n, w) column-major: out's columns are orthonormal and span in's columns,
 * except that a column numerically in the span of the previous ones comes out as zero. workspace.small and
 * workspace.inverse are overwritten. */
SVDLR_CUDA_EXPORT void
Orthonormalize(cublasHandle_t handle, cudaStream_t stream, const double * in, double * out,
               const SubspaceWorkspace & workspace, std::int64_t n, std::int64_t w, std::int64_t count);

/** Runs the iteration on `gram` (count, n, n) and leaves H = Q^T G Q (count, w, w) in workspace.small.
 * Returns Q (count, n, w), orthonormal columns (zero columns where the block lost rank): one of
 * workspace.basis and workspace.image. */
const double *
IterateSubspace(cublasHandle_t handle, cudaStream_t stream, const double * gram, const SubspaceWorkspace & workspace,
                std::int64_t n, std::int64_t w, int iterations, std::int64_t count);

/** After the eigen-solve of H in workspace.small (eigenvectors, ascending eigenvalues): the leading kmax
 * Ritz vectors Q W_k into `ritz` (count, n, kmax), component 0 belonging to the largest eigenvalue. */
void
ComputeRitzVectors(cublasHandle_t handle, cudaStream_t stream, const double * basis,
                   const SubspaceWorkspace & workspace, double * ritz, std::int64_t n, std::int64_t w,
                   std::int64_t kmax, std::int64_t count);

} // namespace detail
} // namespace svdlr

#endif
