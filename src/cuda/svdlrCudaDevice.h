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
#ifndef svdlr_CudaDevice_h
#define svdlr_CudaDevice_h

// Device selection for the CUDA backend: a guard that makes `deviceId` current for the duration of a run
// and gives the caller back its own current device afterwards, even when the run throws; and how much of the
// device's memory a run may plan with.

#include "svdlrCudaExport.h"

#include <cstddef>

namespace svdlr
{
namespace detail
{

/** Of `freeBytes` (what cudaMemGetInfo reports, plus what the run's cached buffers hold and it may reuse), what a
 * run may plan with: all but 256 MiB and 1/20 of it, left for what allocates behind our back (cuBLAS's per-handle
 * workspace, 32 MiB on Hopper; cuSOLVER's internals; the context's own growth). Both CUDA paths plan with it. */
inline std::size_t
UsableDeviceBytes(std::size_t freeBytes)
{
  const std::size_t reserve = (std::size_t{ 256 } << 20) + freeBytes / 20;
  return freeBytes > reserve ? freeBytes - reserve : 0;
}

class SVDLR_CUDA_EXPORT ScopedDevice
{
public:
  /** Makes `deviceId` current; throws svdlr::Error(DeviceFailure) when CUDA refuses. */
  explicit ScopedDevice(int deviceId);
  ~ScopedDevice();

  ScopedDevice(const ScopedDevice &) = delete;
  ScopedDevice &
  operator=(const ScopedDevice &) = delete;

private:
  int  m_Previous{ 0 };
  bool m_Changed{ false };
};

} // namespace detail
} // namespace svdlr

#endif
