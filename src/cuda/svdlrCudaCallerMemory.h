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
#ifndef svdlr_CudaCallerMemory_h
#define svdlr_CudaCallerMemory_h

// Where the caller's matrices live for the slice pipeline (svdlrCudaPipeline.cu), and the copies that reach them
// without the staging ring: Reconstruct takes host memory (pageable, moved through the pinned staging ring, or
// pinned, which the copy engines read and write directly); ReconstructOnDevice takes device or managed memory on
// the run's device, copied device to device after the work the caller queued on its stream.

#include <cuda_runtime_api.h>

#include <cstddef>

namespace svdlr
{
namespace detail
{

/** Where the caller's matrices live: pageable host memory, moved through the staging ring; pinned host
 * memory, which the copy engines read and write directly; or device memory, copied device to device after
 * the work already queued on `stream`. */
struct CallerMemory
{
  bool         onDevice{ false };
  cudaStream_t stream{ nullptr };
  bool         inputPinned{ false }; // host input in page-locked memory (cudaMallocHost, cudaHostRegister)
  bool         outputPinned{ false };
};

/** Where the input and output spans are, from what the call `asked` for: for device memory (asked.onDevice), checks
 * that the first and last byte of each span are device or managed memory on `deviceId` and throws
 * svdlr::Error(InvalidArgument) naming the span otherwise; for host memory, whether each span is pinned. */
CallerMemory
LocateCallerMemory(const void * input, std::size_t inputBytes, const void * output, std::size_t outputBytes,
                   int deviceId, const CallerMemory & asked);

/** Enqueues on `stream` a copy the copy engines make directly (device to device, or between pinned host memory and
 * the device; the direction follows from the pointers) of `count` matrices, each `matrixBytes` long, from `source`
 * (matrix i at source + i * sourceStride bytes) to `target` (likewise). */
void
CopyMatricesDirect(void * target, std::size_t targetStride, const void * source, std::size_t sourceStride,
                   std::size_t matrixBytes, std::size_t count, cudaStream_t stream);

} // namespace detail
} // namespace svdlr

#endif
