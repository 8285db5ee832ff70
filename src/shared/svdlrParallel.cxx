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
#include "shared/svdlrParallel.h"
#include "svdlr/CpuThreads.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#ifdef __linux__
#  include <sched.h>
#endif

namespace svdlr
{

namespace
{
std::atomic<unsigned> g_CpuThreadLimit{ 0 };

constexpr std::size_t kJobKinds = 2;

std::size_t
KindIndex(ParallelJobKind kind)
{
  return static_cast<std::size_t>(kind);
}

/** The threads running a job of each kind now (a thread with nested scopes of a kind counts once). */
std::array<std::atomic<unsigned>, kJobKinds> g_RunningJobs{};

/** This thread's open scopes of each kind, and the kind of its innermost one (-1: none). */
thread_local std::array<unsigned, kJobKinds> t_OpenScopes{};
thread_local int                             t_InnermostKind = -1;
} // namespace

unsigned
UsableCpuThreads() noexcept
{
  unsigned usable = std::max(1u, std::thread::hardware_concurrency());
#ifdef __linux__
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0 && CPU_COUNT(&allowed) > 0)
  {
    usable = static_cast<unsigned>(CPU_COUNT(&allowed));
  }
#endif
  const unsigned limit = g_CpuThreadLimit.load();
  return limit > 0 ? std::min(usable, limit) : usable;
}

void
LimitCpuThreads(unsigned most) noexcept
{
  g_CpuThreadLimit.store(most);
}

RunningParallelJob::RunningParallelJob(ParallelJobKind kind) noexcept
  : m_Kind(kind)
  , m_OuterKind(detail::OpenParallelJob(kind))
{}

RunningParallelJob::~RunningParallelJob()
{
  detail::CloseParallelJob(m_Kind, m_OuterKind);
}

unsigned
ShareOfCpuThreads(ParallelJobKind kind, unsigned threads) noexcept
{
  return std::max(1u, threads / std::max(1u, g_RunningJobs[KindIndex(kind)].load()));
}

unsigned
ShareOfCpuThreads(ParallelJobKind kind) noexcept
{
  return ShareOfCpuThreads(kind, UsableCpuThreads());
}

unsigned
CpuThreadsOfThisThread() noexcept
{
  return t_InnermostKind < 0 ? UsableCpuThreads() : ShareOfCpuThreads(static_cast<ParallelJobKind>(t_InnermostKind));
}

namespace detail
{

int
OpenParallelJob(ParallelJobKind kind) noexcept
{
  const std::size_t k = KindIndex(kind);
  if (t_OpenScopes[k]++ == 0)
  {
    ++g_RunningJobs[k];
  }
  const int outer = t_InnermostKind;
  t_InnermostKind = static_cast<int>(kind);
  return outer;
}

void
CloseParallelJob(ParallelJobKind kind, int outerKind) noexcept
{
  const std::size_t k = KindIndex(kind);
  if (--t_OpenScopes[k] == 0)
  {
    --g_RunningJobs[k];
  }
  t_InnermostKind = outerKind;
}

unsigned
WorkerCount(unsigned threads)
{
  // 0: this thread's share when it runs a job (a device worker's engine call), else every usable core.
  return threads > 0 ? threads : CpuThreadsOfThisThread();
}

unsigned
WorkerCount(const Options & options)
{
  return WorkerCount(options.threads);
}

void
StdThreadParallelFor(unsigned threads, std::size_t n, const std::function<void(std::size_t)> & body)
{
  if (threads == 0)
  {
    threads = CpuThreadsOfThisThread(); // taken at each call: the jobs running now, not those at the caller's start
  }
  const std::size_t        workers = std::min<std::size_t>(threads, n);
  std::atomic<std::size_t> next{ 0 };
  std::exception_ptr       firstError;
  std::mutex               errorMutex;

  auto work = [&]() {
    for (std::size_t i = next++; i < n; i = next++)
    {
      try
      {
        body(i);
      }
      catch (...)
      {
        const std::lock_guard<std::mutex> lock(errorMutex);
        if (!firstError)
        {
          firstError = std::current_exception();
        }
      }
    }
  };

  std::vector<std::thread> pool;
  pool.reserve(workers > 0 ? workers - 1 : 0);
  for (std::size_t t = 1; t < workers; ++t)
  {
    pool.emplace_back(work);
  }
  work(); // the calling thread works too
  for (auto & thread : pool)
  {
    thread.join();
  }
  if (firstError)
  {
    std::rethrow_exception(firstError);
  }
}

ParallelFor
ParallelForOrThreads(const ParallelFor & given, unsigned workers)
{
  if (given)
  {
    return given;
  }
  return [workers](std::size_t n, const std::function<void(std::size_t)> & body) {
    StdThreadParallelFor(workers, n, body);
  };
}

} // namespace detail
} // namespace svdlr
