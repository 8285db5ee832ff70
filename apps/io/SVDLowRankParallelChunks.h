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
#ifndef SVDLowRankParallelChunks_h
#define SVDLowRankParallelChunks_h

// A pass over a whole file or image (reading its bytes, converting its voxels, looking for NaN) split over the cores.
// Each is memory-bound, and a fresh buffer's first touch (its page faults) goes with it: one thread took 0.11 s to
// convert a 144 MB series on the H100 machine, the largest step after the filter and the gzip. ITK-free: the tools'
// reader and the Python extension's share it.

#include "svdlr/CpuThreads.h"

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <cstddef>

namespace svdlr_io
{

/** Elements (voxels, bytes) per chunk: 4 MB of float32, large enough that a thread's start is noise, small enough to
 * spread 36 M voxels over every core. */
constexpr std::size_t kParallelChunk = std::size_t{ 1 } << 20;

/** Calls pass(first, count) over [0, n) in chunks of kParallelChunk, on up to every usable core: a file job
 * (svdlr::RunningParallelJob), which shares them with the other file jobs running now (svdlr::ShareOfCpuThreads),
 * in a oneTBB arena that wide; on this thread alone for one chunk. `pass` must not throw. */
template <typename TPass>
void
ForChunksOnEveryCore(std::size_t n, const TPass & pass)
{
  const svdlr::RunningParallelJob running(svdlr::ParallelJobKind::FileInputOutput);
  const std::size_t               chunks = (n + kParallelChunk - 1) / kParallelChunk;
  const std::size_t               threads =
    std::min<std::size_t>(svdlr::ShareOfCpuThreads(svdlr::ParallelJobKind::FileInputOutput), chunks);
  const auto chunk = [&](std::size_t c) {
    const std::size_t first = c * kParallelChunk;
    pass(first, std::min(kParallelChunk, n - first));
  };
  if (threads <= 1)
  {
    for (std::size_t c = 0; c < chunks; ++c)
    {
      chunk(c);
    }
    return;
  }
  tbb::task_arena arena(static_cast<int>(threads));
  arena.execute([&] { tbb::parallel_for(std::size_t{ 0 }, chunks, chunk); });
}

} // namespace svdlr_io

#endif
