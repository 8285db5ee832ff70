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

#include "SVDLowRankSha256.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#  define SVDLR_SHA256_X86 1
#  include <cpuid.h>
#  include <immintrin.h>
#endif

namespace svdlr_tools
{
namespace
{

// The round constants of FIPS 180-4 §4.2.2, in round order (both compressions read them).
alignas(16) constexpr std::uint32_t kRoundConstants[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
};

// The initial hash value of FIPS 180-4 §5.3.3.
constexpr std::array<std::uint32_t, 8> kInitialState{ { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f,
                                                        0x9b05688c, 0x1f83d9ab, 0x5be0cd19 } };

inline std::uint32_t
RotateRight(std::uint32_t x, int n)
{
  return (x >> n) | (x << (32 - n));
}

inline std::uint32_t
LoadBigEndian(const unsigned char * bytes)
{
  return (std::uint32_t(bytes[0]) << 24) | (std::uint32_t(bytes[1]) << 16) | (std::uint32_t(bytes[2]) << 8) |
         std::uint32_t(bytes[3]);
}

void
CompressPortable(std::uint32_t * state, const unsigned char * blocks, std::size_t count)
{
  for (; count > 0; --count, blocks += 64)
  {
    std::uint32_t w[64];
    for (int i = 0; i < 16; ++i)
    {
      w[i] = LoadBigEndian(blocks + 4 * i);
    }
    for (int i = 16; i < 64; ++i)
    {
      const std::uint32_t s0 = RotateRight(w[i - 15], 7) ^ RotateRight(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const std::uint32_t s1 = RotateRight(w[i - 2], 17) ^ RotateRight(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    std::uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    std::uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int i = 0; i < 64; ++i)
    {
      const std::uint32_t t1 = h + (RotateRight(e, 6) ^ RotateRight(e, 11) ^ RotateRight(e, 25)) +
                               ((e & f) ^ (~e & g)) + kRoundConstants[i] + w[i];
      const std::uint32_t t2 =
        (RotateRight(a, 2) ^ RotateRight(a, 13) ^ RotateRight(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
  }
}

#ifdef SVDLR_SHA256_X86
// The SHA extensions keep the eight working variables in two registers, as SHA256RNDS2 reads them: one holds A, B, E,
// F (A in the top 32 bits, F in the bottom), the other C, D, G, H. SHA256RNDS2 runs two rounds from both and the sum
// of the next two schedule words and round constants (bottom 64 bits of its third operand), and returns the new
// A, B, E, F; after two rounds the new C, D, G, H are the old A, B, E, F, so the registers just trade places.
// The schedule goes four words at a time, word i in the lowest lane: for a group of W[i..i+3] (i >= 16),
//   SHA256MSG1(W[i-16..i-13], W[i-12..i-9]) = W[i-16..i-13] + σ0(W[i-15..i-12]),
//   adding W[i-7..i-4] (PALIGNR of the two previous groups) gives everything but the σ1 terms, and
//   SHA256MSG2(that, W[i-4..i-1]) adds σ1(W[i-2..i+1]), the last two from the words it has just made.
// This function alone is compiled for these instructions; it runs only after CpuHasShaExtensions() said yes.
__attribute__((target("sha,sse4.1,ssse3"))) void
CompressWithShaExtensions(std::uint32_t * state, const unsigned char * blocks, std::size_t count)
{
  // Reverses the bytes of each 32-bit lane: the message words are big-endian.
  const __m128i bigEndianWords = _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
  __m128i abef = _mm_set_epi32(int(state[0]), int(state[1]), int(state[4]), int(state[5]));
  __m128i cdgh = _mm_set_epi32(int(state[2]), int(state[3]), int(state[6]), int(state[7]));
  for (; count > 0; --count, blocks += 64)
  {
    const __m128i abefBefore = abef, cdghBefore = cdgh;
    __m128i schedule[4]; // group g (words 4g..4g+3) in schedule[g % 4], replacing group g - 4
#  pragma GCC unroll 16
    for (int group = 0; group < 16; ++group)
    {
      __m128i & words = schedule[group % 4];
      if (group < 4)
      {
        words = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i *>(blocks + 16 * group)),
                                 bigEndianWords);
      }
      else
      {
        const __m128i & minus3 = schedule[(group + 1) % 4];
        const __m128i & minus2 = schedule[(group + 2) % 4];
        const __m128i & minus1 = schedule[(group + 3) % 4];
        const __m128i   minus7to4 = _mm_alignr_epi8(minus1, minus2, 4);
        words = _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(words, minus3), minus7to4), minus1);
      }
      const __m128i wordsPlusConstants =
        _mm_add_epi32(words, _mm_load_si128(reinterpret_cast<const __m128i *>(kRoundConstants + 4 * group)));
      const __m128i afterFirstTwo = _mm_sha256rnds2_epu32(cdgh, abef, wordsPlusConstants);
      cdgh = abef;
      abef = afterFirstTwo;
      const __m128i afterLastTwo = _mm_sha256rnds2_epu32(cdgh, abef, _mm_shuffle_epi32(wordsPlusConstants, 0x0e));
      cdgh = abef;
      abef = afterLastTwo;
    }
    abef = _mm_add_epi32(abef, abefBefore);
    cdgh = _mm_add_epi32(cdgh, cdghBefore);
  }
  alignas(16) std::uint32_t fab[4], hgdc[4]; // lanes from the bottom: F, E, B, A and H, G, D, C
  _mm_store_si128(reinterpret_cast<__m128i *>(fab), abef);
  _mm_store_si128(reinterpret_cast<__m128i *>(hgdc), cdgh);
  state[0] = fab[3];
  state[1] = fab[2];
  state[2] = hgdc[3];
  state[3] = hgdc[2];
  state[4] = fab[1];
  state[5] = fab[0];
  state[6] = hgdc[1];
  state[7] = hgdc[0];
}
#endif

} // namespace

bool
CpuHasShaExtensions()
{
#ifdef SVDLR_SHA256_X86
  // CPUID directly rather than __builtin_cpu_supports("sha"), which clang before 16 rejects (the fuzzers build with
  // clang). SHA: leaf 7 EBX bit 29; SSSE3 and SSE4.1: leaf 1 ECX bits 9 and 19.
  static const bool available = [] {
    unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
    {
      return false;
    }
    const bool ssse3AndSse41 = (ecx & (1u << 9)) != 0 && (ecx & (1u << 19)) != 0;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
    {
      return false;
    }
    return ssse3AndSse41 && (ebx & (1u << 29)) != 0;
  }();
  return available;
#else
  return false;
#endif
}

Sha256Compression
FastestSha256Compression()
{
  return CpuHasShaExtensions() ? Sha256Compression::ShaExtensions : Sha256Compression::Portable;
}

const char *
Sha256CompressionName(Sha256Compression compression)
{
  return compression == Sha256Compression::ShaExtensions ? "SHA extensions" : "portable";
}

Sha256::Sha256(Sha256Compression compression)
  : m_Compression(compression)
  , m_State(kInitialState)
{
  if (compression == Sha256Compression::ShaExtensions && !CpuHasShaExtensions())
  {
    throw std::invalid_argument("SHA-256: this CPU has no SHA extensions");
  }
}

void
Sha256::CompressBlocks(const unsigned char * blocks, std::size_t count)
{
#ifdef SVDLR_SHA256_X86
  if (m_Compression == Sha256Compression::ShaExtensions)
  {
    CompressWithShaExtensions(m_State.data(), blocks, count);
    return;
  }
#endif
  CompressPortable(m_State.data(), blocks, count);
}

void
Sha256::Add(const void * data, std::size_t size)
{
  const auto * bytes = static_cast<const unsigned char *>(data);
  m_Length += size;
  if (m_Filled > 0) // complete the block begun by an earlier call
  {
    const std::size_t take = std::min(size, m_Block.size() - m_Filled);
    std::memcpy(m_Block.data() + m_Filled, bytes, take);
    m_Filled += take;
    bytes += take;
    size -= take;
    if (m_Filled < m_Block.size())
    {
      return;
    }
    CompressBlocks(m_Block.data(), 1);
    m_Filled = 0;
  }
  const std::size_t wholeBlocks = size / m_Block.size();
  if (wholeBlocks > 0)
  {
    CompressBlocks(bytes, wholeBlocks); // straight from the caller's buffer
  }
  bytes += wholeBlocks * m_Block.size();
  size -= wholeBlocks * m_Block.size();
  if (size > 0)
  {
    std::memcpy(m_Block.data(), bytes, size);
  }
  m_Filled = size;
}

std::string
Sha256::Hex()
{
  // FIPS 180-4 §5.1.1: a 1 bit, zeros up to 56 bytes into a block, then the length in bits, big-endian.
  const std::uint64_t            bits = m_Length * 8;
  std::array<unsigned char, 72> padding{}; // at most 63 bytes of 0x80 and zeros, then 8 of length
  padding[0] = 0x80;
  const std::size_t zeros = (m_Filled < 56 ? 56 - m_Filled : 120 - m_Filled) - 1;
  for (int i = 0; i < 8; ++i)
  {
    padding[1 + zeros + i] = static_cast<unsigned char>(bits >> (56 - 8 * i));
  }
  Add(padding.data(), 1 + zeros + 8);
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string           hex;
  for (std::uint32_t word : m_State)
  {
    for (int shift = 28; shift >= 0; shift -= 4)
    {
      hex += kDigits[(word >> shift) & 0xf];
    }
  }
  return hex;
}

} // namespace svdlr_tools
