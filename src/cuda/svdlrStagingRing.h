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
#ifndef svdlr_StagingRing_h
#define svdlr_StagingRing_h

// Moves a batch of matrices between the caller's pageable host memory and the device through small pinned
// buffers. PERFORMANCE.md: pageable copies run at 4-7 ms per 64 MiB, registering the caller's buffer costs
// as much, cudaMallocHost costs about 26 ms per 64 MiB, and one thread fills pinned memory at ~9 GB/s.
// So instead of a pinned copy of the whole batch, the batch is cut into chunk-sized pieces, spread over a
// few lanes (host threads), and each lane alternates between two pinned chunks: while the copy engine
// moves one chunk, the lane's thread fills or empties the other. A few MiB of pinned memory then carry any
// batch size at close to PCIe speed.

#include "svdlrCudaHandles.h"
#include "svdlrDeviceBuffer.h"
#include "svdlr/Engine.h"

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <vector>

namespace svdlr
{
namespace detail
{

/** `count` host matrices of `matrixBytes`, matrix i at data + i * strideBytes. On the device the same
 * matrices are packed (matrix i at device + i * matrixBytes). */
template <typename TByte>
struct HostMatrices
{
  TByte *     data{ nullptr };
  std::size_t count{ 0 };
  std::size_t matrixBytes{ 0 };
  std::size_t strideBytes{ 0 };
};

class StagingRing
{
public:
  /** Pinned memory for `lanes` lanes of two chunks each, chunkBytes per chunk; throws svdlr::Error. */
  StagingRing(int deviceId, std::size_t lanes, std::size_t chunkBytes);
  ~StagingRing();

  StagingRing(const StagingRing &) = delete;
  StagingRing &
  operator=(const StagingRing &) = delete;

  /** Lanes and chunk size for batches of up to `batchBytes`, with at most `workers` host threads. */
  static void
  Size(std::size_t batchBytes, unsigned workers, std::size_t & lanes, std::size_t & chunkBytes);

  /** Enqueues host -> device copies of `source` into `device` (packed) on `stream`. Returns once every
   * piece is in pinned memory and its copy is enqueued; the copies themselves complete in stream order. */
  void
  Upload(const HostMatrices<const unsigned char> & source, void * device, cudaStream_t stream,
         const ParallelFor & parallelFor);

  /** Copies `device` (packed) to `target` after the work already enqueued on `stream`; returns once the
   * data is in `target`. */
  void
  Download(const void * device, const HostMatrices<unsigned char> & target, cudaStream_t stream,
           const ParallelFor & parallelFor);

private:
  struct Chunk
  {
    PinnedBuffer<unsigned char> memory;
    EventOwner                  copied; // recorded after the chunk's last async copy
  };
  struct Lane
  {
    std::array<Chunk, 2> chunks;
    std::size_t          uses{ 0 }; // chunks[uses % 2] is the next one to use
  };

  template <typename TBody>
  void
  ForEachLane(std::size_t lanes, const ParallelFor & parallelFor, const TBody & body);

  int               m_DeviceId;
  std::size_t       m_ChunkBytes;
  std::vector<Lane> m_Lanes;
};

// Where the caller's matrices live for the slice pipeline (svdlrCudaPipeline.cu), and the copies that reach them
// without the staging ring: Reconstruct takes host memory (pageable, moved through the pinned staging ring, or
// pinned, which the copy engines read and write directly); ReconstructOnDevice takes device or managed memory on
// the run's device, copied device to device after the work the caller queued on its stream.

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
