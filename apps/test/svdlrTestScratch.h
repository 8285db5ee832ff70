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
#ifndef svdlrTestScratch_h
#define svdlrTestScratch_h

// A test fixture with fresh random data (its seed printed on failure; SVDLR_TEST_SEED replays one) and
// a scratch folder that is removed when the test passes and kept for a look when it fails.

#include "svdlrTestSeed.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <random>
#include <string>

namespace svdlr_test
{
namespace fs = std::filesystem;

/** A fresh seed per test, printed on failure so that a failing case can be replayed. */
class RandomTest : public ::testing::Test
{
protected:
  void
  SetUp() override
  {
    m_Seed = svdlr::test::FreshSeed();
    m_Random.seed(static_cast<std::mt19937::result_type>(m_Seed));
    m_Trace = std::make_unique<::testing::ScopedTrace>(__FILE__, __LINE__, svdlr::test::SeedTrace(m_Seed));
    const auto * info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string  name = std::string(info->test_suite_name()) + "." + info->name();
    std::replace(name.begin(), name.end(), '/', '_');
    m_Directory = fs::temp_directory_path() / ("svdlr-" + name + "-" + std::to_string(m_Seed));
    fs::remove_all(m_Directory);
    fs::create_directories(m_Directory);
  }
  void
  TearDown() override
  {
    if (!HasFailure())
    {
      fs::remove_all(m_Directory);
    }
  }
  /** A new folder inside this test's scratch folder. */
  std::string
  Folder(const std::string & name)
  {
    fs::create_directories(m_Directory / name);
    return (m_Directory / name).string();
  }
  std::string
  Path(const std::string & name) const
  {
    return (m_Directory / name).string();
  }

  std::uint64_t m_Seed{ 0 };
  std::mt19937  m_Random;
  fs::path      m_Directory;

private:
  std::unique_ptr<::testing::ScopedTrace> m_Trace;
};

} // namespace svdlr_test

#endif
