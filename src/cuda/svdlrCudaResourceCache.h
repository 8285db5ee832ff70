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
#ifndef svdlr_CudaResourceCache_h
#define svdlr_CudaResourceCache_h

// What one run of the CUDA pipeline sets up and the next run can use again: the stream slots (streams,
// events, cuBLAS and cuSOLVER handles, device buffers, small pinned buffers) and the pinned staging ring.
// Creating them costs several milliseconds per run on the H100 (handles 0.4 ms, device buffers 1.5-2.5 ms,
// pinned staging 2.2 ms, freeing it all 2.7-3.8 ms; docs/performance.md), as much as the whole solve of a
// small volume. So the engine keeps one set per device and element type between calls, as PyTorch keeps
// its caching allocator and handles, in a DeviceResourceCache (svdlrDeviceResourceCache.h: only a run that
// succeeded gives its set back; svdlr::ReleaseCudaResources() and process exit free them).

#include "svdlrCudaBatchPlan.h"
#include "svdlrCudaStreamSlot.h"
#include "svdlrDeviceResourceCache.h"
#include "svdlrEigenSolver.h"
#include "svdlrStagingRing.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace svdlr
{
namespace detail
{

template <typename T>
struct CudaPipelineResources
{
  int                                             deviceId{ -1 };
  std::vector<std::unique_ptr<CudaStreamSlot<T>>> slots;
  std::unique_ptr<StagingRing>                    ring; // host input only
  std::size_t                                     ringLanes{ 0 };
  std::size_t                                     ringChunkBytes{ 0 };

  /** An empty set for `device`: the pipeline adds the slots and the ring it needs. */
  explicit CudaPipelineResources(int device)
    : deviceId(device)
  {}

  /** Device memory the slots hold, which a new run may count as available. */
  std::size_t
  DeviceBytes() const
  {
    std::size_t bytes = 0;
    for (const auto & slot : slots)
    {
      bytes += slot->DeviceBytes();
    }
    return bytes;
  }

  /** Adds a slot, with its stream and handles. */
  void
  AddSlot();

  /** cuSOLVER's workspace for a batch of `batch` matrices of side `eigenSide`, as slot 0's handles answer it. */
  EigenWorkspaceSize
  EigenWorkspace(std::int64_t eigenSide, std::size_t batch) const;

  /** Gives the first plan.slots slots the buffers of the planned batch, keeping those already large enough; when the
   * device runs out, halves the batch (in `plan`) and tries again, down to one matrix, then throws OutOfMemory.
   * freeBytes: what the plan took as free on `deviceId`, for the message. */
  void
  AllocateSlots(const BatchGeometry & geometry, std::size_t matrices, std::size_t freeBytes, int deviceId,
                BatchPlan & plan);
};

/** The cache of the pipeline's resources for element type T. */
template <typename T>
using CudaPipelineResourceCache = DeviceResourceCache<CudaPipelineResources<T>>;

} // namespace detail
} // namespace svdlr

#endif
