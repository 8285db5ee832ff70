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
// Fuzz target: our parallel DEFLATE decoder (SVDLowRankParallelGunzip.h) against libdeflate on every input. The same
// gzip stream is decompressed twice by DecompressGzip: on one thread, which is libdeflate alone, and on 2 to 4 threads
// in chunks of 32 bytes to 4 KiB with no minimum size, so that every member of a few KiB goes through our chunk
// search, the markers of back-references across chunks, the catch-ups and the trailer check. The two must agree on
// whether the stream is whole, on its status and on every byte; anything else aborts.
//
// The tools never send a member under 4 MiB to our decoder (kParallelGunzipMinimumBytes), which is why the .nii.gz
// target (SVDLowRankNiftiGzipFuzzer) hardly reaches it. The input is four control bytes, then a payload:
//   byte 0, bits 0-1: 0, the payload is the gzip stream itself; 1 to 3, the payload compressed here by zlib into that
//                     many members;
//           bits 2-5: zlib's level (0: stored blocks; 10 to 15 read as 6);
//           bit 6:    a sync flush (an empty stored block, as pigz writes them) every (byte 3 + 1) x 16 input bytes;
//           bit 7:    the payload repeated (byte 2 % 16 + 1) times, so that back-references reach into earlier chunks;
//   byte 1: bits 0-1 the threads (2 + bits % 3), bits 2-4 the chunk size (32 << bits), bits 5-7 zlib's strategy
//           (default, filtered, Huffman only, RLE, fixed; 5 to 7 read as default);
//   bytes 2-3: where a bit of the compressed stream is flipped (when byte 2's bit 7 is set; a position past the
//              stream is taken modulo its length), and, with byte 3's bit 7, the stream is cut there instead.
#include "SVDLowRankGzip.h"
#include "SVDLowRankParallelGunzip.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace
{

using Bytes = std::vector<unsigned char>;

/** `size` bytes at `data` as one gzip member, appended to `out`. */
void
AppendMember(const unsigned char * data, std::size_t size, int level, int strategy, std::size_t flushEvery,
             Bytes & out)
{
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, 16 + MAX_WBITS, 8, strategy) != Z_OK)
  {
    std::abort();
  }
  const std::size_t pieces = flushEvery > 0 ? size / flushEvery + 1 : 1;
  Bytes             member(deflateBound(&z, static_cast<uLong>(size)) + 16 * pieces + 64);
  z.next_out = member.data();
  z.avail_out = static_cast<uInt>(member.size());
  std::size_t at = 0;
  do
  {
    const std::size_t piece = flushEvery > 0 ? std::min(flushEvery, size - at) : size - at;
    z.next_in = const_cast<unsigned char *>(data + at);
    z.avail_in = static_cast<uInt>(piece);
    at += piece;
    if (deflate(&z, at < size ? Z_SYNC_FLUSH : Z_FINISH) == Z_STREAM_ERROR)
    {
      std::abort();
    }
  } while (at < size);
  out.insert(out.end(), member.begin(), member.begin() + static_cast<std::ptrdiff_t>(z.total_out));
  deflateEnd(&z);
}

svdlr_io::Decompressed
Decompress(const Bytes & gzip, unsigned threads, std::size_t chunkBytes)
{
  svdlr_io::GunzipSettings settings;
  settings.threads = threads;
  settings.chunkBytes = chunkBytes;
  settings.minimumBytes = 1;
  settings.mostBytes = std::uint64_t{ 64 } << 20; // what the fuzzer's memory limit allows for both copies
  return svdlr_io::DecompressGzip(gzip.data(), gzip.size(), 0, settings);
}

[[noreturn]] void
Disagree(const char * what, const svdlr_io::Decompressed & serial, const svdlr_io::Decompressed & parallel)
{
  std::fprintf(stderr,
               "contract broken: the parallel decoder's %s differs from libdeflate's (complete %d/%d, status %d/%d, "
               "%zu/%zu bytes, %llu/%llu before the failure)\n",
               what, serial.complete, parallel.complete, static_cast<int>(serial.status),
               static_cast<int>(parallel.status), serial.bytes.size(), parallel.bytes.size(),
               static_cast<unsigned long long>(serial.bytesBeforeFailure),
               static_cast<unsigned long long>(parallel.bytesBeforeFailure));
  std::abort();
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const std::uint8_t * data, std::size_t size)
{
  if (size < 4)
  {
    return 0;
  }
  const unsigned control = data[0], shape = data[1], where = data[2] | (data[3] << 8);
  Bytes          payload(data + 4, data + size);
  Bytes          gzip;
  const unsigned members = control & 3;
  if (members == 0)
  {
    gzip = payload;
  }
  else
  {
    if ((control & 128) != 0)
    {
      const Bytes once = payload;
      for (unsigned r = 0; r < data[2] % 16; ++r)
      {
        payload.insert(payload.end(), once.begin(), once.end());
      }
    }
    const unsigned    levelBits = (control >> 2) & 15;
    const int         level = levelBits <= 9 ? static_cast<int>(levelBits) : 6;
    const int         strategies[] = { Z_DEFAULT_STRATEGY, Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE, Z_FIXED };
    const int         strategy = strategies[std::min(shape >> 5, 4u)];
    const std::size_t flushEvery = (control & 64) != 0 ? (data[3] + std::size_t{ 1 }) * 16 : 0;
    std::size_t       at = 0;
    for (unsigned m = 1; m <= members; ++m)
    {
      const std::size_t piece = m < members ? payload.size() / members : payload.size() - at;
      AppendMember(payload.data() + at, piece, level, strategy, flushEvery, gzip);
      at += piece;
    }
  }
  if ((data[2] & 128) != 0 && !gzip.empty())
  {
    const std::size_t at = (where & 0x7fff) % gzip.size();
    if ((data[3] & 128) != 0)
    {
      gzip.resize(at);
    }
    else
    {
      gzip[at] = static_cast<unsigned char>(gzip[at] ^ (1u << (data[3] & 7)));
    }
  }
  const unsigned          threads = 2 + (shape & 3) % 3;
  const std::size_t       chunkBytes = std::size_t{ 32 } << ((shape >> 2) & 7);
  const svdlr_io::Decompressed serial = Decompress(gzip, 1, chunkBytes);
  const svdlr_io::Decompressed parallel = Decompress(gzip, threads, chunkBytes);
  if (serial.complete != parallel.complete || serial.status != parallel.status)
  {
    Disagree("verdict", serial, parallel);
  }
  if (serial.bytes != parallel.bytes)
  {
    Disagree("output", serial, parallel);
  }
  if (!serial.complete && serial.bytesBeforeFailure != parallel.bytesBeforeFailure)
  {
    Disagree("count of bytes before the failure", serial, parallel);
  }
  if (members != 0 && (data[2] & 128) == 0 &&
      !(serial.complete && std::equal(serial.bytes.begin(), serial.bytes.end(), payload.begin(), payload.end())))
  {
    std::fprintf(stderr, "the harness's own stream did not decompress to its payload\n");
    std::abort();
  }
  return 0;
}
