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

// The countdown behind the test hooks' injected faults (svdlrFaultCountdown.h): which events it fails, what it
// counts, and that it fails exactly as many as asked when several threads draw at once (GPU solvers do).

#include "shared/svdlrFaultCountdown.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace
{
using svdlr::detail::FaultCountdown;

/** The outcomes of the next `events` events: 'x' failed, '.' passed. */
std::string
Draw(FaultCountdown & countdown, int events)
{
  std::string outcomes;
  for (int e = 0; e < events; ++e)
  {
    outcomes += countdown.NextFails() ? 'x' : '.';
  }
  return outcomes;
}

TEST(SVDLowRankFaultCountdown, DisarmedNothingFailsAndNothingIsCounted)
{
  FaultCountdown countdown;
  EXPECT_EQ(Draw(countdown, 5), ".....");
  EXPECT_EQ(countdown.Seen(), 0);
  countdown.Arm(3, 0); // no failures asked for: stays disarmed
  EXPECT_EQ(Draw(countdown, 5), ".....");
  EXPECT_EQ(countdown.Failed(), 0);
}

TEST(SVDLowRankFaultCountdown, FailsTheAskedWindowThenPassesAgain)
{
  FaultCountdown countdown;
  countdown.Arm(2, 3);
  EXPECT_EQ(Draw(countdown, 8), "..xxx...");
  EXPECT_EQ(countdown.Seen(), 5); // counted while armed: up to the last failure
  EXPECT_EQ(countdown.Failed(), 3);

  countdown.Arm(0, 1); // arming again starts over
  EXPECT_EQ(countdown.Failed(), 0);
  EXPECT_EQ(Draw(countdown, 3), "x..");
}

TEST(SVDLowRankFaultCountdown, NegativeFailuresFailForGoodUntilDisarmed)
{
  FaultCountdown countdown;
  countdown.Arm(1, -1);
  EXPECT_EQ(Draw(countdown, 6), ".xxxxx");
  EXPECT_EQ(countdown.Seen(), 6);
  EXPECT_EQ(countdown.Failed(), 5);
  countdown.Disarm();
  EXPECT_EQ(Draw(countdown, 3), "...");
  EXPECT_EQ(countdown.Seen(), 6);
}

TEST(SVDLowRankFaultCountdown, ThreadsDrawingAtOnceFailExactlyTheWindow)
{
  FaultCountdown countdown;
  countdown.Arm(1000, 250);
  std::atomic<int>         failed{ 0 };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
  {
    threads.emplace_back([&] {
      for (int e = 0; e < 1000; ++e)
      {
        failed += countdown.NextFails() ? 1 : 0;
      }
    });
  }
  for (auto & thread : threads)
  {
    thread.join();
  }
  EXPECT_EQ(failed.load(), 250);
  EXPECT_EQ(countdown.Failed(), 250);
  EXPECT_EQ(countdown.Seen(), 1250);
}

} // namespace
