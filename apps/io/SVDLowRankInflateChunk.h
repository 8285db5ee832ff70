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
#ifndef SVDLowRankInflateChunk_h
#define SVDLowRankInflateChunk_h

// One chunk of a DEFLATE stream decoded from a block boundary, with or without the 32 KiB that came before it (the
// idea of pugz and rapidgzip: Kerbiriou and Chikhi 2019, Knespel and Brunst 2023). Without them, a back-reference
// into that unknown window gives a marker, a 16-bit symbol naming the window byte, resolved once the window is known
// (SVDLowRankParallelGunzip.h). Once the last 32 KiB of output hold no marker, no later back-reference can reach one,
// so the rest of the chunk is plain bytes: only the marker-bearing start is kept 16 bits wide.

#include "SVDLowRankByteBuffer.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace svdlr_io
{
namespace inflate
{

constexpr std::size_t kWindowBytes = std::size_t{ 1 } << 15; // DEFLATE's farthest back-reference
/** The first marker: symbol kMarkerBase + w names byte w of the 32 KiB window before the chunk. */
constexpr std::uint16_t kMarkerBase = 256;

/** Where a chunk starts or stops: at a block's first bit, or (for a stored block, whose header bits before the byte
 * boundary are ambiguous) at the byte where its LEN field starts. The search for block starts and the decoder's stop
 * rule both name a boundary this way, so that their positions compare. */
struct BlockBoundary
{
  std::uint64_t bit{ 0 };
  bool          storedLength{ false }; // true: `bit` is the LEN field of a non-final stored block
  bool
  operator==(const BlockBoundary & other) const
  {
    return bit == other.bit && storedLength == other.storedLength;
  }
};

/** A vector that does not zero what it grows into: the decoder writes every element before reading it. */
using svdlr_io::RawVector;

/** How a chunk's decoding ended. */
enum class ChunkEnd
{
  Boundary,  // at the first boundary at or after `stopFrom` that the block-start search would also accept
  StreamEnd, // after the final block
  Error      // invalid data, a code this decoder does not take, the input's end, or more output than allowed
};

/** A decoded chunk: `symbols` (the start of its output, markers allowed), then `bytes` past `bytesWindow` (the bytes
 * before `bytesWindow` repeat the output just before them, or the known window, for back-references). */
struct InflatedChunk
{
  BlockBoundary               start;
  ChunkEnd                    end{ ChunkEnd::Error };
  BlockBoundary               stop;    // Boundary: where it stopped; StreamEnd: the byte after the final block (bit)
  RawVector<std::uint16_t>    symbols; // may hold markers
  RawVector<unsigned char>    bytes;
  std::size_t                 bytesWindow{ 0 };

  std::uint64_t
  Size() const
  {
    return symbols.size() + (bytes.size() - bytesWindow);
  }
};

/** What to decode. */
struct ChunkRequest
{
  const unsigned char * data{ nullptr }; // the DEFLATE stream and whatever follows it
  std::size_t           size{ 0 };
  BlockBoundary         start;
  std::uint64_t         stopFrom{ UINT64_MAX }; // stop at the first accepted boundary at or after this bit
  bool                  windowKnown{ true };    // false: back-references before the start give markers
  const unsigned char * window{ nullptr };      // windowKnown: the bytes just before the start (at most 32 KiB)
  std::size_t           windowSize{ 0 };
  std::uint64_t         mostOutput{ UINT64_MAX }; // more output than this is an error (corrupt input)
  std::uint64_t         stopAfterOutput{ UINT64_MAX }; // stop (ChunkEnd::Boundary) at the first boundary past this
                                                        // much output, whatever block follows: the trial decode
  const std::atomic<bool> * cancel{ nullptr };    // when it turns true: an error at the next block boundary
  bool fixedOnlyIfFinal{ false }; // a non-final fixed-Huffman block is an error: the trial decode (ConfirmBlockStart)
};

/** Decodes `request`'s chunk, into the memory of `recycled` (a chunk done with: its pages are already mapped). */
InflatedChunk
InflateChunk(const ChunkRequest & request, InflatedChunk recycled = {});

/** Whether the blocks from `candidate` on decode, as real ones would, for 64 KiB of output and are followed by a valid
 * block header, or decode to a final block that ends the gzip member (its trailer ends the file or another member
 * follows it): the confirmation of a block start the search found (`data` is the DEFLATE stream, `size` counts to the
 * file's end). Fixed-Huffman blocks count only as the final block: arbitrary bytes decode as one too often (a stored
 * block's LEN read one byte early, 00 ff | ff 00, lands in the block's data, and noisy int16 data then passes as
 * fixed-Huffman blocks about one time in three), while zlib and libdeflate write them only for short blocks, which
 * end streams. A false start that passes all the same is found out when the chunk before does not stop on it. */
bool
ConfirmBlockStart(const unsigned char * data, std::size_t size, const BlockBoundary & candidate);

} // namespace inflate
} // namespace svdlr_io

#endif
