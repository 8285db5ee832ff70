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
#include "svdlrCudaPipeline.h"

#include "svdlrSubspaceIteration.h"

#include <algorithm>

namespace svdlr
{
namespace detail
{
namespace
{

constexpr std::size_t kMaxBatch = 65535;
constexpr std::size_t kSlotsWhenPipelined = 2;
constexpr std::size_t kAlignment = 256;

// Default split of a run that fits in one batch, so that copies overlap the solve of the other batch: the
// first batch's copy-in and the last one's copy-out stay exposed, the rest hides behind the solver.
// Measured on the H100 (W1, 256 matrices of 256^2): two batches of 128 solve as fast as one of 256, four of
// 64 cost about 9 ms more. So: batches of at least 128 matrices, at most 4 of them, and only when the data
// is large enough (16 MiB) for its copies to matter.
constexpr std::size_t kMinPipelinedBatch = 128;
constexpr std::size_t kMaxPipelinedBatches = 4;
constexpr std::size_t kMinPipelinedBytes = std::size_t{ 16 } << 20;

std::size_t
AlignUp(std::size_t bytes)
{
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

/** The largest batch <= `batch` whose `slots` slots fit `availableBytes`; 1 if none does. Memory is about
 * linear in the batch, so scaling by available / needed converges in a few steps. */
std::size_t
FitBatch(const BatchGeometry & geometry, std::size_t batch, std::size_t slots, std::size_t availableBytes,
         const std::function<std::size_t(std::size_t)> & eigenWorkspaceBytes)
{
  for (int attempt = 0; attempt < 64 && batch > 1; ++attempt)
  {
    const std::size_t needed = slots * ComputeSlotLayout(geometry, batch, eigenWorkspaceBytes(batch)).Total();
    if (needed <= availableBytes)
    {
      break;
    }
    const double scaled =
      static_cast<double>(batch) * static_cast<double>(availableBytes) / static_cast<double>(needed);
    batch = std::clamp<std::size_t>(static_cast<std::size_t>(scaled), 1, batch - 1);
  }
  return std::max<std::size_t>(batch, 1);
}

} // namespace

SlotLayout
ComputeSlotLayout(const BatchGeometry & geometry, std::size_t batch, std::size_t eigenWorkspaceBytes)
{
  const std::size_t n = static_cast<std::size_t>(geometry.Small());
  const std::size_t rows = static_cast<std::size_t>(geometry.rows);
  const std::size_t cols = static_cast<std::size_t>(geometry.cols);
  SlotLayout        layout;
  layout.io = AlignUp(batch * geometry.Elements() * geometry.elementBytes);
  layout.a = geometry.convertsToDouble ? AlignUp(batch * geometry.Elements() * sizeof(double)) : 0;
  layout.gram = AlignUp(batch * n * n * sizeof(double));
  layout.eigenvalues = AlignUp(batch * static_cast<std::size_t>(geometry.EigenSide()) * sizeof(double));
  layout.subspace = geometry.subspaceWidth > 0
                      ? AlignUp(SubspaceWorkspace::Doubles(geometry.Small(), geometry.subspaceWidth, batch) * sizeof(double))
                      : 0;
  layout.status = AlignUp(kStatusArrays * batch * sizeof(int));
  layout.factorQOffset = AlignUp(batch * rows * n * sizeof(double));
  const std::size_t factors = layout.factorQOffset + AlignUp(batch * cols * n * sizeof(double));
  layout.scratch = std::max(AlignUp(eigenWorkspaceBytes), factors);
  return layout;
}

BatchPlan
PlanWithBatchSize(std::size_t count, std::size_t batchSize)
{
  BatchPlan plan;
  batchSize = std::clamp<std::size_t>(batchSize, 1, std::max<std::size_t>(count, 1));
  plan.batches = (count + batchSize - 1) / batchSize;
  plan.batchSize = (count + plan.batches - 1) / plan.batches; // even out the batches
  plan.slots = plan.batches > 1 ? kSlotsWhenPipelined : 1;
  return plan;
}

BatchPlan
PlanBatches(const BatchGeometry & geometry, std::size_t count, std::size_t maxPerBatch, std::size_t availableBytes,
            const std::function<std::size_t(std::size_t)> & eigenWorkspaceBytes)
{
  std::size_t cap = std::min(count, kMaxBatch);
  if (maxPerBatch > 0)
  {
    cap = std::min(cap, maxPerBatch);
  }
  else if (count * geometry.Elements() * geometry.elementBytes >= kMinPipelinedBytes)
  {
    const std::size_t batches = std::min(kMaxPipelinedBatches, count / kMinPipelinedBatch);
    if (batches >= 2)
    {
      cap = std::min(cap, (count + batches - 1) / batches);
    }
  }
  // One slot suffices when everything fits in one batch; otherwise two slots share the memory.
  if (cap >= count && FitBatch(geometry, cap, 1, availableBytes, eigenWorkspaceBytes) >= count)
  {
    return PlanWithBatchSize(count, count);
  }
  return PlanWithBatchSize(count, FitBatch(geometry, cap, kSlotsWhenPipelined, availableBytes, eigenWorkspaceBytes));
}

std::string
MatrixShapeText(std::size_t rows, std::size_t cols)
{
  return std::to_string(rows) + " x " + std::to_string(cols);
}

} // namespace detail
} // namespace svdlr
