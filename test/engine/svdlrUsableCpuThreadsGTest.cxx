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
// "Every core" is the CPUs a thread may run on (svdlr::UsableCpuThreads): what SLURM, taskset and dask-cuda's
// per-GPU workers leave a process, not the machine's count.
#include "svdlr/CpuThreads.h"

#include <gtest/gtest.h>

#ifdef __linux__ // the affinity mask is Linux's
#  include <sched.h>
#include <thread>

namespace
{

cpu_set_t
AllowedCpus()
{
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  EXPECT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  return allowed;
}

} // namespace

TEST(SVDLowRankUsableCpuThreads, CountsTheAffinityMask)
{
  cpu_set_t allowed = AllowedCpus();
  EXPECT_EQ(svdlr::UsableCpuThreads(), static_cast<unsigned>(CPU_COUNT(&allowed)));
}

TEST(SVDLowRankUsableCpuThreads, AThreadPinnedToOneCpuCountsOne)
{
  cpu_set_t allowed = AllowedCpus();
  int       first = 0;
  while (!CPU_ISSET(first, &allowed))
  {
    ++first;
  }
  unsigned seen = 0;
  // A thread of its own: the affinity is the calling thread's, and the test's own thread keeps all of its CPUs.
  std::thread pinned([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
    seen = svdlr::UsableCpuThreads();
  });
  pinned.join();
  EXPECT_EQ(seen, 1u);
  EXPECT_EQ(svdlr::UsableCpuThreads(), static_cast<unsigned>(CPU_COUNT(&allowed)));
}

TEST(SVDLowRankUsableCpuThreads, TheProcessLimitCapsTheMaskAndLifts)
{
  const unsigned all = svdlr::UsableCpuThreads();
  svdlr::LimitCpuThreads(1);
  EXPECT_EQ(svdlr::UsableCpuThreads(), 1u);
  svdlr::LimitCpuThreads(all + 7); // a cap above the mask leaves the mask
  EXPECT_EQ(svdlr::UsableCpuThreads(), all);
  svdlr::LimitCpuThreads(0);
  EXPECT_EQ(svdlr::UsableCpuThreads(), all);
}

#endif
