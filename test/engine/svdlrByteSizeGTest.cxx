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
// The memory sizes the tools and Python take (svdlr::ParseByteSize, svdlr/Names.h).
#include "svdlr/Names.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>

namespace
{

constexpr std::size_t kKiB = 1024;

TEST(SVDLowRankByteSize, UnitsArePowersOf1024InEverySpelling)
{
  EXPECT_EQ(svdlr::ParseByteSize("4096"), 4096u);
  EXPECT_EQ(svdlr::ParseByteSize("1k"), kKiB);
  EXPECT_EQ(svdlr::ParseByteSize("512M"), 512 * kKiB * kKiB);
  EXPECT_EQ(svdlr::ParseByteSize("512MB"), 512 * kKiB * kKiB);
  for (const char * spelling : { "8G", "8g", "8GB", "8GiB", "8gib", "8.0G" })
  {
    EXPECT_EQ(svdlr::ParseByteSize(spelling), 8 * kKiB * kKiB * kKiB) << spelling;
  }
  EXPECT_EQ(svdlr::ParseByteSize("1.5G"), 3 * kKiB * kKiB * kKiB / 2);
  EXPECT_EQ(svdlr::ParseByteSize("2T"), 2 * kKiB * kKiB * kKiB * kKiB);
  EXPECT_EQ(svdlr::ParseByteSize("1.5"), 1u) << "a fraction of a byte is rounded down";
}

TEST(SVDLowRankByteSize, AnythingElseIsZero)
{
  for (const char * text : { "", "G", "-1G", "0", "0.5", "1..5G", "1.5.G", "8 G", " 8G", "8Gi", "8GBB", "8X", "8P",
                             "1e9", "99999999999T", "nan", "inf" })
  {
    EXPECT_EQ(svdlr::ParseByteSize(text), 0u) << "'" << text << "'";
  }
  EXPECT_NE(std::string(svdlr::ByteSizeSyntax()).find("1024"), std::string::npos);
}

} // namespace
