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
#ifndef svdlr_DeviceAllocationFaults_h
#define svdlr_DeviceAllocationFaults_h

// The process-wide fault countdown for device allocations (CudaBuffer<..., Device>::TryAllocate): armed only by
// the test hooks (test/support/svdlrCudaTestHooks.h, FailDeviceAllocations), to make the device run out of memory
// at a chosen allocation. Never armed by the engine itself.

#include "svdlrCudaExport.h"
#include "shared/svdlrFaultCountdown.h"

namespace svdlr
{
namespace detail
{

SVDLR_CUDA_EXPORT FaultCountdown &
DeviceAllocationFaults() noexcept;

} // namespace detail
} // namespace svdlr

#endif
