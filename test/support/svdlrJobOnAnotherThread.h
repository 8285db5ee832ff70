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
#ifndef svdlrJobOnAnotherThread_h
#define svdlrJobOnAnotherThread_h

#include "svdlr/CpuThreads.h"

#include <future>
#include <thread>

namespace svdlr_test
{

/** A svdlr::RunningParallelJob of `kind` held on a thread of its own until this object goes: another step of the
 * process running beside the test's, for the share rule (svdlr::ShareOfCpuThreads). */
class JobOnAnotherThread
{
public:
  explicit JobOnAnotherThread(svdlr::ParallelJobKind kind)
  {
    std::promise<void> opened;
    std::future<void>  isOpen = opened.get_future();
    m_Thread = std::thread([kind, &opened, released = m_Release.get_future()] {
      const svdlr::RunningParallelJob job(kind);
      opened.set_value();
      released.wait();
    });
    isOpen.wait();
  }
  ~JobOnAnotherThread()
  {
    m_Release.set_value();
    m_Thread.join();
  }
  JobOnAnotherThread(const JobOnAnotherThread &) = delete;
  JobOnAnotherThread &
  operator=(const JobOnAnotherThread &) = delete;

private:
  std::promise<void> m_Release;
  std::thread        m_Thread;
};

} // namespace svdlr_test

#endif
