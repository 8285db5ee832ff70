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
// GDCM decodes JPEG 2000 in a child process (DecodeFramesWithGdcm), bounded by GdcmChildLimits: whatever the child
// does (a crash, a hang, an allocation past its address space) becomes an error naming the file, and the reading
// process goes on. The child's misbehaviour is injected through the limits' setup hook, which runs in the child
// before GDCM; the file is a sound one (pydicom's MR_small_jp2klossless), so only the injection can fail it.
#include "SVDLowRankDicomCodecs.h"
#include "SVDLowRankDicomSeries.h"
#include "svdlrDicomTestData.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <new>
#include <string>

#include <unistd.h>

namespace
{
using namespace svdlr_test;

class SVDLowRankGdcmChild : public RandomTest
{
protected:
  void
  TearDown() override
  {
    svdlr_io::SetGdcmChildLimits({}); // the process's other tests decode without limits
    RandomTest::TearDown();
  }

  static std::string
  ReadError(const std::string & path)
  {
    SVDLR_ERROR_MESSAGE(svdlr_io::ReadDicomSeries(svdlr_io::FindDicomSeries({ path }).at(0)), message);
    return message;
  }
};

TEST_F(SVDLowRankGdcmChild, CrashInTheChildIsAnErrorNamingTheFile)
{
  SVDLR_REAL_DATA_OR_SKIP(path, "pydicom/MR_small_jp2klossless.dcm");
  svdlr_io::GdcmChildLimits limits;
  limits.setup = [] { std::raise(SIGSEGV); };
  svdlr_io::SetGdcmChildLimits(limits);
  const std::string message = ReadError(path);
  EXPECT_EQ(message.rfind(path + ": pixel data (JPEG 2000", 0), 0u) << message;
  EXPECT_NE(message.find("(signal " + std::to_string(SIGSEGV) + ")"), std::string::npos) << message;
}

TEST_F(SVDLowRankGdcmChild, HangingChildIsKilledAtTheTimeLimit)
{
  SVDLR_REAL_DATA_OR_SKIP(path, "pydicom/MR_small_jp2klossless.dcm");
  svdlr_io::GdcmChildLimits limits;
  limits.seconds = 1;
  limits.setup = [] { ::sleep(60); };
  svdlr_io::SetGdcmChildLimits(limits);
  const auto        start = std::chrono::steady_clock::now();
  const std::string message = ReadError(path);
  const double      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(message.rfind(path + ": pixel data (JPEG 2000", 0), 0u) << message;
  EXPECT_NE(message.find("for more than 1 s"), std::string::npos) << message;
  EXPECT_LT(seconds, 10.0);
}

TEST_F(SVDLowRankGdcmChild, AllocationPastTheChildsAddressSpaceFailsInTheChild)
{
  SVDLR_REAL_DATA_OR_SKIP(path, "pydicom/MR_small_jp2klossless.dcm");
  svdlr_io::GdcmChildLimits limits;
  limits.addressSpaceBytes = std::size_t{ 64 } << 20;
  limits.setup = [] {
    try
    {
      volatile char * block = new char[std::size_t{ 1 } << 30];
      block[0] = 1;
      ::_exit(41); // the limit let 1 GiB through
    }
    catch (const std::bad_alloc &)
    {
      ::_exit(42); // refused, as it must be
    }
  };
  svdlr_io::SetGdcmChildLimits(limits);
  const std::string message = ReadError(path);
  EXPECT_NE(message.find("(exit 42)"), std::string::npos) << message;
}

TEST_F(SVDLowRankGdcmChild, SoundFileDecodesWithinTheFuzzTargetsLimits)
{
  SVDLR_REAL_DATA_OR_SKIP(path, "pydicom/MR_small_jp2klossless.dcm");
  svdlr_io::GdcmChildLimits limits; // apps/fuzz/svdlrFuzzGdcmChild.h's
  limits.seconds = 5;
  limits.addressSpaceBytes = std::size_t{ 768 } << 20;
  svdlr_io::SetGdcmChildLimits(limits);
  const auto volume = svdlr_io::ReadDicomSeries(svdlr_io::FindDicomSeries({ path }).at(0));
  EXPECT_GT(volume.image->GetLargestPossibleRegion().GetNumberOfPixels(), 0u);
}

} // namespace
