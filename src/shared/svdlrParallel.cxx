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

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <atomic>
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

void
PoolParallelFor(unsigned threads, std::size_t n, const std::function<void(std::size_t)> & body)
{
  // oneTBB's work-stealing pool in an arena as wide as this job's share of the cores: a few percent faster on the CPU
  // denoiser than std::threads started per call. oneTBB rethrows the first exception of a body on this thread and
  // cancels the bodies not yet started.
  if (n == 0)
  {
    return;
  }
  if (threads == 0)
  {
    threads = CpuThreadsOfThisThread(); // taken at each call: the jobs running now, not those at the caller's start
  }
  const int width = static_cast<int>(std::min<std::size_t>(std::max(threads, 1u), n));
  if (width == 1)
  {
    for (std::size_t i = 0; i < n; ++i)
    {
      body(i);
    }
    return;
  }
  tbb::task_arena arena(width);
  arena.execute([&] { tbb::parallel_for(std::size_t{ 0 }, n, [&body](std::size_t i) { body(i); }); });
}

ParallelFor
ParallelForOrThreads(const ParallelFor & given, unsigned workers)
{
  if (given)
  {
    return given;
  }
  return [workers](std::size_t n, const std::function<void(std::size_t)> & body) {
    PoolParallelFor(workers, n, body);
  };
}

} // namespace detail
} // namespace svdlr
