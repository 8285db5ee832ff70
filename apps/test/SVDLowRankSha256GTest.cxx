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
// SHA-256 of the provenance sidecar (SVDLowRankSha256.h): the example vectors of FIPS 180-4 through each compression
// this CPU runs, and the SHA-extensions compression against the portable one on random messages of many lengths.
#include "SVDLowRankProvenance.h"
#include "SVDLowRankSha256.h"
#include "svdlrTestSeed.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

namespace
{
using svdlr_tools::Sha256;
using svdlr_tools::Sha256Compression;

// The examples of FIPS 180-4 (NIST's "SHA256.pdf", "SHA2_Additional.pdf") and the digest of the empty message.
constexpr const char * kEmptyDigest = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr const char * kAbcDigest = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
constexpr const char * kTwoBlockMessage = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"; // 448 bits
constexpr const char * kTwoBlockDigest = "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";
constexpr const char * kMillionADigest = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";

std::string
Digest(Sha256Compression compression, const std::string & message)
{
  Sha256 hash(compression);
  hash.Add(message.data(), message.size());
  return hash.Hex();
}

/** The compressions this CPU runs: the portable one always, the SHA extensions where present. */
std::vector<Sha256Compression>
AvailableCompressions()
{
  std::vector<Sha256Compression> available{ Sha256Compression::Portable };
  if (svdlr_tools::CpuHasShaExtensions())
  {
    available.push_back(Sha256Compression::ShaExtensions);
  }
  return available;
}

TEST(ProvenanceSha256, FipsExampleVectors)
{
  for (const Sha256Compression compression : AvailableCompressions())
  {
    SCOPED_TRACE(svdlr_tools::Sha256CompressionName(compression));
    std::cout << "[ compression ] " << svdlr_tools::Sha256CompressionName(compression) << std::endl;
    EXPECT_EQ(Digest(compression, ""), kEmptyDigest);
    EXPECT_EQ(Digest(compression, "abc"), kAbcDigest);
    EXPECT_EQ(Digest(compression, kTwoBlockMessage), kTwoBlockDigest);
    EXPECT_EQ(Digest(compression, std::string(1000000, 'a')), kMillionADigest);
  }
}

TEST(ProvenanceSha256, MillionAInPiecesOfEverySizeGivesTheSameDigest)
{
  // Pieces of 1..127 bytes cross the 64-byte blocks at every offset, through the partial-block path of Add.
  for (const Sha256Compression compression : AvailableCompressions())
  {
    SCOPED_TRACE(svdlr_tools::Sha256CompressionName(compression));
    const std::string message(1000000, 'a');
    Sha256            hash(compression);
    std::size_t       piece = 1;
    for (std::size_t offset = 0; offset < message.size(); offset += piece, piece = piece % 127 + 1)
    {
      hash.Add(message.data() + offset, std::min(piece, message.size() - offset));
    }
    EXPECT_EQ(hash.Hex(), kMillionADigest);
  }
}

TEST(ProvenanceSha256, FastestCompressionIsTheOneTheCpuRuns)
{
  if (svdlr_tools::CpuHasShaExtensions())
  {
    EXPECT_EQ(svdlr_tools::FastestSha256Compression(), Sha256Compression::ShaExtensions);
    EXPECT_EQ(Sha256().Compression(), Sha256Compression::ShaExtensions);
  }
  else
  {
    EXPECT_EQ(svdlr_tools::FastestSha256Compression(), Sha256Compression::Portable);
    EXPECT_THROW(Sha256{ Sha256Compression::ShaExtensions }, std::invalid_argument);
  }
}

TEST(ProvenanceSha256, ShaExtensionsAgreeWithPortableOnRandomMessages)
{
  if (!svdlr_tools::CpuHasShaExtensions())
  {
    GTEST_SKIP() << "this CPU has no SHA extensions: only the portable compression ran (FipsExampleVectors)";
  }
  const std::uint64_t seed = svdlr::test::FreshSeed();
  std::cout << "[ seed ] " << svdlr::test::SeedTrace(seed) << std::endl;
  SCOPED_TRACE(svdlr::test::SeedTrace(seed));
  std::mt19937_64                            random(seed);
  std::uniform_int_distribution<int>         byte(0, 255);
  std::uniform_int_distribution<std::size_t> extra(0, 4095);
  std::vector<std::size_t>                   lengths;
  for (std::size_t length = 0; length <= 300; ++length)
  {
    lengths.push_back(length);
  }
  for (int i = 0; i < 3; ++i)
  {
    lengths.push_back((std::size_t{ 1 } << 20) * (i + 1) + extra(random)); // a few MB, ending anywhere in a block
  }
  for (const std::size_t length : lengths)
  {
    std::string message(length, '\0');
    for (char & c : message)
    {
      c = static_cast<char>(byte(random));
    }
    const std::string portable = Digest(Sha256Compression::Portable, message);
    ASSERT_EQ(Digest(Sha256Compression::ShaExtensions, message), portable) << "message of " << length << " bytes";
    ASSERT_EQ(portable.size(), 64u);
  }
}

TEST(ProvenanceSha256, FileChecksumIsTheDigestOfItsBytes)
{
  const auto file = std::filesystem::temp_directory_path() / ("svdlr-sha256-" + std::to_string(::getpid()) + ".txt");
  {
    std::ofstream out(file, std::ios::binary);
    out << kTwoBlockMessage;
  }
  const std::string digest = svdlr_tools::Sha256Of(file.string());
  std::filesystem::remove(file);
  EXPECT_EQ(digest, kTwoBlockDigest);
}

} // namespace
