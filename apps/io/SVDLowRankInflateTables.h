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
#ifndef SVDLowRankInflateTables_h
#define SVDLowRankInflateTables_h

// The pieces of a DEFLATE (RFC 1951) decoder that the chunk decoder (SVDLowRankInflateChunk.h) and the block-start
// search of the parallel gunzip (SVDLowRankParallelGunzip.h) share: a bit reader that may start at any bit, the
// Huffman decode tables, and the reading of block headers. Stricter than the RFC on purpose: a code must be complete
// and a header may name at most 286 literal/length and 30 distance codes (what zlib and libdeflate write), so
// whatever this decoder accepts libdeflate accepts too; anything else sends the caller back to libdeflate.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace svdlr_io
{
namespace inflate
{

/** Bits of a byte stream, least significant first, from any bit on. Reads past the end give zero bits and are
 * counted, so that a decoder finds out it ran off the end by Overrun() and not by reading memory it does not own. */
class BitReader
{
public:
  BitReader(const unsigned char * data, std::size_t size, std::uint64_t bit)
    : m_Data(data)
    , m_Size(size)
    , m_Next(static_cast<std::size_t>(bit / 8))
  {
    Refill();
    Drop(static_cast<unsigned>(bit % 8));
  }

  /** At least 56 bits in the buffer afterwards. */
  void
  Refill()
  {
    if (m_Next + 8 <= m_Size)
    {
      // Eight bytes at once; the bytes that do not fit are read again next time (the bits above m_Count are those
      // same bytes, so OR-ing them again changes nothing).
      std::uint64_t word;
      std::memcpy(&word, m_Data + m_Next, 8);
      m_Buffer |= word << m_Count;
      m_Next += (63 - m_Count) >> 3;
      m_Count |= 56;
      return;
    }
    while (m_Count <= 56)
    {
      const std::uint64_t byte = m_Next < m_Size ? m_Data[m_Next] : 0;
      m_Buffer |= byte << m_Count;
      ++m_Next;
      m_Count += 8;
    }
  }

  std::uint64_t
  Peek() const
  {
    return m_Buffer;
  }
  void
  Drop(unsigned bits)
  {
    m_Buffer >>= bits;
    m_Count -= bits;
  }
  /** The next `bits` bits (at most 32; Refill first). */
  std::uint32_t
  Take(unsigned bits)
  {
    const auto value = static_cast<std::uint32_t>(m_Buffer & ((std::uint64_t{ 1 } << bits) - 1));
    Drop(bits);
    return value;
  }
  /** The bit the reader stands on. */
  std::uint64_t
  Position() const
  {
    return std::uint64_t{ m_Next } * 8 - m_Count;
  }
  bool
  Overrun() const
  {
    return Position() > std::uint64_t{ m_Size } * 8;
  }
  void
  AlignToByte()
  {
    Drop(m_Count & 7);
  }
  /** Moves to a byte (the reader must stand on a byte boundary or be moved forward): what stored blocks need. */
  void
  JumpToByte(std::uint64_t byte)
  {
    m_Next = static_cast<std::size_t>(byte);
    m_Buffer = 0;
    m_Count = 0;
    Refill();
  }
  const unsigned char *
  Data() const
  {
    return m_Data;
  }
  std::size_t
  Size() const
  {
    return m_Size;
  }

private:
  const unsigned char * m_Data;
  std::size_t           m_Size;
  std::size_t           m_Next;
  std::uint64_t         m_Buffer{ 0 };
  unsigned              m_Count{ 0 };
};

/** A decode-table entry: bits 0-3 the code's length (what to drop), 4-7 the extra bits that follow (a length's or a
 * distance's) or a subtable's index bits, 8-10 the kind, 16-31 the value (a literal byte, a base length or distance,
 * a subtable's first entry). */
using Entry = std::uint32_t;
enum EntryKind : std::uint32_t
{
  kLiteral = 0,
  kLengthOrDistance = 1,
  kEndOfBlock = 2,
  kSubtable = 3,
  kInvalidSymbol = 4
};
inline unsigned
CodeLength(Entry e)
{
  return e & 15u;
}
inline unsigned
ExtraBits(Entry e)
{
  return (e >> 4) & 15u;
}
inline std::uint32_t
KindOf(Entry e)
{
  return (e >> 8) & 7u;
}
inline std::uint32_t
ValueOf(Entry e)
{
  return e >> 16;
}

constexpr unsigned kLitLenTableBits = 11;
constexpr unsigned kDistanceTableBits = 8;
constexpr unsigned kPrecodeTableBits = 7;
// The primary table, then room for every subtable a complete code can need (each subtable of 2^k entries takes at
// least k + 1 symbols of the alphabet).
constexpr std::size_t kLitLenTableSize = (std::size_t{ 1 } << kLitLenTableBits) + 1024;
constexpr std::size_t kDistanceTableSize = (std::size_t{ 1 } << kDistanceTableBits) + 512;

/** The literal/length and distance tables of one block. */
struct BlockTables
{
  std::array<Entry, kLitLenTableSize>   litlen{};
  std::array<Entry, kDistanceTableSize> distance{};
};

/** The entry for the next code in `bits`, subtables followed, with the bits it takes in `used`. */
inline Entry
Lookup(const Entry * table, unsigned tableBits, std::uint64_t bits, unsigned & used)
{
  Entry e = table[bits & ((1u << tableBits) - 1)];
  used = 0;
  if (KindOf(e) == kSubtable)
  {
    used = tableBits;
    e = table[ValueOf(e) + ((bits >> tableBits) & ((1u << ExtraBits(e)) - 1))];
  }
  used += CodeLength(e);
  return e;
}

/** The tables of fixed-Huffman blocks (BTYPE 01), built once. */
const BlockTables &
FixedTables();

/** Reads a dynamic block's code lengths (after BFINAL and BTYPE) and builds `tables`; false when the header is
 * invalid, names more than 286/30 codes, or gives an incomplete or over-subscribed code, or the input ends. */
bool
ReadDynamicHeader(BitReader & in, BlockTables & tables);

/** Whether the byte before `byte` ends as a stored block header followed by zero padding would (its top 3 bits zero)
 * and LEN and NLEN at `byte` agree: what a non-final stored block looks like where its length starts. */
bool
LooksLikeStoredLength(const unsigned char * data, std::size_t size, std::uint64_t byte);

/** At least 56 bits of `data` from `bit` on (zeros past the end): what the block-start search tests first. */
std::uint64_t
BitsAt(const unsigned char * data, std::size_t size, std::uint64_t bit);

/** Whether a non-final dynamic block with a valid and complete header starts at `bit`. */
bool
LooksLikeDynamicHeader(const unsigned char * data, std::size_t size, std::uint64_t bit, BlockTables & scratch);

} // namespace inflate
} // namespace svdlr_io

#endif
