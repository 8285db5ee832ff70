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
#ifndef SVDLowRankSha256_h
#define SVDLowRankSha256_h

// SHA-256 (FIPS 180-4), fed in pieces: the sidecar names its inputs by content, so that a reader can tell whether a
// file is the one that was processed; no library the module already links offers it. The checksum runs beside the
// tool's own work and a fast GPU run waits for it, so it takes the x86 SHA extensions where the CPU has them
// (several times faster) and portable C++ elsewhere; both give the same digest, which the tests check.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace svdlr_tools
{

/** How the 64-byte blocks are compressed. */
enum class Sha256Compression
{
  Portable,     // plain C++, any CPU
  ShaExtensions // x86 SHA-NI (SHA256RNDS2, SHA256MSG1/2) with SSSE3 and SSE4.1
};

/** Whether this CPU (and build) can run Sha256Compression::ShaExtensions. */
bool
CpuHasShaExtensions();

/** The fastest compression this CPU runs: ShaExtensions where available, Portable otherwise. */
Sha256Compression
FastestSha256Compression();

/** "portable" or "SHA extensions", for messages and test output. */
const char *
Sha256CompressionName(Sha256Compression compression);

class Sha256
{
public:
  /** Throws std::invalid_argument when `compression` is ShaExtensions and the CPU lacks them. */
  explicit Sha256(Sha256Compression compression = FastestSha256Compression());

  /** Appends `size` bytes of the message. */
  void
  Add(const void * data, std::size_t size);

  /** Pads the message, and returns its digest as 64 lowercase hex digits; the object is spent afterwards. */
  std::string
  Hex();

  Sha256Compression
  Compression() const
  {
    return m_Compression;
  }

private:
  void
  CompressBlocks(const unsigned char * blocks, std::size_t count);

  Sha256Compression             m_Compression;
  std::array<std::uint32_t, 8>  m_State; // a..h
  std::array<unsigned char, 64> m_Block{};
  std::size_t                   m_Filled{ 0 };
  std::uint64_t                 m_Length{ 0 };
};

} // namespace svdlr_tools

#endif
