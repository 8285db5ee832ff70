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
#ifndef svdlr_Parallel_h
#define svdlr_Parallel_h

#include "svdlr/CpuThreads.h"
#include "svdlr/Engine.h"

#include <string>

namespace svdlr
{
namespace detail
{

/** RunningParallelJob's opening and closing, which the CUDA backend's copy of the class calls through
 * svdlrCudaBackendTable.h so that its jobs count in the engine's: OpenParallelJob returns the kind this thread ran
 * before (-1: none), which CloseParallelJob restores. */
int
OpenParallelJob(ParallelJobKind kind) noexcept;
void
CloseParallelJob(ParallelJobKind kind, int outerKind) noexcept;

/** Runs body(i) for i in [0, n) on up to `threads` of oneTBB's pool (0: CpuThreadsOfThisThread() at this call, so
 * that a device worker's loops take their share of the jobs running now). Used when the caller gave no ParallelFor
 * of its own. The first exception thrown by a body is rethrown on the calling thread; bodies not yet started then
 * do not run. */
void
PoolParallelFor(unsigned threads, std::size_t n, const std::function<void(std::size_t)> & body);

/** The caller's ParallelFor when it gave one, else PoolParallelFor on `workers` threads (0: this thread's
 * share, taken anew at each call). */
ParallelFor
ParallelForOrThreads(const ParallelFor & given, unsigned workers);

/** The number of worker threads the engine plans for a thread count (0: CpuThreadsOfThisThread() now; at least 1). */
unsigned
WorkerCount(unsigned threads);

/** Tells the caller how far the work is, `done` of `total` `units` (e.g. "matrices", "patches"); throws
 * Error(Aborted) when the callback asks to stop. An empty callback does nothing. */
inline void
ReportProgress(const ProgressCallback & progress, std::size_t done, std::size_t total, const char * units)
{
  if (progress && !progress(done, total))
  {
    throw Error(ErrorCode::Aborted, "svdlr: aborted by the caller after " + std::to_string(done) + " of " +
                                      std::to_string(total) + " " + units);
  }
}

} // namespace detail
} // namespace svdlr

#endif
