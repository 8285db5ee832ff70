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
#include "SVDLowRankInflateChunk.h"

#include "SVDLowRankGzip.h"
#include "SVDLowRankInflateTables.h"

#include <algorithm>
#include <cstring>

namespace svdlr_io
{
namespace inflate
{
namespace
{

/** Room kept free past the output's end: a longest match (258) written 8 bytes at a time. */
constexpr std::size_t kSlack = 258 + 16;
constexpr std::uint64_t kLitLenMask = (1u << kLitLenTableBits) - 1;

/** The decoder of one chunk: its output goes 16 bits wide into `symbols` while back-references may reach the unknown
 * window (or its markers), then into `bytes`. */
class ChunkInflater
{
public:
  ChunkInflater(const ChunkRequest & request, InflatedChunk recycled)
    : m_Request(request)
    , m_In(request.data, request.size, request.start.bit)
    , m_Chunk(std::move(recycled))
  {
    m_Chunk.symbols.clear();
    m_Chunk.bytes.clear();
    m_Chunk.bytesWindow = 0;
  }

  InflatedChunk
  Run();

private:
  template <typename T>
  bool
  HuffmanBlock(const BlockTables & tables, RawVector<T> & out, std::size_t & pos);
  template <typename T>
  bool
  StoredBlock(RawVector<T> & out, std::size_t & pos);
  template <typename T>
  bool
  Grow(RawVector<T> & out, std::size_t pos);
  template <typename T>
  bool
  CopyMatch(T * out, std::size_t pos, std::size_t distance, std::size_t length);
  /** The stop rule: whether the block header at the reader is one the block-start search would accept. */
  bool
  StopsHere(std::uint64_t headerBit, std::uint32_t header, BlockBoundary & where);
  std::uint64_t
  Produced() const
  {
    return m_SymbolsUsed + (m_BytesUsed - m_Chunk.bytesWindow);
  }
  void
  NarrowToBytes();

  const ChunkRequest & m_Request;
  BitReader            m_In;
  InflatedChunk        m_Chunk;
  BlockTables          m_Tables;
  std::size_t          m_SymbolsUsed{ 0 };
  std::size_t          m_BytesUsed{ 0 };
  std::size_t          m_LastMarkerEnd{ 0 }; // in `symbols`: one past the last marker written
  bool                 m_Wide{ false };
};

template <typename T>
bool
ChunkInflater::Grow(RawVector<T> & out, std::size_t pos)
{
  if (Produced() > m_Request.mostOutput || m_In.Overrun())
  {
    return false;
  }
  out.resize(std::max<std::size_t>(2 * out.size(), pos + kSlack + 4096));
  return true;
}

template <typename T>
bool
ChunkInflater::CopyMatch(T * out, std::size_t pos, std::size_t distance, std::size_t length)
{
  T * to = out + pos;
  if (distance <= pos)
  {
    const T *             from = to - distance;
    constexpr std::size_t perWord = 8 / sizeof(T);
    if (distance >= perWord)
    {
      // Eight bytes at a time, past `length` into the slack: each word is read before the words it could overlap
      // are written.
      for (std::size_t i = 0; i < length; i += perWord)
      {
        std::memcpy(to + i, from + i, 8);
      }
    }
    else if (distance == 1)
    {
      std::fill(to, to + length, from[0]);
    }
    else
    {
      for (std::size_t i = 0; i < length; ++i)
      {
        to[i] = from[i];
      }
    }
    if (sizeof(T) == 2 && pos - distance < m_LastMarkerEnd)
    {
      // The source may hold markers: the last one copied is the new last marker.
      for (std::size_t i = length; i > 0; --i)
      {
        if (to[i - 1] >= kMarkerBase)
        {
          m_LastMarkerEnd = std::max(m_LastMarkerEnd, pos + i);
          break;
        }
      }
    }
    return true;
  }
  if (sizeof(T) != 2 || distance > pos + kWindowBytes)
  {
    return false; // before the stream's start, or past the 32 KiB window
  }
  // Into the unknown window: markers for the bytes before the chunk, copies after.
  for (std::size_t i = 0; i < length; ++i)
  {
    const std::size_t back = pos + i; // how far into the chunk this byte is
    to[i] = back >= distance ? out[back - distance]
                             : static_cast<T>(kMarkerBase + (kWindowBytes - (distance - back)));
  }
  m_LastMarkerEnd = pos + length;
  return true;
}

template <typename T>
bool
ChunkInflater::HuffmanBlock(const BlockTables & tables, RawVector<T> & out, std::size_t & pos)
{
  // The reader and the output position in locals: bytes written through `o` may alias any member, so that kept in
  // members they would be stored and loaded again around every literal.
  BitReader   in = m_In;
  std::size_t at = pos;
  T *         o = out.data();
  std::size_t room = out.size();
  const auto  finish = [&](bool ok) {
    m_In = in;
    pos = at;
    return ok;
  };
  for (;;)
  {
    if (room - at < kSlack)
    {
      finish(true);
      if (!Grow(out, at))
      {
        return false;
      }
      o = out.data();
      room = out.size();
    }
    // 56 bits hold a literal/length code (15), its extra bits (5), a distance code (15) and its extra bits (13), or
    // three literals (45): noisy images are mostly literals, decoded here without a refill between them.
    in.Refill();
    const std::uint64_t bits = in.Peek();
    Entry               e = tables.litlen[bits & kLitLenMask];
    if (KindOf(e) == kLiteral)
    {
      unsigned taken = CodeLength(e);
      o[at++] = static_cast<T>(ValueOf(e));
      e = tables.litlen[(bits >> taken) & kLitLenMask];
      if (KindOf(e) == kLiteral)
      {
        o[at++] = static_cast<T>(ValueOf(e));
        taken += CodeLength(e);
        e = tables.litlen[(bits >> taken) & kLitLenMask];
        if (KindOf(e) == kLiteral)
        {
          o[at++] = static_cast<T>(ValueOf(e));
          taken += CodeLength(e);
        }
      }
      in.Drop(taken);
      continue;
    }
    unsigned used = 0;
    e = Lookup(tables.litlen.data(), kLitLenTableBits, bits, used);
    in.Drop(used);
    const std::uint32_t kind = KindOf(e);
    if (kind == kLiteral)
    {
      o[at++] = static_cast<T>(ValueOf(e)); // a literal of a code longer than the primary table
      continue;
    }
    if (kind != kLengthOrDistance)
    {
      return finish(kind == kEndOfBlock && !in.Overrun());
    }
    const std::size_t length = ValueOf(e) + in.Take(ExtraBits(e));
    e = Lookup(tables.distance.data(), kDistanceTableBits, in.Peek(), used);
    in.Drop(used);
    if (KindOf(e) != kLengthOrDistance)
    {
      return finish(false);
    }
    const std::size_t distance = ValueOf(e) + in.Take(ExtraBits(e));
    if (!CopyMatch(o, at, distance, length) || in.Overrun())
    {
      return finish(false);
    }
    at += length;
  }
}

template <typename T>
bool
ChunkInflater::StoredBlock(RawVector<T> & out, std::size_t & pos)
{
  m_In.AlignToByte();
  const std::uint64_t byte = m_In.Position() / 8;
  const unsigned char * data = m_Request.data;
  if (byte + 4 > m_Request.size)
  {
    return false;
  }
  const std::size_t length = data[byte] | (data[byte + 1] << 8);
  const unsigned    check = data[byte + 2] | (data[byte + 3] << 8);
  if ((length ^ check) != 0xffff || byte + 4 + length > m_Request.size)
  {
    return false;
  }
  while (out.size() - pos < length + kSlack)
  {
    if (!Grow(out, pos))
    {
      return false;
    }
  }
  std::copy(data + byte + 4, data + byte + 4 + length, out.data() + pos);
  pos += length;
  m_In.JumpToByte(byte + 4 + length);
  return true;
}

bool
ChunkInflater::StopsHere(std::uint64_t headerBit, std::uint32_t header, BlockBoundary & where)
{
  if ((header & 1u) != 0)
  {
    return false; // the search looks for non-final blocks only
  }
  if ((header >> 1) == 2 && headerBit >= m_Request.stopFrom &&
      LooksLikeDynamicHeader(m_Request.data, m_Request.size, headerBit, m_Tables))
  {
    where = { headerBit, false };
    return true;
  }
  const std::uint64_t lengthByte = (headerBit + 3 + 7) / 8;
  if ((header >> 1) == 0 && lengthByte * 8 >= m_Request.stopFrom &&
      LooksLikeStoredLength(m_Request.data, m_Request.size, lengthByte))
  {
    where = { lengthByte * 8, true };
    return true;
  }
  return false;
}

void
ChunkInflater::NarrowToBytes()
{
  // The last 32 KiB hold no marker: they become the byte output's window, and the rest goes out as bytes.
  m_Chunk.bytes.resize(
    std::max({ m_Chunk.bytes.capacity(), kWindowBytes + kSlack + 4096, 2 * m_SymbolsUsed }));
  std::copy(m_Chunk.symbols.data() + m_SymbolsUsed - kWindowBytes, m_Chunk.symbols.data() + m_SymbolsUsed,
            m_Chunk.bytes.data());
  m_Chunk.bytesWindow = kWindowBytes;
  m_BytesUsed = kWindowBytes;
  m_Wide = false;
}

InflatedChunk
ChunkInflater::Run()
{
  const ChunkRequest & r = m_Request;
  m_Chunk.start = r.start;
  m_Chunk.stop = r.start;
  if (r.start.bit >= r.stopFrom)
  {
    m_Chunk.end = ChunkEnd::Boundary; // the chunk before reached past this one's range: nothing left to decode
    return std::move(m_Chunk);
  }
  m_Wide = !r.windowKnown;
  const std::size_t guess = r.stopFrom == UINT64_MAX ? std::size_t{ 1 } << 16
                                                     : static_cast<std::size_t>((r.stopFrom - r.start.bit) / 4);
  // At least the room the recycled chunk had (uninitialized, so resizing within it costs nothing).
  if (m_Wide)
  {
    m_Chunk.symbols.resize(
      std::max(m_Chunk.symbols.capacity(), std::min<std::size_t>(guess, std::size_t{ 1 } << 20) + kSlack));
  }
  else
  {
    const std::size_t window = std::min(r.windowSize, kWindowBytes);
    m_Chunk.bytes.resize(std::max(m_Chunk.bytes.capacity(), window + guess + kSlack));
    std::copy(r.window + (r.windowSize - window), r.window + r.windowSize, m_Chunk.bytes.data());
    m_Chunk.bytesWindow = window;
    m_BytesUsed = window;
  }
  bool ok = true;
  for (std::size_t blocks = 0; ok; ++blocks)
  {
    bool final = false;
    if (blocks == 0 && r.start.storedLength)
    {
      ok = m_Wide ? StoredBlock(m_Chunk.symbols, m_SymbolsUsed) : StoredBlock(m_Chunk.bytes, m_BytesUsed);
    }
    else
    {
      const std::uint64_t headerBit = m_In.Position();
      if (blocks > 0 && Produced() >= r.stopAfterOutput)
      {
        m_Chunk.end = ChunkEnd::Boundary;
        m_Chunk.stop = { headerBit, false };
        break;
      }
      m_In.Refill();
      const std::uint32_t header = m_In.Peek() & 7u;
      if (blocks > 0 && StopsHere(headerBit, header, m_Chunk.stop))
      {
        m_Chunk.end = ChunkEnd::Boundary;
        break;
      }
      m_In.Drop(3);
      final = (header & 1u) != 0;
      switch (header >> 1)
      {
        case 0:
          ok = m_Wide ? StoredBlock(m_Chunk.symbols, m_SymbolsUsed) : StoredBlock(m_Chunk.bytes, m_BytesUsed);
          break;
        case 1:
          ok = (final || !r.fixedOnlyIfFinal) &&
               (m_Wide ? HuffmanBlock(FixedTables(), m_Chunk.symbols, m_SymbolsUsed)
                       : HuffmanBlock(FixedTables(), m_Chunk.bytes, m_BytesUsed));
          break;
        case 2:
          ok = ReadDynamicHeader(m_In, m_Tables) &&
               (m_Wide ? HuffmanBlock(m_Tables, m_Chunk.symbols, m_SymbolsUsed)
                       : HuffmanBlock(m_Tables, m_Chunk.bytes, m_BytesUsed));
          break;
        default:
          ok = false;
      }
    }
    if (!ok || m_In.Overrun() || Produced() > r.mostOutput || (r.cancel != nullptr && r.cancel->load()))
    {
      ok = false;
      break;
    }
    if (final)
    {
      m_In.AlignToByte();
      m_Chunk.end = ChunkEnd::StreamEnd;
      m_Chunk.stop = { m_In.Position(), false };
      break;
    }
    if (m_Wide && m_SymbolsUsed >= kWindowBytes && m_SymbolsUsed - m_LastMarkerEnd >= kWindowBytes)
    {
      NarrowToBytes();
    }
  }
  if (!ok)
  {
    m_Chunk.end = ChunkEnd::Error;
  }
  m_Chunk.symbols.resize(m_SymbolsUsed);
  m_Chunk.bytes.resize(m_BytesUsed);
  return std::move(m_Chunk);
}

} // namespace

InflatedChunk
InflateChunk(const ChunkRequest & request, InflatedChunk recycled)
{
  ChunkInflater inflater(request, std::move(recycled));
  return inflater.Run();
}

namespace
{

/** Whether a DEFLATE stream that ends at `end` (bytes) ends its gzip member as a real one would: its trailer's 8 bytes
 * end the file or another member starts after them. A false block start in the middle of the data that happens to
 * decode to a final block does not. */
bool
EndsTheMember(const unsigned char * data, std::size_t size, std::uint64_t end)
{
  return end + 8 == size || (end + 8 < size && StartsGzipMember(data + end + 8, size - (end + 8)));
}

/** The trial decode from `start`: `stopAfterOutput` bytes and on to the next boundary, or to the stream's end. */
InflatedChunk
Trial(const unsigned char * data, std::size_t size, const BlockBoundary & start, std::uint64_t stopAfterOutput)
{
  ChunkRequest trial;
  trial.data = data;
  trial.size = size;
  trial.start = start;
  trial.windowKnown = false;
  trial.stopAfterOutput = stopAfterOutput;
  trial.fixedOnlyIfFinal = true;
  trial.mostOutput = std::size_t{ 16 } << 20; // past a block this large the search would only move on to the next
  return InflateChunk(trial);
}

} // namespace

bool
ConfirmBlockStart(const unsigned char * data, std::size_t size, const BlockBoundary & candidate)
{
  const InflatedChunk block = Trial(data, size, candidate, 64 << 10);
  if (block.end != ChunkEnd::Boundary)
  {
    return block.end == ChunkEnd::StreamEnd && EndsTheMember(data, size, block.stop.bit / 8);
  }
  // The next header must be one a decoder takes: a non-final stored block's LEN and NLEN agreeing, a non-final
  // dynamic block's codes complete, or a final block of any type that ends the member.
  BitReader           in(data, size, block.stop.bit);
  const std::uint32_t header = in.Take(3);
  if ((header & 1u) != 0)
  {
    const InflatedChunk last = Trial(data, size, block.stop, UINT64_MAX);
    return last.end == ChunkEnd::StreamEnd && EndsTheMember(data, size, last.stop.bit / 8);
  }
  switch (header >> 1)
  {
    case 0:
    {
      in.AlignToByte();
      const std::uint64_t byte = in.Position() / 8;
      return byte + 4 <= size && ((data[byte] | (data[byte + 1] << 8)) ^ (data[byte + 2] | (data[byte + 3] << 8))) ==
                                   0xffff;
    }
    case 2:
    {
      BlockTables tables;
      return ReadDynamicHeader(in, tables);
    }
    default:
      return false; // 11, or a non-final fixed-Huffman block (ConfirmBlockStart's comment says why)
  }
}

} // namespace inflate
} // namespace svdlr_io
