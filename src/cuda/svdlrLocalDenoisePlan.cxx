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
#include "svdlrLocalDenoisePlan.h"

#include "denoise/svdlrPatchGeometry.h"

#include <algorithm>

namespace svdlr
{
namespace detail
{
namespace
{

constexpr std::int64_t kTargetSlabs = 4;                     // enough for copies to hide behind solves
constexpr std::int64_t kMaxBatch = std::int64_t{ 1 } << 16;  // fills the H100 many times over
std::int64_t
WindowPlanes(const LocalDenoiseShape & shape, std::int64_t centrePlanes)
{
  return std::min(shape.nz, centrePlanes + shape.ez - 1);
}

} // namespace

std::size_t
SlabSlotBytes(const LocalDenoiseShape & shape, std::int64_t planes)
{
  const std::size_t voxels = static_cast<std::size_t>(planes * shape.nx * shape.ny);
  const std::size_t volumes = static_cast<std::size_t>(shape.volumes);
  std::size_t       bytes = 0;
  bytes += AlignedBytes(voxels * volumes * sizeof(float));          // packed input
  bytes += AlignedBytes(voxels * volumes * sizeof(float));          // compute-layout input
  bytes += AlignedBytes(voxels * volumes * sizeof(double));         // sums of the rows
  bytes += AlignedBytes(voxels * sizeof(double));                   // weights
  bytes += 2 * AlignedBytes(voxels * sizeof(double));               // sums of σ and rank
  bytes += AlignedBytes(voxels * volumes * sizeof(float));          // packed output
  bytes += AlignedBytes(voxels * (sizeof(float) + sizeof(std::uint16_t))); // maps
  bytes += AlignedBytes(voxels * sizeof(std::int64_t));             // centres
  return bytes;
}

std::size_t
BatchBytes(const LocalDenoiseShape & shape, std::int64_t batch, const std::function<std::size_t(std::int64_t)> & solverBytes)
{
  const std::size_t b = static_cast<std::size_t>(batch);
  const std::size_t m = static_cast<std::size_t>(shape.patchVoxels > 0 ? shape.patchVoxels : shape.ex * shape.ey * shape.ez);
  const std::size_t n = std::min(m, static_cast<std::size_t>(shape.volumes));
  const std::size_t k = static_cast<std::size_t>(std::max<std::int64_t>(shape.maxVectors, 1));
  std::size_t       bytes = 0;
  bytes += AlignedBytes(b * n * n * sizeof(double)); // Gram matrices, then reflectors (or cuSOLVER's eigenvectors)
  bytes += AlignedBytes(b * n * k * sizeof(double)); // eigenvectors
  bytes += AlignedBytes(b * n * sizeof(double));     // eigenvalues
  bytes += AlignedBytes(b * k * sizeof(double));     // weights
  bytes += AlignedBytes(b * sizeof(double));         // σ
  bytes += 2 * AlignedBytes(b * sizeof(int));        // ranks, solver info
  bytes += AlignedBytes(solverBytes(batch));
  return bytes;
}

std::vector<SlabExtent>
CutSlabs(const LocalDenoiseShape & shape, std::int64_t centrePlanes)
{
  std::vector<SlabExtent> slabs;
  const std::int64_t      step = std::max<std::int64_t>(1, centrePlanes);
  for (std::int64_t first = 0; first < shape.nz; first += step)
  {
    SlabExtent slab;
    slab.centreFirst = first;
    slab.centreLast = std::min(shape.nz, first + step);
    slab.windowFirst = PatchStart(slab.centreFirst, shape.ez, shape.nz);
    slab.windowLast = PatchStart(slab.centreLast - 1, shape.ez, shape.nz) + shape.ez;
    slab.outFirst = slabs.empty() ? 0 : slabs.back().outLast;
    slab.outLast = slab.centreLast < shape.nz ? PatchStart(slab.centreLast, shape.ez, shape.nz) : shape.nz;
    slabs.push_back(slab);
  }
  return slabs;
}

LocalDenoisePlan
PlanLocalDenoise(const LocalDenoiseShape & shape, std::size_t availableBytes, std::size_t maxPatchesPerBatch,
                 const std::function<std::size_t(std::int64_t)> & solverBytes)
{
  const std::int64_t planeVoxels = shape.nx * shape.ny;
  std::int64_t       centrePlanes = std::max<std::int64_t>(1, (shape.nz + kTargetSlabs - 1) / kTargetSlabs);
  const auto         batchFor = [&](std::int64_t planes) {
    std::int64_t batch = std::min(kMaxBatch, planes * planeVoxels);
    if (maxPatchesPerBatch > 0)
    {
      batch = std::min<std::int64_t>(batch, static_cast<std::int64_t>(maxPatchesPerBatch));
    }
    return std::max<std::int64_t>(1, batch);
  };
  std::int64_t batch = batchFor(centrePlanes);
  const auto   slabBytes = [&](std::int64_t planes) { return 2 * SlabSlotBytes(shape, WindowPlanes(shape, planes)); };
  const auto   total = [&] { return slabBytes(centrePlanes) + BatchBytes(shape, batch, solverBytes); };

  // Shrink until both fit: the slabs first, down to windows of about twice their centre planes (a thinner slab only
  // uploads more of its neighbours' planes), then the batches down to one patch, then the slabs down to one plane.
  // Batches come last because the stages that give a patch one thread (inverse iteration) leave the GPU idle on
  // a few thousand patches: on 176x176x120x200 in 8 GB, shrinking whichever part was larger gave slabs of 15 centre
  // planes and batches of 2,184 patches, whose eigenvectors took 1.01 s against 0.30 s in batches of 65,536.
  const std::int64_t fewestPlanes = std::max<std::int64_t>(1, shape.ez - 1);
  while (total() > availableBytes)
  {
    if (centrePlanes > fewestPlanes || (batch == 1 && centrePlanes > 1))
    {
      centrePlanes = std::max(batch == 1 ? 1 : fewestPlanes, (centrePlanes + 1) / 2);
      batch = std::min(batch, batchFor(centrePlanes));
    }
    else if (batch > 1)
    {
      batch = (batch + 1) / 2;
    }
    else
    {
      return {}; // one patch of one plane does not fit
    }
  }

  // Halving overshoots: the batch then takes what the slabs leave, up to its cap. Fewer, larger batches are faster
  // when memory is short, because the inverse iteration (one thread per matrix) costs a batch the latency of one
  // matrix's chain however few its matrices (docs/denoising-cuda.md).
  std::int64_t largest = batchFor(centrePlanes);
  while (batch < largest)
  {
    const std::int64_t middle = batch + (largest - batch + 1) / 2;
    if (slabBytes(centrePlanes) + BatchBytes(shape, middle, solverBytes) <= availableBytes)
    {
      batch = middle;
    }
    else
    {
      largest = middle - 1;
    }
  }

  LocalDenoisePlan plan;
  plan.centrePlanes = centrePlanes;
  plan.batch = batch;
  plan.slabs = CutSlabs(shape, centrePlanes);
  plan.slabBytes = slabBytes(centrePlanes);
  plan.batchBytes = BatchBytes(shape, batch, solverBytes);
  return plan;
}

std::size_t
PlanBudgetBytes(std::size_t usableBytes, std::size_t limitBytes, std::size_t fixedBytes)
{
  const std::size_t cap = limitBytes > 0 ? std::min(usableBytes, limitBytes) : usableBytes;
  return cap > fixedBytes ? cap - fixedBytes : 0;
}

std::size_t
SmallestPlanBytes(const LocalDenoiseShape & shape, const std::function<std::size_t(std::int64_t)> & solverBytes)
{
  return 2 * SlabSlotBytes(shape, WindowPlanes(shape, 1)) + BatchBytes(shape, 1, solverBytes);
}

} // namespace detail
} // namespace svdlr
