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
#include "svdlrParallel.h"

#include <algorithm>
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
}

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

namespace detail
{

unsigned
WorkerCount(unsigned threads)
{
  if (threads > 0)
  {
    return threads;
  }
  return UsableCpuThreads();
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
    threads = UsableCpuThreads();
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
