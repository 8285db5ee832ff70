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
#ifndef svdlr_CpuThreads_h
#define svdlr_CpuThreads_h

// How many CPU threads a parallel step of this process takes: what "every core" means, a process-wide cap, and the
// one rule by which steps running at once share the cores. The engine, the tools' gzip and file passes, the batch
// pipeline and Python all ask it; it needs nothing of the engine's API (svdlr/Engine.h).

namespace svdlr
{

/** What "every core" means wherever a thread count is 0 (the engine, the tools' gzip, the batch pipeline, Python):
 * the CPUs this thread may run on, its affinity mask, which SLURM and cgroup cpusets, taskset and dask-cuda's
 * per-GPU workers set (std::thread::hardware_concurrency() counts the whole machine's), at most the limit of
 * LimitCpuThreads. At least 1. */
unsigned
UsableCpuThreads() noexcept;

/** Caps UsableCpuThreads for the whole process at `most` (0 lifts the cap): for processes that share a host's
 * cores without an affinity mask of their own, such as several Dask workers on one machine (denoise_with_dask gives
 * each its share). */
void
LimitCpuThreads(unsigned most) noexcept;

/** What a parallel step of this process is, for the one rule of how many threads it takes while others run
 * (ShareOfCpuThreads). A job counts only against running jobs of its own kind:
 * - DeviceEngineCall: an engine call on the CUDA backend (a device worker's call; a denoise from the moment it asks
 *   for CUDA). Its host side packs slabs or slices into pinned staging memory and back on every thread it is given:
 *   two device workers take half the cores each.
 * - FileInputOutput: reading a file, decompressing, converting or scanning its voxels, compressing (a batch's
 *   readers and writers, the tools' and the Python extension's single reads and writes).
 * Why two kinds and not one count for all: a share is taken when a step starts, and the steps of one kind start at
 * the same pace and last alike (one engine call per device, one file per reader or writer), so an equal share among
 * them is fair. A short read that started beside a long engine call would, counted with it, halve the call's
 * threads for its whole length (or its own for nothing once the call ends). A CPU-backend engine call is no job at
 * all: alone on the machine it keeps every core, also while a reader briefly runs beside it. */
enum class ParallelJobKind
{
  DeviceEngineCall,
  FileInputOutput
};

/** One job of `kind` running on this thread while the object lives: it counts in ShareOfCpuThreads(kind) for
 * every thread of the process. Scopes of a kind nested on one thread count once (an engine call that calls itself
 * again, a read whose decompression is also a job). Lives on the thread that made it; not copied or moved. */
class RunningParallelJob
{
public:
  explicit RunningParallelJob(ParallelJobKind kind) noexcept;
  ~RunningParallelJob();
  RunningParallelJob(const RunningParallelJob &) = delete;
  RunningParallelJob &
  operator=(const RunningParallelJob &) = delete;

private:
  ParallelJobKind m_Kind;
  int             m_OuterKind; // the kind this thread ran before this scope opened, -1: none
};

/** The one rule for how many threads a parallel step takes when several run at once: an equal share of `threads`
 * among the jobs of `kind` running now (RunningParallelJob: the step opens its own first, so that it counts), at
 * least 1. Explicit thread counts (an option's threads > 0, the tools' --nthreads) are not shared: the caller uses
 * them as given. LimitCpuThreads applies through UsableCpuThreads. */
unsigned
ShareOfCpuThreads(ParallelJobKind kind, unsigned threads) noexcept;

/** The same share of UsableCpuThreads(). */
unsigned
ShareOfCpuThreads(ParallelJobKind kind) noexcept;

/** What a thread count of 0 means on this thread: the share (of UsableCpuThreads) of the innermost job running on
 * it, else UsableCpuThreads() (a CPU-backend engine call, a lone step). */
unsigned
CpuThreadsOfThisThread() noexcept;

} // namespace svdlr

#endif
