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
#ifndef svdlr_CudaBatchPlan_h
#define svdlr_CudaBatchPlan_h

// How many matrices go into one batch of the CUDA pipeline, and where each per-batch buffer lives. Kept
// apart from the pipeline so that the memory arithmetic can be read (and checked) on its own.

#include "svdlrCudaExport.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

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

/** Per-matrix int arrays of a slot's status buffer (svdlrCudaStreamSlot.h). */
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

} // namespace detail
} // namespace svdlr

#endif
