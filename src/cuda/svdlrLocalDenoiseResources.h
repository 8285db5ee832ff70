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
#ifndef svdlr_LocalDenoiseResources_h
#define svdlr_LocalDenoiseResources_h

// What the local denoiser keeps between runs on one device: creating streams, handles and pinned staging and
// allocating device memory costs milliseconds (docs/performance.md), so, like the slice pipeline's
// (svdlrCudaResourceCache.h), one set per device lives in a DeviceResourceCache (svdlrDeviceResourceCache.h) between
// runs; only a run that succeeded gives its set back.

#include "svdlrCudaHandles.h"
#include "svdlrDeviceBuffer.h"
#include "svdlrDeviceResourceCache.h"
#include "svdlrStagingRing.h"

#include <cstddef>
#include <memory>
#include <vector>

namespace svdlr
{
namespace detail
{

struct LocalDenoiseResources
{
  int                              deviceId{ -1 };
  StreamOwner                      compute;
  StreamOwner                      upload;
  StreamOwner                      download;
  EventOwner                       uploaded[2];
  EventOwner                       computed[2];
  std::unique_ptr<StagingRing>     ring;
  std::size_t                      ringLanes{ 0 };
  std::size_t                      ringChunkBytes{ 0 };
  DeviceBuffer<unsigned char>      slots[2];
  DeviceBuffer<unsigned char>      batch;
  DeviceBuffer<unsigned char>      fixed;     // flags, mask, σ map (FixedBuffers)
  PinnedBuffer<unsigned long long> hostFlags; // (2 slots, 2): first non-finite voxel, solver failures
  std::vector<unsigned char>       cusolverHostWorkspace;

  /** The streams, events and pinned flags of a fresh set, on `device` (current); the buffers and the staging ring
   * come with the first run's plan, the library handles with their first use. */
  explicit LocalDenoiseResources(int device);

  /** cuSOLVER's handle and parameters (XsyevBatched: the reference solver, and n past our own), on the compute
   * stream, and cuBLAS's (the Gram stage's DGEMM from kGemmGramFromSide), each created at its first use: the 65-volume
   * series needs neither, and creating them in a fresh process delays its first result. */
  cusolverDnHandle_t
  Cusolver();
  cusolverDnParams_t
  CusolverParams();
  cublasHandle_t
  Cublas();

  /** Device memory the buffers hold, which a new run may count as available. */
  std::size_t
  DeviceBytes() const;

  /** Waits for everything this set may still be doing (after an error), ignoring failures. */
  void
  Quiesce() noexcept;

private:
  CusolverOwner       m_Cusolver;
  CusolverParamsOwner m_CusolverParams;
  CublasOwner         m_Cublas;
};

using LocalDenoiseResourceCache = DeviceResourceCache<LocalDenoiseResources>;

} // namespace detail
} // namespace svdlr

#endif
