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
#ifndef svdlr_DevicePoison_h
#define svdlr_DevicePoison_h

#include "svdlrCudaCheck.h"

#include <cuda_runtime.h>

#include <cstddef>

namespace svdlr
{
namespace test
{

/** Fills device memory with 0xFF bytes (NaN for float and double, -1 for int), so that whatever the code under test
 * leaves unwritten shows, and waits until it is done. The wait matters: cudaMemset is asynchronous and runs on the
 * legacy default stream, which does not order itself with the non-blocking streams the engine launches on, so
 * without it the poison could land during or after the kernels it is meant to precede. That happened on the H100:
 * the small eigen-solver's tests failed now and then (QL on a NaN-poisoned workspace) and passed when replayed. */
inline void
PoisonDeviceBytes(void * data, std::size_t bytes)
{
  SVDLR_CUDA_CHECK(cudaMemset(data, 0xFF, bytes));
  SVDLR_CUDA_CHECK(cudaDeviceSynchronize());
}

} // namespace test
} // namespace svdlr

#endif
