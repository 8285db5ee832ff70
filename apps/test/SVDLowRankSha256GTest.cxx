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
// SHA-256 of the provenance sidecar (SVDLowRankSha256.h, OpenSSL underneath): the example vectors of FIPS 180-2,
// a message fed in pieces as the sidecar feeds it, a file longer than the sidecar's read buffer, and an exit while
// hashes still run.
#include "SVDLowRankProvenance.h"
#include "SVDLowRankSha256.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace
{
using svdlr_tools::Sha256;

// The examples of FIPS 180-2 (appendix B) and the digest of the empty message.
constexpr const char * kEmptyDigest = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr const char * kAbcDigest = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
constexpr const char * kTwoBlockMessage = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"; // 448 bits
constexpr const char * kTwoBlockDigest = "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";
constexpr const char * kMillionADigest = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";

std::string
Digest(const std::string & message)
{
  Sha256 hash;
  hash.Add(message.data(), message.size());
  return hash.Hex();
}

std::filesystem::path
ScratchFile(const std::string & name)
{
  return std::filesystem::temp_directory_path() / ("svdlr-sha256-" + std::to_string(::getpid()) + "-" + name);
}

TEST(ProvenanceSha256, FipsExampleVectors)
{
  EXPECT_EQ(Digest(""), kEmptyDigest);
  EXPECT_EQ(Digest("abc"), kAbcDigest);
  EXPECT_EQ(Digest(kTwoBlockMessage), kTwoBlockDigest);
  EXPECT_EQ(Digest(std::string(1000000, 'a')), kMillionADigest);
}

TEST(ProvenanceSha256, MillionAInPiecesOfEverySizeGivesTheSameDigest)
{
  // Pieces of 1..127 bytes end at every offset of the 64-byte blocks, as a folder's names and files do.
  const std::string message(1000000, 'a');
  Sha256            hash;
  std::size_t       piece = 1;
  for (std::size_t offset = 0; offset < message.size(); offset += piece, piece = piece % 127 + 1)
  {
    hash.Add(message.data() + offset, std::min(piece, message.size() - offset));
  }
  EXPECT_EQ(hash.Hex(), kMillionADigest);
}

TEST(ProvenanceSha256, FileChecksumIsTheDigestOfItsBytes)
{
  const auto file = ScratchFile("two-block.txt");
  {
    std::ofstream out(file, std::ios::binary);
    out << kTwoBlockMessage;
  }
  const std::string digest = svdlr_tools::Sha256Of(file.string());
  std::filesystem::remove(file);
  EXPECT_EQ(digest, kTwoBlockDigest);
}

TEST(ProvenanceSha256, FileLongerThanTheReadBufferIsHashedWhole)
{
  // 5 MiB + 3 bytes of 'a': two reads of the sidecar's 4 MiB buffer, the second ending inside a block. The digest is
  // coreutils' (`python3 -c "print('a'*((5<<20)+3),end='')" | sha256sum`), which does not use OpenSSL.
  const auto file = ScratchFile("five-mib.txt");
  {
    std::ofstream out(file, std::ios::binary);
    out << std::string((std::size_t{ 5 } << 20) + 3, 'a');
  }
  const std::string digest = svdlr_tools::Sha256Of(file.string());
  std::filesystem::remove(file);
  EXPECT_EQ(digest, "1d31b529ae70d74a20efc4df269f362578e974655e2f42c9a57795e035c7b8cf");
}

TEST(ProvenanceSha256, UnreadableFileThrows)
{
  EXPECT_THROW(svdlr_tools::Sha256Of(ScratchFile("missing").string()), std::runtime_error);
}

TEST(ProvenanceSha256, ProcessExitsCleanlyWhileAHashRunsInTheBackground)
{
  // The tools exit (an input refused, say) while StartSha256Of's threads still start and run their hashes; a static
  // destructor joins them. OpenSSL's exit-time cleanup must not free what they use first: that crashed or hung the
  // process. Here OpenSSL is started by a finished hash, then the process exits while a 64 MB file is being hashed
  // and another thread keeps starting new hashes.
  const auto small = ScratchFile("small.txt"), large = ScratchFile("large.bin");
  {
    std::ofstream(small, std::ios::binary) << "abc";
    std::ofstream(large, std::ios::binary) << std::string(std::size_t{ 64 } << 20, 'x');
  }
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0)
  {
    svdlr_tools::StartSha256Of({ small.string() });
    const bool started = svdlr_tools::Sha256Of(small.string()) == kAbcDigest;
    svdlr_tools::StartSha256Of({ large.string() });
    std::thread([] {
      for (;;)
      {
        Digest("abc");
      }
    }).detach();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::exit(started ? 0 : 1);
  }
  int  status = 0;
  bool ended = false;
  for (int tenths = 0; tenths < 600 && !ended; ++tenths) // a minute, against a hang
  {
    ended = ::waitpid(child, &status, WNOHANG) == child;
    if (!ended)
    {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  if (!ended)
  {
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
  }
  std::filesystem::remove(small);
  std::filesystem::remove(large);
  ASSERT_TRUE(ended) << "the process hung at exit";
  ASSERT_TRUE(WIFEXITED(status)) << "the process died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

} // namespace
