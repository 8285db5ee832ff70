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
#ifndef svdlrTestSeed_h
#define svdlrTestSeed_h

// The seed of every randomized test, in one place: fresh on each run so that the tests sample the data they claim
// to hold for, printed on failure ("SVDLR_TEST_SEED=<n>"), and replayed by setting SVDLR_TEST_SEED=<n>.
//
// RecordSpread is how a tolerance is set from measurements rather than from a few lucky draws: with
// SVDLR_SEED_SPREAD_LOG naming a file, each call appends "<test> <quantity> <seed> <value>" to it, and
// test/seed-spread/measure.sh runs a test many times in one process (--gtest_repeat, a fresh seed each time) and
// prints the minimum, maximum and mean of every quantity. Without the variable it does nothing.
//
// The margin rule of the tolerances set that way (the tests name it, with the spread they measured and the date):
// each bound lies at least 1.5 times as far from the measured mean as the farthest value measured on its side, over
// at least 500 seeds. For a normal spread that is about 5 standard deviations, so that CI's 20 repetitions of each
// such test (CTest label "random", .ci/run) do not reach it by chance.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <random>
#include <string>

namespace svdlr
{
namespace test
{

inline constexpr const char * kSeedVariable = "SVDLR_TEST_SEED";

/** SVDLR_TEST_SEED when set (to replay a failure), otherwise a fresh one. */
inline std::uint64_t
FreshSeed()
{
  if (const char * fixed = std::getenv(kSeedVariable))
  {
    return std::strtoull(fixed, nullptr, 10);
  }
  return (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
}

/** What a failure message says so that the run can be replayed. */
inline std::string
SeedTrace(std::uint64_t seed)
{
  return std::string(kSeedVariable) + "=" + std::to_string(seed);
}

/** Appends `value` of `quantity`, drawn from `seed`, to the file SVDLR_SEED_SPREAD_LOG names (if any). */
inline void
RecordSpread(const std::string & quantity, std::uint64_t seed, double value)
{
  const char * log = std::getenv("SVDLR_SEED_SPREAD_LOG");
  if (log == nullptr)
  {
    return;
  }
  const auto *  info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::ofstream out(log, std::ios::app);
  out << (info != nullptr ? std::string(info->test_suite_name()) + "." + info->name() : std::string("-")) << ' '
      << quantity << ' ' << seed << ' ' << std::setprecision(10) << value << '\n';
}

} // namespace test
} // namespace svdlr

#endif
