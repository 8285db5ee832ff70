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
#ifndef svdlr_LocalDenoisePlan_h
#define svdlr_LocalDenoisePlan_h

// How the local denoiser's CUDA backend cuts a series into slabs of z planes and a slab's patches into batches,
// within the device memory it may use (docs/denoising-cuda.md). Host arithmetic only, kept apart so that it can be
// read and tested on its own.
//
// Slab s computes the patches centred on planes [centreFirst, centreLast) and holds the planes those patches read,
// [windowFirst, windowLast) = [PatchStart(centreFirst), PatchStart(centreLast - 1) + ez). Its sums cover the same
// window. Once its patches are done, the planes below the next slab's window start are final and go out:
// [outFirst, outLast) = [previous outLast, next slab's windowFirst) (the last slab: up to nz). The planes of the
// window at and above the next window's start carry over to the next slab's sums. No plane is written out while a
// later slab may still read it, so the output may be the input itself.

#include "svdlrCudaExport.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace svdlr
{
namespace detail
{

/** Every device buffer the plan counts starts on this boundary (cudaMalloc's own alignment), so that any element
 * type can follow any; the buffers are carved with the same rule (svdlrLocalDenoiseResources.h). */
constexpr std::size_t kDeviceBufferAlignment = 256;

inline std::size_t
AlignedBytes(std::size_t bytes)
{
  return (bytes + kDeviceBufferAlignment - 1) / kDeviceBufferAlignment * kDeviceBufferAlignment;
}

struct LocalDenoiseShape
{
  std::int64_t nx{ 0 }, ny{ 0 }, nz{ 0 };
  std::int64_t volumes{ 0 };
  std::int64_t ex{ 0 }, ey{ 0 }, ez{ 0 };
  std::int64_t patchVoxels{ 0 };  // rows per patch: a sphere's voxels; 0: the whole box (a cuboid)
  bool         overlap{ false };  // an overlap aggregation
  std::int64_t maxVectors{ 0 };   // eigenvectors kept per patch at most (the rank's upper bound)
  bool         maps{ false };     // σ or rank map asked for
};

struct SlabExtent
{
  std::int64_t centreFirst{ 0 }, centreLast{ 0 };
  std::int64_t windowFirst{ 0 }, windowLast{ 0 };
  std::int64_t outFirst{ 0 }, outLast{ 0 };
};

struct LocalDenoisePlan
{
  std::int64_t            centrePlanes{ 0 }; // centre planes per slab (the last slab may have fewer)
  std::int64_t            batch{ 0 };        // patches per batch
  std::vector<SlabExtent> slabs;
  std::size_t             slabBytes{ 0 };  // device bytes of the slab buffers (both slots)
  std::size_t             batchBytes{ 0 }; // device bytes of one batch's buffers
};

/** Device bytes of one slab slot's buffers for a window of `planes` planes (packed input, compute-layout input,
 * sums, packed output, maps, centres). */
SVDLR_CUDA_EXPORT std::size_t
SlabSlotBytes(const LocalDenoiseShape & shape, std::int64_t planes);

/** Device bytes of a batch of `batch` patches, with `solverBytes(batch)` for the eigen-solver's workspace. */
SVDLR_CUDA_EXPORT std::size_t
BatchBytes(const LocalDenoiseShape & shape, std::int64_t batch, const std::function<std::size_t(std::int64_t)> & solverBytes);

/** The slabs for `centrePlanes` centre planes each. */
SVDLR_CUDA_EXPORT std::vector<SlabExtent>
CutSlabs(const LocalDenoiseShape & shape, std::int64_t centrePlanes);

/** The largest slabs and batches that fit `availableBytes` (two slab slots and one batch), aiming at about four
 * slabs so that copies overlap the solves and at batches of up to 2^16 patches; maxPatchesPerBatch (> 0) caps the
 * batch. Falls to one centre plane and one patch before giving up: then the plan's batch is 0 (out of memory).
 * Once the slabs are settled, the batch is the largest (up to its cap) that fits beside them. */
SVDLR_CUDA_EXPORT LocalDenoisePlan
PlanLocalDenoise(const LocalDenoiseShape & shape, std::size_t availableBytes, std::size_t maxPatchesPerBatch,
                 const std::function<std::size_t(std::int64_t)> & solverBytes);

/** The bytes the slabs and batches may take: `usableBytes` (what the device has free, less its reserve), capped by
 * `limitBytes` (LocalDenoiseOptions::deviceMemoryLimit) when it is > 0, less `fixedBytes` (the run's mask, σ map
 * and flags, which the limit covers too); 0 when nothing is left. */
SVDLR_CUDA_EXPORT std::size_t
PlanBudgetBytes(std::size_t usableBytes, std::size_t limitBytes, std::size_t fixedBytes);

/** The least device memory PlanLocalDenoise can work in: two slab slots of one centre plane and a batch of one
 * patch. A limit below this plus the fixed buffers cannot run at all. */
SVDLR_CUDA_EXPORT std::size_t
SmallestPlanBytes(const LocalDenoiseShape & shape, const std::function<std::size_t(std::int64_t)> & solverBytes);

} // namespace detail
} // namespace svdlr

#endif
