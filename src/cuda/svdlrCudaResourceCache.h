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
// its caching allocator and handles, and svdlr::ReleaseCudaResources() frees them on request (and at exit,
// through ReleaseCachedCudaResources in svdlrBackends.h).
//
// Only a run that succeeded gives its resources back: after an error the streams may hold a sticky CUDA
// error or unfinished work, and everything is freed instead.

#include "svdlrCudaStreamSlot.h"
#include "svdlrStagingRing.h"

#include <cstddef>
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
};

/** The resources cached for (deviceId, T), taken out of the cache, or a fresh empty set. Thread-safe: two
 * concurrent runs never share a set. */
template <typename T>
std::unique_ptr<CudaPipelineResources<T>>
TakeCachedResources(int deviceId);

/** Puts the resources of a successful run back, replacing (and freeing) what the cache held for the same
 * device and element type. The caller has synchronised every stream of the set. */
template <typename T>
void
CacheResources(std::unique_ptr<CudaPipelineResources<T>> resources);

} // namespace detail
} // namespace svdlr

#endif
