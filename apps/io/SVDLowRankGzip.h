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
#ifndef SVDLowRankGzip_h
#define SVDLowRankGzip_h

// gzip (RFC 1952) through libdeflate, whole buffers at a time: decompression about twice as fast as zlib's, and
// compression in independent members on several threads. A file of several members (ours, bgzip's, pigz
// --independent's) is one valid gzip stream to zlib's gzread, Python's gzip, nibabel, ITK and MRtrix3.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace svdlr_io
{

/** The gzip level of the NIfTI outputs when none is asked for: libdeflate's 4 compresses noisy float32 images within
 * 1% of zlib's default (6) at several times its speed. */
constexpr int kDefaultGzipLevel = 4;

/** The bytes of one gzip member before compression: 4 MiB, so that a 144 MB series gives every core of a 16-core
 * machine two members or more, and each costs a 22-byte header and trailer (0.0005%). */
constexpr std::size_t kGzipMemberBytes = std::size_t{ 4 } << 20;

/** Whether `bytes` start a gzip member (1f 8b, deflate). */
bool
StartsGzipMember(const unsigned char * bytes, std::size_t size);

/** The smallest size, at least `atLeast`, of a member whose trailer gives `isize`: RFC 1952's ISIZE is the size
 * modulo 2^32, so a member over 4 GiB stores only its low 32 bits and the size is one of isize + k 2^32. */
std::uint64_t
GzipMemberSize(std::uint32_t isize, std::uint64_t atLeast);

/** What DecompressGzip made of a file. */
struct Decompressed
{
  std::vector<unsigned char> bytes;
  bool                       complete{ false }; // false: the stream ends early or is corrupt (`bytes` then empty)
};

/** Decompresses every member of the gzip file `compressed` into one buffer; `expected`, the size the caller expects
 * (the header's promise), sizes the buffer first, and it doubles when a member does not fit (files over 4 GiB
 * included: no ISIZE is trusted for the size). Bytes after the last member that do not start another one are ignored, as zlib's gzread does. */
Decompressed
DecompressGzip(const unsigned char * compressed, std::size_t size, std::uint64_t expected);

/** The CRC-32 of gzip and zlib, continued from `crc` (0 to start). */
std::uint32_t
Crc32(std::uint32_t crc, const unsigned char * bytes, std::size_t size);

/** Compresses what `read` gives (it fills up to the size asked for and returns how much it filled, 0 at the end) into
 * gzip members of kGzipMemberBytes, `threads` at a time at `level` (1 to 12; 0: kDefaultGzipLevel), and hands them
 * to `write` in order, each member whole. Throws std::runtime_error when libdeflate cannot allocate; the exceptions
 * of `read` and `write` pass through. */
void
CompressGzip(const std::function<std::size_t(unsigned char *, std::size_t)> & read,
             int                                                            level,
             unsigned                                                       threads,
             const std::function<void(const unsigned char *, std::size_t)> &  write);

} // namespace svdlr_io

#endif
