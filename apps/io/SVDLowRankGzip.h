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

// gzip (RFC 1952) through libdeflate, whole buffers at a time: decompression about twice as fast as zlib's (and a
// large member on several threads: SVDLowRankParallelGunzip.h), and compression in independent members on several
// threads (at level 1 by ISA-L's igzip where built with it). A file of several members (ours, bgzip's, pigz
// --independent's) is one valid gzip stream to zlib's gzread, Python's gzip, nibabel, ITK and MRtrix3.

#include "SVDLowRankGunzipCheck.h"
#include "svdlr/CpuThreads.h"
#include "SVDLowRankParallelGunzip.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace svdlr_io
{

/** The gzip level of the NIfTI outputs when none is asked for (compressed by ISA-L's igzip where the library is built
 * with it, at about seven times libdeflate's speed: SVDLowRankGzip.cxx). libdeflate's level 1 is both its fastest and,
 * on noisy MRI, the smallest: measured on a 96x96x60x65 DWI phantom (docs/command-line.md), the denoised float32 series
 * compresses to 86.37% at level 1 (137 MB/s a core), 86.52% at 4 (103 MB/s) and 86.45% with zlib's default 6
 * (31 MB/s); the int16 noisy series to 61.2% at 1 (143 MB/s), 62.9% at 4 and 62.6% with zlib 6 (15 MB/s). Only
 * maps of few distinct values (a noise map: 8.2% against 5.4%) compress better higher up, and they are small. */
constexpr int kDefaultGzipLevel = 1;

/** The bytes of one gzip member before compression: 1 MiB, so that a 144 MB series gives every core of a 16-core
 * machine 8 members or more and the last ones do not leave cores idle; each costs a header and trailer and a fresh
 * 32 KiB window (+0.002% in size, measured against 4 MiB members). */
constexpr std::size_t kGzipMemberBytes = std::size_t{ 1 } << 20;

/** Bytes in memory, compressed in place. */
struct ByteSpan
{
  const unsigned char * data{ nullptr };
  std::size_t           size{ 0 };
};

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
  ByteBuffer bytes;
  bool          complete{ false }; // status is Complete; else `bytes` is empty
  GunzipStatus  status{ GunzipStatus::Corrupt };
  std::uint64_t bytesBeforeFailure{ 0 }; // Truncated: how much came out before the stream ended
  std::string   problem;                 // Corrupt: which member and what (SVDLowRankGunzipCheck.h)
};

/** Decompresses every member of the gzip file `compressed` into one buffer, each member's CRC-32 and ISIZE verified;
 * `expected`, the size the caller expects (the header's promise), sizes the buffer first, never beyond what the
 * compressed bytes can hold nor beyond `settings.mostBytes`, and it doubles when a member does not fit, up to
 * `settings.mostBytes` (no ISIZE is trusted for the size). A stream that would decompress past `settings.mostBytes`
 * stops there: TooLong. Bytes after the last member that do not start another one are ignored, as zlib's gzread does. A
 * failure says what it was (CheckGzipStream). A member of more than `settings.minimumBytes` is decoded on several
 * threads (SVDLowRankParallelGunzip.h); the result is libdeflate's, byte for byte, whichever way it was decoded. */
Decompressed
DecompressGzip(const unsigned char * compressed, std::size_t size, std::uint64_t expected,
               const GunzipSettings & settings = GunzipSettings{}, GunzipReport * report = nullptr);

/** The most bytes `compressed` bytes of gzip can decompress to: DEFLATE expands at most 1032 to 1. */
std::uint64_t
MostDecompressedBytes(std::size_t compressed);


/** The CRC-32 of gzip and zlib, continued from `crc` (0 to start). */
std::uint32_t
Crc32(std::uint32_t crc, const unsigned char * bytes, std::size_t size);

/** The CRC-32 of A followed by B from A's CRC, B's CRC and B's size (zlib's crc32_combine64): chunks checked on
 * several threads, then joined. */
std::uint32_t
Crc32Combine(std::uint32_t crcA, std::uint32_t crcB, std::uint64_t sizeB);

/** Compresses `parts`, each cut into gzip members of kGzipMemberBytes (a member never spans two parts: a NIfTI
 * header is a member of its own, and the pixels are compressed where they lie), at `level` (1 to 12; 0:
 * kDefaultGzipLevel), and hands the members to `write` in order, each whole, as they are ready. The members are
 * compressed on an equal share of `threads` with the file jobs that run at the same time (a batch's writers
 * and readers: svdlr::ShareOfCpuThreads, kind FileInputOutput, the one rule for every parallel step), while
 * `write` writes the earlier ones; at most two per thread wait to be written. Throws std::runtime_error when
 * a compressor cannot allocate or fails; what `write` throws passes through. */
void
CompressGzip(const std::vector<ByteSpan> &                                  parts,
             int                                                            level,
             unsigned                                                       threads,
             const std::function<void(const unsigned char *, std::size_t)> & write);

} // namespace svdlr_io

#endif
