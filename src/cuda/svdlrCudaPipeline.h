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
#ifndef svdlr_CudaPipeline_h
#define svdlr_CudaPipeline_h

// The CUDA pipeline's plain host logic, kept apart so that it can be read and tested without a GPU (no CUDA header
// here): how many matrices go into one batch and where each per-batch buffer lives, which solver runs and with what
// block, and what the host does with a batch's results. Then the pipeline with its instrumentation exposed, for
// benchmarks and tests; the engine calls RunCuda (svdlrBackends.h), which is this with no trace and default tuning.

#include "svdlrCudaExport.h"
#include "svdlr/Engine.h"
#include "svdlr/Names.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace svdlr
{
namespace detail
{

/** The shape of every matrix in a run. n = min(rows, cols) is the Gram side. */
struct BatchGeometry
{
  std::int64_t rows{ 0 };
  std::int64_t cols{ 0 };
  std::size_t  elementBytes{ 0 };         // sizeof(T) of the caller's data
  bool         convertsToDouble{ false }; // float input needs its own float64 copy; double input is reused
  std::int64_t subspaceWidth{ 0 };          // w of the subspace solver; 0: the exact solver

  std::int64_t
  Small() const
  {
    return rows < cols ? rows : cols;
  }
  /** The size of the matrices that reach the eigen-solver: n (exact) or w (subspace). */
  std::int64_t
  EigenSide() const
  {
    return subspaceWidth > 0 ? subspaceWidth : Small();
  }
  std::size_t
  Elements() const
  {
    return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  }
};

/** Per-matrix int arrays of a slot's status buffer (svdlrCudaResourceCache.h). */
constexpr std::size_t kStatusArrays = 4;

/** Byte sizes of one stream slot's device buffers for `batch` matrices.
 *  io:          (batch, rows, cols) T, the input, overwritten by the output;
 *  a:           (batch, rows, cols) float64 (none for double input, which is converted in place in io);
 *  gram:        (batch, n, n) float64, the Gram matrices, then their eigenvectors;
 *  eigenvalues: (batch, e) float64, e = EigenSide();
 *  subspace:    the subspace solver's workspace (SubspaceWorkspace), none for the exact solver;
 *  status:      (kStatusArrays, batch) int: solver info, non-finite flags, the subspace check's redo flags, ranks;
 *  scratch:     the eigen-solver's workspace (for e x e matrices), reused after the solve for the factors P (batch, rows, n) and
 *               Q (batch, cols, n) float64 at the largest possible rank n. */
struct SlotLayout
{
  std::size_t io{ 0 };
  std::size_t a{ 0 };
  std::size_t gram{ 0 };
  std::size_t eigenvalues{ 0 };
  std::size_t subspace{ 0 };
  std::size_t status{ 0 };
  std::size_t scratch{ 0 };
  std::size_t factorQOffset{ 0 }; // where Q starts inside scratch (256-byte aligned)

  std::size_t
  Total() const
  {
    return io + a + gram + eigenvalues + subspace + status + scratch;
  }
};

SVDLR_CUDA_EXPORT SlotLayout
ComputeSlotLayout(const BatchGeometry & geometry, std::size_t batch, std::size_t eigenWorkspaceBytes);

struct BatchPlan
{
  std::size_t batchSize{ 0 }; // matrices per batch (the last one may hold fewer)
  std::size_t batches{ 0 };
  std::size_t slots{ 0 }; // stream slots: 1 for a single batch, otherwise 2
};

/** The largest batch that fits `availableBytes` of device memory (at least 1, even when that does not fit:
 * allocation then decides), capped by `maxPerBatch`, or when that is 0 split into up to 4 batches of at
 * least 128 matrices so that copies overlap the solves, and capped by 65535 (blockIdx.z is the matrix
 * index); batches are evened out so that the last one is not a sliver. `eigenWorkspaceBytes(batch)` asks
 * cuSOLVER for its workspace. */
SVDLR_CUDA_EXPORT BatchPlan
PlanBatches(const BatchGeometry & geometry, std::size_t count, std::size_t maxPerBatch, std::size_t availableBytes,
            const std::function<std::size_t(std::size_t)> & eigenWorkspaceBytes);

/** The plan for `count` matrices in batches of at most `batchSize` (after an allocation failure). */
SVDLR_CUDA_EXPORT BatchPlan
PlanWithBatchSize(std::size_t count, std::size_t batchSize);

/** "rows x cols", for messages about a matrix shape. */
std::string
MatrixShapeText(std::size_t rows, std::size_t cols);

// Between the GPU's eigen-solve and its reconstruction the host rejects bad input, turns eigenvalues into singular
// values, and picks each matrix's rank.

/** For the batch of `count` matrices that starts at matrix `first` of the run:
 * nonFiniteFlags: (count), non-zero for a matrix that held NaN or Inf;
 * solverInfo:     (count), cuSOLVER's info per matrix (> 0: no convergence, < 0: bad parameter);
 * eigenvalues:    (count, n), each matrix's Gram eigenvalues in ascending order;
 * rows, cols:     the matrices' shape (n = min(rows, cols) except with the subspace solver, which fixes the rank).
 * Throws Error(NonFiniteInput) naming the first flagged matrix; otherwise Error(NumericalFailure) naming the
 * first matrix the solver failed on, or Error(DeviceFailure) for a rejected parameter. Then fills
 * report.singularValues[first + i] with sqrt(max(eigenvalue, 0)) in descending order (rounding can make a
 * zero eigenvalue slightly negative), report.ranks[first + i] and report.noiseSigmas[first + i] with SelectRank's choice, and ranks (count)
 * with the same ranks for the device. Returns the largest rank in the batch. */
SVDLR_CUDA_EXPORT std::size_t
CollectBatchResults(const int * nonFiniteFlags, const int * solverInfo, const double * eigenvalues, std::size_t first,
                    std::size_t count, std::size_t n, std::size_t rows, std::size_t cols, const RankPolicy & policy,
                    Report & report, int * ranks);

// The subspace solver works on a block of w = k + p vectors (p: oversampling). Its cost is a few products
// of the n x n Gram matrix with the block (bound by reading the Gram matrix, so nearly independent of w
// up to w ~ 100 on the H100) plus work on w x w matrices. Its block is capped at kMaxSubspaceWidth, where
// the w x w float64 matrix of the Cholesky kernel still fits one block's shared memory (227 KB on sm_90).

constexpr std::int64_t kMaxSubspaceWidth = static_cast<std::int64_t>(::svdlr::kMaxSubspaceWidth); // svdlr/Names.h

// The subspace solver's w x w kernels run one block per matrix, so a run of a few small matrices leaves
// the GPU idle while their ~13 sequential steps go by: measured on the H100 for one 256 x 256 slice at
// rank 100 (W4), the exact solver takes 2.7 ms and the subspace solver 4.6-8.6 ms. From 16 matrices on, or
// for sides from 512 on (where the exact n x n eigen-solve grows as n^3), the subspace solver wins.
constexpr std::size_t  kMinSubspaceBatch = 16;
constexpr std::int64_t kMinSubspaceSide = 512;

/** The subspace solver's block and iteration count; width 0 means the exact solver. */
struct SubspacePlan
{
  std::int64_t width{ 0 };      // w: vectors in the block, k < w <= min(n, kMaxSubspaceWidth)
  int          iterations{ 0 }; // products with the Gram matrix before the Rayleigh-Ritz step

  bool
  Used() const
  {
    return width > 0;
  }
};

/** The plan for `options` on rows x cols matrices of float64 (`float64Input`) or float32 data, with
 * k = min(rank, n) and the default block w = min(n, max(2k, k + 16), kMaxSubspaceWidth):
 *  - Solver::Exact: the exact plan;
 *  - Solver::Auto: the subspace plan for float32 data and a fixed rank when k < w < n and the run has
 *    at least kMinSubspaceBatch matrices or n >= kMinSubspaceSide; otherwise exact (float64 data keeps
 *    the exact solver, whose accuracy its caller asked for);
 *  - Solver::Subspace: the subspace plan; Error(InvalidArgument) when the policy is not a fixed rank or
 *    k >= kMaxSubspaceWidth (no room left for oversampling). */
SVDLR_CUDA_EXPORT SubspacePlan
PlanSubspace(const Options & options, std::int64_t rows, std::int64_t cols, std::size_t count, bool float64Input);

// Optional instrumentation for tests, which the engine never fills or reads: the plan and the subspace check's data
// of one run, and overrides.

/** What one run did. */
struct CudaPipelineTrace
{
  std::size_t batches{ 0 };
  std::size_t batchSize{ 0 };
  // The subspace solver's check, per matrix in run order: checkWidth Ritz residual norms (largest Ritz value
  // first) and tr(G), as CheckSubspaceOptimality reads them (svdlrSubspaceCheck.h).
  std::vector<double> subspaceCheck;
  std::vector<double> ritzValues; // per matrix in run order: the checkWidth Ritz values, ascending
  std::size_t         checkWidth{ 0 };
};

/** Overrides for tests. */
struct CudaPipelineTuning
{
  bool forceRedo{ false }; // every matrix fails the subspace check and is redone exactly
};

/** RunCuda, filling `*trace` (when not null) with what the run did, under `tuning`. */
template <typename T>
SVDLR_CUDA_EXPORT void
RunCudaInstrumented(const MatrixBatch<const T> & input, const MatrixBatch<T> & output, const Options & options,
                    Report & report, CudaPipelineTrace * trace, const CudaPipelineTuning & tuning);

} // namespace detail
} // namespace svdlr

#endif
