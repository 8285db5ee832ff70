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
// Pinned host memory and the device count for callers outside the engine (svdlr/Engine.h): the batch
// pipeline of apps/batch stages whole volumes in pinned memory so that the pipeline's copies skip the
// staging ring (svdlrStagingRing.h) and run at full PCIe speed.
#include "shared/svdlrBackends.h"

#include <cuda_runtime_api.h>

namespace svdlr
{
namespace detail
{

int
CudaVisibleDevices() noexcept
{
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess)
  {
    (void)cudaGetLastError(); // no driver or no device: not an error the next CUDA call should see
    return 0;
  }
  return count;
}

void *
AllocatePinnedHost(std::size_t bytes) noexcept
{
  void * memory = nullptr;
  // Portable: the batch pipeline deals volumes out to every device, and any of them may copy from it.
  if (cudaHostAlloc(&memory, bytes, cudaHostAllocPortable) != cudaSuccess)
  {
    (void)cudaGetLastError();
    return nullptr;
  }
  return memory;
}

void
FreePinnedHost(void * memory) noexcept
{
  if (cudaFreeHost(memory) != cudaSuccess)
  {
    (void)cudaGetLastError();
  }
}

} // namespace detail
} // namespace svdlr
