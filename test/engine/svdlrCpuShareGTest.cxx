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
// The one rule for how many threads a parallel step takes while others run (svdlr::ShareOfCpuThreads): an equal share
// among the running jobs of its kind, at least one, under LimitCpuThreads; and the engine's own loops with no thread
// count given take their thread's share.
#include "svdlr/CpuThreads.h"
#include "svdlr/Engine.h"
#include "svdlrJobOnAnotherThread.h"
#include "shared/svdlrParallel.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <set>
#include <thread>

namespace
{

using svdlr::ParallelJobKind;
using svdlr_test::JobOnAnotherThread;

constexpr ParallelJobKind Device = ParallelJobKind::DeviceEngineCall;
constexpr ParallelJobKind Files = ParallelJobKind::FileInputOutput;

/** Lifts the process's thread cap when a test ends, whatever it set. */
class SVDLowRankCpuShare : public ::testing::Test
{
protected:
  void
  TearDown() override
  {
    svdlr::LimitCpuThreads(0);
  }
};

TEST_F(SVDLowRankCpuShare, ALoneJobTakesEveryThread)
{
  EXPECT_EQ(svdlr::ShareOfCpuThreads(Device, 16), 16u) << "no job running";
  const svdlr::RunningParallelJob mine(Device);
  EXPECT_EQ(svdlr::ShareOfCpuThreads(Device, 16), 16u);
  EXPECT_EQ(svdlr::ShareOfCpuThreads(Device), svdlr::UsableCpuThreads());
}

TEST_F(SVDLowRankCpuShare, TwoJobsOfAKindTakeHalfEach)
{
  const svdlr::RunningParallelJob mine(Device);
  {
    const JobOnAnotherThread other(Device);
    EXPECT_EQ(svdlr::ShareOfCpuThreads(Device, 16), 8u);
    EXPECT_EQ(svdlr::ShareOfCpuThreads(Device, 15), 7u) << "rounded down: the shares never add up to more";
    const JobOnAnotherThread third(Device);
    EXPECT_EQ(svdlr::ShareOfCpuThreads(Device, 16), 5u);
  }
  EXPECT_EQ(svdlr::ShareOfCpuThreads(Device, 16), 16u) << "the others ended";
}

TEST_F(SVDLowRankCpuShare, JobsOfAnotherKindDoNotCount)
{
  const svdlr::RunningParallelJob mine(Device);
  const JobOnAnotherThread        reader(Files);
  const JobOnAnotherThread        writer(Files);
  EXPECT_EQ(svdlr::ShareOfCpuThreads(Device, 16), 16u);
  EXPECT_EQ(svdlr::ShareOfCpuThreads(Files, 16), 8u);
}

TEST_F(SVDLowRankCpuShare, EveryJobGetsAtLeastOneThread)
{
  const svdlr::RunningParallelJob mine(Files);
  const JobOnAnotherThread        second(Files);
  const JobOnAnotherThread        third(Files);
  EXPECT_EQ(svdlr::ShareOfCpuThreads(Files, 2), 1u);
  EXPECT_EQ(svdlr::ShareOfCpuThreads(Files, 0), 1u);
}

TEST_F(SVDLowRankCpuShare, NestedScopesOnOneThreadCountOnce)
{
  const JobOnAnotherThread other(Files);
  {
    const svdlr::RunningParallelJob read(Files);
    {
      const svdlr::RunningParallelJob decompress(Files); // a read whose decompression is a job too
      EXPECT_EQ(svdlr::ShareOfCpuThreads(Files, 16), 8u);
    }
    EXPECT_EQ(svdlr::ShareOfCpuThreads(Files, 16), 8u) << "the outer scope still runs";
  }
  EXPECT_EQ(svdlr::ShareOfCpuThreads(Files, 16), 16u) << "only the other thread's job is left";
}

TEST_F(SVDLowRankCpuShare, TheProcessLimitIsShared)
{
  if (svdlr::UsableCpuThreads() < 2)
  {
    GTEST_SKIP() << "one usable CPU: every share is one thread";
  }
  svdlr::LimitCpuThreads(2);
  const svdlr::RunningParallelJob mine(Device);
  EXPECT_EQ(svdlr::ShareOfCpuThreads(Device), 2u);
  const JobOnAnotherThread other(Device);
  EXPECT_EQ(svdlr::ShareOfCpuThreads(Device), 1u);
}

TEST_F(SVDLowRankCpuShare, AThreadCountOfZeroIsThisThreadsShare)
{
  if (svdlr::UsableCpuThreads() < 2)
  {
    GTEST_SKIP() << "one usable CPU: every share is one thread";
  }
  const unsigned           all = svdlr::UsableCpuThreads();
  const JobOnAnotherThread otherDevice(Device);
  EXPECT_EQ(svdlr::CpuThreadsOfThisThread(), all) << "outside any job (a CPU-backend call): every core";
  {
    const svdlr::RunningParallelJob mine(Device);
    EXPECT_EQ(svdlr::CpuThreadsOfThisThread(), all / 2);
    EXPECT_EQ(svdlr::detail::WorkerCount(0u), all / 2);
    EXPECT_EQ(svdlr::detail::WorkerCount(3u), 3u) << "an explicit count wins";
    {
      const svdlr::RunningParallelJob read(Files); // the innermost job decides
      EXPECT_EQ(svdlr::CpuThreadsOfThisThread(), all);
    }
    EXPECT_EQ(svdlr::CpuThreadsOfThisThread(), all / 2) << "back to the device job";
  }
  EXPECT_EQ(svdlr::CpuThreadsOfThisThread(), all);
}

TEST_F(SVDLowRankCpuShare, EngineLoopsWithNoThreadCountRunOnTheShareOfTheirCall)
{
  if (svdlr::UsableCpuThreads() < 2)
  {
    GTEST_SKIP() << "one usable CPU: every loop runs on one thread";
  }
  svdlr::LimitCpuThreads(2);
  const svdlr::RunningParallelJob mine(Device);
  // Made before the other device job starts; the share is taken when the loop runs.
  const svdlr::ParallelFor loop = svdlr::detail::ParallelForOrThreads({}, 0);
  const auto               threadsSeen = [&loop] {
    std::mutex                  mutex;
    std::set<std::thread::id>   seen;
    loop(64, [&](std::size_t) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      const std::lock_guard<std::mutex> lock(mutex);
      seen.insert(std::this_thread::get_id());
    });
    return seen.size();
  };
  const JobOnAnotherThread other(Device);
  EXPECT_EQ(threadsSeen(), 1u) << "two device jobs on two threads: one each";
}

} // namespace
