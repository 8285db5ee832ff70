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
#include "svdlrStagingRing.h"

#include "svdlrCudaCheck.h"
#include "svdlr/Engine.h"

#include <array>
#include <climits>
#include <string>

namespace svdlr
{
namespace detail
{
namespace
{

const char *
MemoryTypeText(cudaMemoryType type)
{
  switch (type)
  {
    case cudaMemoryTypeUnregistered:
      return "pageable host memory";
    case cudaMemoryTypeHost:
      return "pinned host memory";
    case cudaMemoryTypeDevice:
      return "device memory";
    case cudaMemoryTypeManaged:
      return "managed memory";
  }
  return "memory of unknown type";
}

/** The first and the last byte of [data, data + bytes): where a batch's memory is checked. */
std::array<const unsigned char *, 2>
SpanEnds(const void * data, std::size_t bytes)
{
  const unsigned char * first = static_cast<const unsigned char *>(data);
  return { first, first + (bytes - 1) };
}

/** CUDA's attributes of the memory at `p`; a pointer CUDA does not know reads as unregistered host memory
 * (and the error it raised is cleared). */
cudaPointerAttributes
AttributesAt(const void * p)
{
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess)
  {
    (void)cudaGetLastError();
    attributes.type = cudaMemoryTypeUnregistered;
  }
  return attributes;
}

/** Whether both ends of [data, data + bytes) are page-locked host memory. */
bool
IsPinnedHostSpan(const void * data, std::size_t bytes)
{
  for (const unsigned char * p : SpanEnds(data, bytes))
  {
    if (AttributesAt(p).type != cudaMemoryTypeHost)
    {
      return false;
    }
  }
  return true;
}

/** Throws InvalidArgument unless the first and last byte of [data, data + bytes) are device or managed
 * memory on `deviceId`. */
void
CheckDeviceSpan(const void * data, std::size_t bytes, int deviceId, const char * name)
{
  const auto ends = SpanEnds(data, bytes);
  for (const unsigned char * p : ends)
  {
    const cudaPointerAttributes attributes = AttributesAt(p);
    const bool                  onDevice = attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
    if (!onDevice || attributes.device != deviceId)
    {
      std::string where = MemoryTypeText(attributes.type);
      if (onDevice)
      {
        where += " on device " + std::to_string(attributes.device);
      }
      throw Error(ErrorCode::InvalidArgument,
                  std::string("svdlr: ReconstructOnDevice: the ") + name + " batch is " + where +
                    (p == ends[0] ? "" : " at its end") + "; it must be device or managed memory on device " +
                    std::to_string(deviceId) + " (options.deviceId); use Reconstruct for host memory");
    }
  }
}

} // namespace

CallerMemory
LocateCallerMemory(const void * input, std::size_t inputBytes, const void * output, std::size_t outputBytes,
                   int deviceId, const CallerMemory & asked)
{
  CallerMemory where = asked;
  if (where.onDevice)
  {
    CheckDeviceSpan(input, inputBytes, deviceId, "input");
    CheckDeviceSpan(output, outputBytes, deviceId, "output");
  }
  else
  {
    where.inputPinned = IsPinnedHostSpan(input, inputBytes);
    where.outputPinned = IsPinnedHostSpan(output, outputBytes);
  }
  return where;
}

void
CopyMatricesDirect(void * target, std::size_t targetStride, const void * source, std::size_t sourceStride,
                   std::size_t matrixBytes, std::size_t count, cudaStream_t stream)
{
  const std::size_t bytes = matrixBytes;
  if (count == 1 || (targetStride == bytes && sourceStride == bytes))
  {
    SVDLR_CUDA_CHECK(cudaMemcpyAsync(target, source, count * bytes, cudaMemcpyDefault, stream));
  }
  else if (targetStride <= static_cast<std::size_t>(INT_MAX) && sourceStride <= static_cast<std::size_t>(INT_MAX))
  {
    SVDLR_CUDA_CHECK(
      cudaMemcpy2DAsync(target, targetStride, source, sourceStride, bytes, count, cudaMemcpyDefault, stream));
  }
  else // pitches beyond what cudaMemcpy2D takes: one copy per matrix
  {
    for (std::size_t i = 0; i < count; ++i)
    {
      SVDLR_CUDA_CHECK(cudaMemcpyAsync(static_cast<unsigned char *>(target) + i * targetStride,
                                       static_cast<const unsigned char *>(source) + i * sourceStride,
                                       bytes,
                                       cudaMemcpyDefault,
                                       stream));
    }
  }
}

} // namespace detail
} // namespace svdlr
