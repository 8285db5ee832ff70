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
#ifndef SVDLowRankParallelGunzip_h
#define SVDLowRankParallelGunzip_h

// One gzip member decompressed on several threads: what scanners, dcm2niix, nibabel and pigz write is one member,
// which libdeflate decodes on one thread only. The member's DEFLATE stream is cut into chunks of a few MiB; each chunk
// after the first starts at the first block boundary found at or after its nominal offset and is decoded without
// the 32 KiB before it (SVDLowRankInflateChunk.h); then, in order, each chunk is checked to start exactly where the
// one before it stopped, its window becomes known and its markers are replaced, in parallel again, straight into the
// caller's buffer. The CRC-32 and size of the trailer must match, or nothing is kept: DecompressGzip then decodes the
// member with libdeflate, as it did before, so the result is libdeflate's, byte for byte, or its failure.
//
// Why our own decoder and not a library's (`bash benchmarks/device.sh gunzip`, one H200 host, 16 cores; a 96x96x60x65
// float32 series as one gzip -6 member, 131.5 MB): ours 0.094 s on 16 threads, libdeflate 0.494 s and ISA-L's igzip
// 0.557 s on their one thread, rapidgzip (the same two-stage method) 0.226 s at best (8 threads). The rule was to
// keep ours only if it saved 0.2 s against the best library. Files of many small members (ours, bgzip's) gain
// nothing from it (0.52 s against libdeflate's 0.47 s), so libdeflate decodes them.

#include "SVDLowRankByteBuffer.h"
#include "svdlr/CpuThreads.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace svdlr_io
{

/** Members with less compressed data than this are decoded on one thread: below it the threads' start-up and the
 * chunks' searches cost more than they save. */
constexpr std::size_t kParallelGunzipMinimumBytes = std::size_t{ 4 } << 20;

/** How DecompressGzip decodes; the defaults are what every reader gets. Tests force threads and small chunks. */
struct GunzipSettings
{
  unsigned    threads{ 0 };    // 0: the file jobs' share of the cores (svdlr::ShareOfCpuThreads)
  std::size_t chunkBytes{ 0 }; // compressed bytes a chunk; 0: chosen from the member's size and the threads
  std::size_t minimumBytes{ kParallelGunzipMinimumBytes };
  std::uint64_t mostBytes{ UINT64_MAX }; // the most the output may hold (a NIfTI file: what its
                                         // header declares, and a little more): past it the stream is refused, and no
                                         // buffer grows beyond
};

/** What the parallel decoder did, for tests and the benchmark. */
struct GunzipReport
{
  unsigned    threads{ 0 };      // the threads it ran on (0: it did not run)
  std::size_t members{ 0 };      // members it decoded
  std::size_t chunks{ 0 };       // chunks of those members
  std::size_t catchUps{ 0 };     // chunks decoded again, in order, because their start was not where the one before
                                 // stopped (a false or missed block boundary)
  std::size_t fallbacks{ 0 };    // members it gave back to libdeflate
};

/** What GunzipMember made of one member. */
struct GunzipMemberResult
{
  bool        done{ false };       // false: the member is left to libdeflate (`out` past `produced` is then garbage)
  std::size_t used{ 0 };           // compressed bytes of the member, trailer included
  std::size_t made{ 0 };           // bytes written at out[produced]
  bool        endedInFirstChunk{ false }; // the member was smaller than a chunk: its file holds small members
};

/** Decodes the gzip member at `member` (`size` bytes to the end of the file) on `threads` threads (DecompressGzip asks
 * for two or more; one is for the benchmark, which times the chunk decoder alone) into `out` from
 * `produced` on, growing `out` when the member is larger than the room left (never beyond `mostOutput` bytes). */
GunzipMemberResult
GunzipMember(const unsigned char *        member,
             std::size_t                  size,
             ByteBuffer &                 out,
             std::size_t                  produced,
             std::uint64_t                mostOutput,
             unsigned                     threads,
             const GunzipSettings &       settings,
             GunzipReport *               report);

} // namespace svdlr_io

#endif
