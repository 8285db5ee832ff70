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

#include "svdlrCudaDevice.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <mutex>

namespace svdlr
{
namespace detail
{
namespace
{

// Measured on the H100 for 64 MiB each way (W1), host time of pinning + copy-in + copy-out + unpinning:
// 4 lanes x 2 x 2 MiB: 5.8 + 2.7 + 3.2 ms (+3.9 ms teardown); 8 x 2 x 1 MiB: 5.7 + 2.6 + 2.5;
// 8 x 2 x 512 KiB: 2.9 + 2.9 + 3.1; 4 x 2 x 512 KiB: 1.3 + 3.6 + 3.9 (2.2 ms teardown); 2 x 2 x 4 MiB:
// 6.0 + 4.8 + 5.2. Pinning costs about 0.35 ms per MiB, while the copy engine drains a 512 KiB chunk in
// ~10 us, far faster than a thread fills it: small chunks lose nothing. The pinned chunks now live in the
// resource cache, so their cost is paid once; what remains is the host copy rate. With the subspace solver
// the copies are the bound for pageable input (W1 pageable, end to end: 2 lanes 13.0 ms, 4 lanes 10.9 ms,
// 8 lanes 9.7 ms), so up to 8 lanes copy in parallel.
constexpr std::size_t kMaxChunkBytes = std::size_t{ 512 } << 10;
constexpr std::size_t kMaxLanes = 8;
constexpr std::size_t kChunkAlignment = 4096;

/** Copies packed bytes [begin, end) of the batch between `packed` (which holds exactly that range) and
 * the strided host matrices, cutting at matrix boundaries. `VToHost` selects the direction. */
template <bool VToHost, typename THostByte>
void
CopyPackedRange(unsigned char * packed, const HostMatrices<THostByte> & host, std::size_t begin, std::size_t end)
{
  while (begin < end)
  {
    const std::size_t matrix = begin / host.matrixBytes;
    const std::size_t offset = begin - matrix * host.matrixBytes;
    const std::size_t length = std::min(end - begin, host.matrixBytes - offset);
    THostByte *       hostBytes = host.data + matrix * host.strideBytes + offset;
    if constexpr (VToHost)
    {
      std::memcpy(hostBytes, packed, length);
    }
    else
    {
      std::memcpy(packed, hostBytes, length);
    }
    packed += length;
    begin += length;
  }
}

std::size_t
RoundUp(std::size_t value, std::size_t multiple)
{
  return (value + multiple - 1) / multiple * multiple;
}

} // namespace

StagingRing::StagingRing(int deviceId, std::size_t lanes, std::size_t chunkBytes)
  : m_DeviceId(deviceId)
  , m_ChunkBytes(chunkBytes)
  , m_Lanes(lanes)
{
  for (Lane & lane : m_Lanes)
  {
    for (Chunk & chunk : lane.chunks)
    {
      chunk.memory.Allocate(chunkBytes);
      chunk.copied = CreateEvent();
    }
  }
}

StagingRing::~StagingRing()
{
  // A chunk may still be the source or target of a copy when an exception unwinds: wait before the
  // pinned memory goes back.
  for (Lane & lane : m_Lanes)
  {
    for (Chunk & chunk : lane.chunks)
    {
      if (chunk.copied.Get() != nullptr)
      {
        (void)cudaEventSynchronize(chunk.copied.Get());
      }
    }
  }
}

void
StagingRing::Size(std::size_t batchBytes, unsigned workers, std::size_t & lanes, std::size_t & chunkBytes)
{
  const std::size_t pieces = std::max<std::size_t>(1, (batchBytes + kMaxChunkBytes - 1) / kMaxChunkBytes);
  lanes = std::max<std::size_t>(1, std::min({ kMaxLanes, static_cast<std::size_t>(workers), pieces }));
  chunkBytes = std::min(kMaxChunkBytes, RoundUp(std::max<std::size_t>(1, batchBytes), kChunkAlignment));
}

template <typename TBody>
void
StagingRing::ForEachLane(std::size_t lanes, const ParallelFor & parallelFor, const TBody & body)
{
  // Lanes run on the caller's threads, whose current device may be any: each lane makes ours current.
  // Exceptions are caught per lane and the first is rethrown here, whatever the ParallelFor does with them.
  std::exception_ptr firstError;
  std::mutex         errorMutex;
  const auto         laneBody = [&](std::size_t lane) {
    try
    {
      const ScopedDevice device(m_DeviceId);
      body(m_Lanes[lane], lane, lanes);
    }
    catch (...)
    {
      const std::lock_guard<std::mutex> lock(errorMutex);
      if (!firstError)
      {
        firstError = std::current_exception();
      }
    }
  };
  if (lanes == 1 || !parallelFor)
  {
    for (std::size_t lane = 0; lane < lanes; ++lane)
    {
      laneBody(lane);
    }
  }
  else
  {
    parallelFor(lanes, laneBody);
  }
  if (firstError)
  {
    std::rethrow_exception(firstError);
  }
}

void
StagingRing::Upload(const HostMatrices<const unsigned char> & source, void * device, cudaStream_t stream,
                    const ParallelFor & parallelFor)
{
  const std::size_t total = source.count * source.matrixBytes;
  const std::size_t pieces = (total + m_ChunkBytes - 1) / m_ChunkBytes;
  const std::size_t lanes = std::min(m_Lanes.size(), pieces);
  auto *            deviceBytes = static_cast<unsigned char *>(device);
  ForEachLane(lanes, parallelFor, [&](Lane & lane, std::size_t first, std::size_t step) {
    for (std::size_t piece = first; piece < pieces; piece += step)
    {
      Chunk & chunk = lane.chunks[lane.uses++ % 2];
      SVDLR_CUDA_CHECK(cudaEventSynchronize(chunk.copied.Get())); // its previous copy is done
      const std::size_t begin = piece * m_ChunkBytes;
      const std::size_t end = std::min(total, begin + m_ChunkBytes);
      CopyPackedRange<false>(chunk.memory.Data(), source, begin, end);
      SVDLR_CUDA_CHECK(
        cudaMemcpyAsync(deviceBytes + begin, chunk.memory.Data(), end - begin, cudaMemcpyHostToDevice, stream));
      SVDLR_CUDA_CHECK(cudaEventRecord(chunk.copied.Get(), stream));
    }
  });
}

void
StagingRing::Download(const void * device, const HostMatrices<unsigned char> & target, cudaStream_t stream,
                      const ParallelFor & parallelFor)
{
  const std::size_t total = target.count * target.matrixBytes;
  const std::size_t pieces = (total + m_ChunkBytes - 1) / m_ChunkBytes;
  const std::size_t lanes = std::min(m_Lanes.size(), pieces);
  const auto *      deviceBytes = static_cast<const unsigned char *>(device);
  ForEachLane(lanes, parallelFor, [&](Lane & lane, std::size_t first, std::size_t step) {
    // The lane's pieces are first, first + step, ...; piece j + 1 is in flight while piece j is emptied.
    const std::size_t mine = first < pieces ? (pieces - first + step - 1) / step : 0;
    const std::size_t base = lane.uses;
    const auto        issue = [&](std::size_t j) {
      Chunk & chunk = lane.chunks[(base + j) % 2];
      SVDLR_CUDA_CHECK(cudaEventSynchronize(chunk.copied.Get())); // its previous content is consumed
      const std::size_t begin = (first + j * step) * m_ChunkBytes;
      const std::size_t end = std::min(total, begin + m_ChunkBytes);
      SVDLR_CUDA_CHECK(
        cudaMemcpyAsync(chunk.memory.Data(), deviceBytes + begin, end - begin, cudaMemcpyDeviceToHost, stream));
      SVDLR_CUDA_CHECK(cudaEventRecord(chunk.copied.Get(), stream));
    };
    if (mine > 0)
    {
      issue(0);
    }
    for (std::size_t j = 0; j < mine; ++j)
    {
      if (j + 1 < mine)
      {
        issue(j + 1);
      }
      Chunk & chunk = lane.chunks[(base + j) % 2];
      SVDLR_CUDA_CHECK(cudaEventSynchronize(chunk.copied.Get()));
      const std::size_t begin = (first + j * step) * m_ChunkBytes;
      const std::size_t end = std::min(total, begin + m_ChunkBytes);
      CopyPackedRange<true>(chunk.memory.Data(), target, begin, end);
    }
    lane.uses = base + mine;
  });
}

} // namespace detail
} // namespace svdlr
