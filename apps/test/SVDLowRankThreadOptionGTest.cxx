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
// --nthreads N bounds every parallel step of a tool's process (SVDLowRankCommonOptions' ApplyThreads): ITK's thread
// counts, which the filters hand to the engine, and svdlr::UsableCpuThreads, from which gzip, the NIfTI conversion
// and scans, the batch's readers and writers and the engine's own loops count their threads.
#include "SVDLowRankCommonOptions.h"

#include "svdlr/CpuThreads.h"

#include "itkMultiThreaderBase.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

namespace
{

/** Runs `check` in a child process and returns its exit status (-1: it did not exit). The child ends with _exit:
 * ITK's thread globals, which ApplyThreads may set, are then never torn down in it (a hang was seen once in ITK's
 * SingletonIndex destructor at exit; see ApplyThreads). */
template <typename TCheck>
int
InChild(const TCheck & check)
{
  const pid_t child = fork();
  if (child == 0)
  {
    _exit(check());
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(SVDLowRankThreadOption, NThreadsCapsEveryStepOfTheProcess)
{
  if (svdlr::UsableCpuThreads() < 2)
  {
    GTEST_SKIP() << "one usable CPU: a cap of 1 changes nothing";
  }
  const int status = InChild([] {
    svdlr_tools::ApplyThreads(1);
    int failed = 0;
    failed |= svdlr::UsableCpuThreads() == 1 ? 0 : 1;
    failed |= svdlr::ShareOfCpuThreads(svdlr::ParallelJobKind::FileInputOutput) == 1 ? 0 : 2;
    failed |= itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads() == 1 ? 0 : 4;
    return failed;
  });
  EXPECT_EQ(status, 0) << "1: UsableCpuThreads (gzip, conversion, batch, engine) not capped; 2: the file jobs' share "
                          "not capped; 4: ITK's default thread count (the filters' engine calls) not set";
}

TEST(SVDLowRankThreadOption, WithoutNThreadsEveryUsableCoreStays)
{
  const unsigned usable = svdlr::UsableCpuThreads();
  const int      status = InChild([usable] {
    svdlr_tools::ApplyThreads(0);
    return svdlr::UsableCpuThreads() == usable ? 0 : 1;
  });
  EXPECT_EQ(status, 0) << "UsableCpuThreads changed without --nthreads";
}

} // namespace
