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
#include "SVDLowRankInflateTables.h"

#include <algorithm>

namespace svdlr_io
{
namespace inflate
{
namespace
{

constexpr unsigned kMaxCodeLength = 15;
constexpr unsigned kLitLenSymbols = 288;
constexpr unsigned kDistanceSymbols = 32;
constexpr unsigned kMostLitLenCodes = 286; // what a header may name: 257 + 29
constexpr unsigned kMostDistanceCodes = 30;

constexpr Entry
MakeEntry(std::uint32_t kind, std::uint32_t value, unsigned extra, unsigned length)
{
  return (value << 16) | (kind << 8) | (extra << 4) | length;
}

// RFC 1951 3.2.5: the base and extra bits of length symbols 257..285 and distance symbols 0..29.
constexpr std::array<std::uint16_t, 29> kLengthBase = { 3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                                        31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258 };
constexpr std::array<std::uint8_t, 29>  kLengthExtra = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                                         2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 };
constexpr std::array<std::uint16_t, 30> kDistanceBase = { 1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                                          33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                                          1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385,
                                                          24577 };
constexpr std::array<std::uint8_t, 30>  kDistanceExtra = { 0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                                           6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13 };

/** What a literal/length symbol decodes to, before its code length is known. */
Entry
LitLenSymbolEntry(unsigned symbol)
{
  if (symbol < 256)
  {
    return MakeEntry(kLiteral, symbol, 0, 0);
  }
  if (symbol == 256)
  {
    return MakeEntry(kEndOfBlock, 0, 0, 0);
  }
  if (symbol < 286)
  {
    return MakeEntry(kLengthOrDistance, kLengthBase[symbol - 257], kLengthExtra[symbol - 257], 0);
  }
  return MakeEntry(kInvalidSymbol, 0, 0, 0); // 286 and 287: only the fixed code has them, and they are errors
}

Entry
DistanceSymbolEntry(unsigned symbol)
{
  return symbol < 30 ? MakeEntry(kLengthOrDistance, kDistanceBase[symbol], kDistanceExtra[symbol], 0)
                     : MakeEntry(kInvalidSymbol, 0, 0, 0);
}

Entry
PrecodeSymbolEntry(unsigned symbol)
{
  return MakeEntry(kLiteral, symbol, 0, 0);
}

unsigned
Reversed(unsigned code, unsigned length)
{
  unsigned reversed = 0;
  for (unsigned i = 0; i < length; ++i)
  {
    reversed = (reversed << 1) | ((code >> i) & 1u);
  }
  return reversed;
}

/** Builds the decode table of the canonical Huffman code of `lengths` (RFC 1951 3.2.2): a primary table indexed by
 * the next `tableBits` bits (codes are sent from their first bit, so indices are bit-reversed codes), and a subtable
 * per primary entry whose codes are longer. False unless the code is complete (zlib and libdeflate write only complete
 * codes; an incomplete or over-subscribed one sends the caller back to libdeflate) or when `capacity` is short. */
template <typename SymbolEntry>
bool
BuildTable(const std::uint8_t * lengths,
           unsigned             symbols,
           unsigned             tableBits,
           SymbolEntry          symbolEntry,
           Entry *              table,
           std::size_t          capacity)
{
  std::array<unsigned, kMaxCodeLength + 1> count{};
  for (unsigned s = 0; s < symbols; ++s)
  {
    ++count[lengths[s]];
  }
  count[0] = 0;
  int left = 1; // the code space not yet taken, in units of the current length
  for (unsigned length = 1; length <= kMaxCodeLength; ++length)
  {
    left = 2 * left - static_cast<int>(count[length]);
    if (left < 0)
    {
      return false; // over-subscribed
    }
  }
  if (left != 0)
  {
    return false; // incomplete, or no code at all
  }
  std::array<unsigned, kMaxCodeLength + 2> next{};
  for (unsigned length = 1; length <= kMaxCodeLength; ++length)
  {
    next[length + 1] = (next[length] + count[length]) << 1;
  }
  const unsigned primary = 1u << tableBits;
  // Each primary entry with longer codes below it gets a subtable as deep as its longest code.
  std::array<std::uint8_t, 1u << kLitLenTableBits> deepest; // [0, primary) zeroed below
  std::array<unsigned, kLitLenSymbols>             codes{};
  std::fill(deepest.begin(), deepest.begin() + primary, std::uint8_t{ 0 });
  for (unsigned s = 0; s < symbols; ++s)
  {
    const unsigned length = lengths[s];
    if (length == 0)
    {
      continue;
    }
    codes[s] = Reversed(next[length]++, length);
    if (length > tableBits)
    {
      std::uint8_t & d = deepest[codes[s] & (primary - 1)];
      d = static_cast<std::uint8_t>(std::max<unsigned>(d, length - tableBits));
    }
  }
  std::size_t used = primary;
  for (unsigned p = 0; p < primary; ++p)
  {
    if (deepest[p] != 0)
    {
      if (used + (std::size_t{ 1 } << deepest[p]) > capacity)
      {
        return false; // cannot happen with a complete code (the capacities say why)
      }
      table[p] = MakeEntry(kSubtable, static_cast<std::uint32_t>(used), deepest[p], 0);
      used += std::size_t{ 1 } << deepest[p];
    }
  }
  for (unsigned s = 0; s < symbols; ++s)
  {
    const unsigned length = lengths[s];
    if (length == 0)
    {
      continue;
    }
    if (length <= tableBits)
    {
      const Entry e = symbolEntry(s) | length;
      for (unsigned i = codes[s]; i < primary; i += 1u << length)
      {
        table[i] = e;
      }
      continue;
    }
    const Entry    sub = table[codes[s] & (primary - 1)];
    const unsigned rest = length - tableBits, subBits = ExtraBits(sub);
    const Entry    e = symbolEntry(s) | rest;
    for (unsigned i = codes[s] >> tableBits; i < (1u << subBits); i += 1u << rest)
    {
      table[ValueOf(sub) + i] = e;
    }
  }
  return true;
}

bool
BuildBlockTables(const std::uint8_t * lengths, unsigned litlenCount, unsigned distanceCount, BlockTables & tables)
{
  return lengths[256] != 0 &&
         BuildTable(lengths, litlenCount, kLitLenTableBits, LitLenSymbolEntry, tables.litlen.data(),
                    tables.litlen.size()) &&
         BuildTable(lengths + litlenCount, distanceCount, kDistanceTableBits, DistanceSymbolEntry,
                    tables.distance.data(), tables.distance.size());
}

} // namespace

const BlockTables &
FixedTables()
{
  static const BlockTables fixed = [] {
    BlockTables                                              tables;
    std::array<std::uint8_t, kLitLenSymbols + kDistanceSymbols> lengths{};
    for (unsigned s = 0; s < kLitLenSymbols; ++s)
    {
      lengths[s] = s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8;
    }
    for (unsigned s = 0; s < kDistanceSymbols; ++s)
    {
      lengths[kLitLenSymbols + s] = 5;
    }
    // Complete by construction: 288 and 32 symbols, the invalid ones (286, 287, 30, 31) among them.
    BuildTable(lengths.data(), kLitLenSymbols, kLitLenTableBits, LitLenSymbolEntry, tables.litlen.data(),
               tables.litlen.size());
    BuildTable(lengths.data() + kLitLenSymbols, kDistanceSymbols, kDistanceTableBits, DistanceSymbolEntry,
               tables.distance.data(), tables.distance.size());
    return tables;
  }();
  return fixed;
}

bool
ReadDynamicHeader(BitReader & in, BlockTables & tables)
{
  in.Refill();
  const unsigned litlenCount = 257 + in.Take(5);
  const unsigned distanceCount = 1 + in.Take(5);
  const unsigned precodeCount = 4 + in.Take(4);
  if (litlenCount > kMostLitLenCodes || distanceCount > kMostDistanceCodes)
  {
    return false;
  }
  static constexpr std::array<std::uint8_t, 19> kPrecodeOrder = { 16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                                                  11, 4,  12, 3, 13, 2, 14, 1, 15 };
  std::array<std::uint8_t, 19> precodeLengths{};
  for (unsigned i = 0; i < precodeCount; ++i)
  {
    in.Refill(); // 19 lengths of 3 bits are more than one refill holds
    precodeLengths[kPrecodeOrder[i]] = static_cast<std::uint8_t>(in.Take(3));
  }
  std::array<Entry, 1u << kPrecodeTableBits> precode{};
  if (!BuildTable(precodeLengths.data(), 19, kPrecodeTableBits, PrecodeSymbolEntry, precode.data(), precode.size()))
  {
    return false;
  }
  std::array<std::uint8_t, kMostLitLenCodes + kMostDistanceCodes> lengths{};
  const unsigned                                                  total = litlenCount + distanceCount;
  for (unsigned i = 0; i < total;)
  {
    in.Refill();
    const Entry e = precode[in.Peek() & ((1u << kPrecodeTableBits) - 1)];
    in.Drop(CodeLength(e));
    const unsigned symbol = ValueOf(e);
    if (symbol < 16)
    {
      lengths[i++] = static_cast<std::uint8_t>(symbol);
      continue;
    }
    unsigned     repeat = 0;
    std::uint8_t value = 0;
    if (symbol == 16)
    {
      if (i == 0)
      {
        return false; // nothing to repeat
      }
      value = lengths[i - 1];
      repeat = 3 + in.Take(2);
    }
    else if (symbol == 17)
    {
      repeat = 3 + in.Take(3);
    }
    else
    {
      repeat = 11 + in.Take(7);
    }
    if (i + repeat > total)
    {
      return false;
    }
    for (unsigned k = 0; k < repeat; ++k)
    {
      lengths[i++] = value;
    }
  }
  if (in.Overrun())
  {
    return false;
  }
  return BuildBlockTables(lengths.data(), litlenCount, distanceCount, tables);
}

bool
LooksLikeStoredLength(const unsigned char * data, std::size_t size, std::uint64_t byte)
{
  if (byte == 0 || byte + 4 > size || (data[byte - 1] & 0xe0) != 0)
  {
    return false;
  }
  const unsigned length = data[byte] | (data[byte + 1] << 8);
  const unsigned check = data[byte + 2] | (data[byte + 3] << 8);
  return (length ^ check) == 0xffff;
}

std::uint64_t
BitsAt(const unsigned char * data, std::size_t size, std::uint64_t bit)
{
  const std::uint64_t byte = bit / 8;
  std::uint64_t       word = 0;
  if (byte + 8 <= size)
  {
    std::memcpy(&word, data + byte, 8);
  }
  else
  {
    for (std::uint64_t i = 0; byte + i < size && i < 8; ++i)
    {
      word |= std::uint64_t{ data[byte + i] } << (8 * i);
    }
  }
  return word >> (bit % 8);
}

bool
LooksLikeDynamicHeader(const unsigned char * data, std::size_t size, std::uint64_t bit, BlockTables & scratch)
{
  if (bit + 17 > std::uint64_t{ size } * 8)
  {
    return false;
  }
  // The cheap tests first, on every bit offset the search tries: BFINAL 0 and BTYPE 10 (binary 100 in stream order),
  // the counts, then the Kraft sum of the precode (complete: 2^-length summing to 1); only the few offsets that pass
  // read the code lengths and build tables.
  const std::uint64_t first = BitsAt(data, size, bit);
  if ((first & 7u) != 4u || ((first >> 3) & 31u) > 29 || ((first >> 8) & 31u) > 29)
  {
    return false;
  }
  const unsigned      precodeCount = 4 + static_cast<unsigned>((first >> 13) & 15u);
  std::uint64_t       lengths = BitsAt(data, size, bit + 17); // 18 lengths and more
  unsigned            kraft = 0; // in units of 2^-7
  for (unsigned i = 0; i < precodeCount; ++i)
  {
    if (i == 18)
    {
      lengths = BitsAt(data, size, bit + 17 + 3 * 18);
    }
    const unsigned length = static_cast<unsigned>(lengths & 7u);
    lengths >>= 3;
    kraft += length != 0 ? 128u >> length : 0u;
  }
  if (kraft != 128)
  {
    return false;
  }
  BitReader in(data, size, bit + 3);
  return ReadDynamicHeader(in, scratch);
}

} // namespace inflate
} // namespace svdlr_io
