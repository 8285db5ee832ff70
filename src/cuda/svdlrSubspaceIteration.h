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

#include "svdlrCudaExport.h"
#include "svdlrDeviceBuffer.h"
#include "svdlr/Engine.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include <cstddef>
#include <cstdint>
#include <vector>

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
  // The a-posteriori check (CheckSubspaceBatched): residuals (count, n, w) | W Theta (count, w, w) |
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

// The subspace solver's a-posteriori check on the GPU (the criterion: svdlrSubspaceCheck.h). After the
// eigen-solve of the Rayleigh-Ritz matrices, per matrix:
//   residuals  Rho = Z W - Q (W Theta)    (n x w): Z = G Q (left by IterateSubspace), W the eigenvectors of H,
//                                         so column i is G v_i - theta_i v_i for the Ritz pair (theta_i, v_i);
//   one block: tr(G), the w residual norms, the criterion -> a redo flag (1: redo with the exact solver).
// Cost: two (n x w) x (w x w) products and two small kernels, next to the iteration's 2 x 13 products with the
// n x n Gram matrix.

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

// The fallback of the subspace solver: the matrices of a batch that failed the a-posteriori check
// (svdlrSubspaceCheck.h) are gathered into sub-batches and redone with the exact solver (XsyevBatched on the
// full n x n Gram matrices, which the subspace solver left intact), on the batch's own stream and handles,
// and their reconstructions, singular values and ranks replace the subspace solver's. A rare path: it
// allocates its buffers when it runs, in chunks that fit, and waits for its stream.
//
// Two steps around the batch's own reconstruction: Solve before it (double input is converted in place, so
// the batch's float64 copy is gone once the reconstruction has overwritten it), Scatter after it (so that
// the exact reconstructions overwrite the subspace solver's).

template <typename T>
struct ExactRedoArguments
{
  cublasHandle_t     cublas{ nullptr }; // all three bound to `stream`
  cusolverDnHandle_t cusolver{ nullptr };
  cusolverDnParams_t cusolverParams{ nullptr };
  cudaStream_t       stream{ nullptr };
  const double *     gram{ nullptr }; // (batch, n, n) the batch's Gram matrices
  const double *     a{ nullptr };    // (batch, rows, cols) the batch in float64
  T *                output{ nullptr }; // (batch, rows, cols) the batch's reconstructions, overwritten where redone
  std::int64_t       rows{ 0 };
  std::int64_t       cols{ 0 };
  std::size_t        first{ 0 }; // the batch's first matrix in the run, for the report
};

/** The exact solver's redo of some matrices of one batch. */
template <typename T>
class ExactRedo
{
public:
  explicit ExactRedo(const ExactRedoArguments<T> & arguments)
    : m_Arguments(arguments)
  {}

  /** Reconstructs `matrices` (indices within the batch, ascending) into buffers of its own, after the work
   * already queued on the stream; fills report.singularValues (all n values), ranks and noiseSigmas of each,
   * and appends them (indices in the run) to report.redoneMatrices. Throws svdlr::Error as the exact path
   * does. */
  void
  Solve(const std::vector<std::size_t> & matrices, const RankPolicy & policy, Report & report);

  /** Copies the reconstructions over the batch's output, on the stream, and waits for them. */
  void
  Scatter();

private:
  ExactRedoArguments<T>    m_Arguments;
  std::vector<std::size_t> m_Matrices;
  DeviceBuffer<T>          m_Output; // (matrices, rows, cols)
};

} // namespace detail
} // namespace svdlr

#endif
