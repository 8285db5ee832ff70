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
#ifndef SVDLowRankGunzipCheck_h
#define SVDLowRankGunzipCheck_h

// Why a gzip stream does not decompress, in words a user can act on. libdeflate (SVDLowRankGzip.h) says only "bad data"
// for a stream cut short, a corrupt one, and a CRC-32 or size (ISIZE) that does not match; zlib's streaming inflate
// tells them apart and needs no buffer for the output. DecompressGzip asks here when libdeflate fails, and the
// structure check (SVDLowRankImageFileCheck.h) when a trailer disagrees with the header: the slow path, taken only for
// a file that is refused.

#include <cstddef>
#include <cstdint>
#include <string>

namespace svdlr_io
{

/** How a gzip stream ends. */
enum class GunzipStatus
{
  Complete,  // every member decoded, CRC-32 and ISIZE verified
  Truncated, // the stream ends inside a member
  Corrupt,   // a member fails its CRC-32 or ISIZE, or holds data that cannot be
             // decoded
  TooLong    // it decompresses to more than the bytes allowed (the caller's bound:
             // a NIfTI header's promise)
};

/** What CheckGzipStream found. */
struct GunzipCheck
{
  GunzipStatus  status{ GunzipStatus::Complete };
  std::uint64_t bytes{ 0 };  // decompressed bytes of the members before the failure (all of them when Complete)
  std::size_t   member{ 0 }; // the member (1 for the first) where it failed; how many there are when Complete
  std::string   problem;     // Corrupt: what is wrong, e.g. "gzip member 2 fails its CRC-32 check"
};

/** Decodes the gzip members of `compressed`, keeping none of the output, and stops at the first failure or once more
 * than `mostBytes` came out. Bytes after the last member that do not start another one are ignored (zlib's gzread does
 * the same). `firstMember`: the number of the first member here, for the words. */
GunzipCheck
CheckGzipStream(const unsigned char * compressed,
                std::size_t           size,
                std::uint64_t         mostBytes = UINT64_MAX,
                std::size_t           firstMember = 1);

} // namespace svdlr_io

#endif
