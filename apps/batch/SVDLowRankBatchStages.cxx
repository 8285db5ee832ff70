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
#include "SVDLowRankBatchStages.h"

#include "SVDLowRankBatchQueue.h"

#include "svdlr/CpuThreads.h"
#include "svdlr/Engine.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <future>
#include <mutex>
#include <numeric>
#include <thread>
#include <unistd.h>

namespace svdlr_batch
{
namespace
{

using Clock = std::chrono::steady_clock;

double
SecondsSince(Clock::time_point start)
{
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/** The readers' head start: readers beyond the first `count` wait until the first `count` series are read (or failed,
 * or a reader ran out of series). */
struct HeadStart
{
  explicit HeadStart(std::size_t first)
    : count(first)
  {}

  void
  Wait()
  {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [this] { return released || done >= count; });
  }

  /** The series at position k of the to-do list is read (or failed). */
  void
  Done(std::size_t k)
  {
    if (k < count)
    {
      const std::lock_guard<std::mutex> lock(mutex);
      ++done;
      changed.notify_all();
    }
  }

  void
  Release()
  {
    const std::lock_guard<std::mutex> lock(mutex);
    released = true;
    changed.notify_all();
  }

  const std::size_t       count;
  std::mutex              mutex;
  std::condition_variable changed;
  std::size_t             done{ 0 };
  bool                    released{ false };
};

/** An item between the stages, with the index of its row. */
struct InFlight
{
  std::size_t                 index{ 0 };
  std::unique_ptr<StagedItem> staged;
};

/** The byte budget a run gets unless told: for leased buffers, which the pool keeps (and pins for the GPU), 1 GiB
 * or an eighth of the RAM if less; for items in memory of their own, of which nothing is kept, a quarter of the
 * RAM (a 96x96x60x65 series and its denoised copy take 288 MiB: the writers, which compress one each, need many). */
std::size_t
DefaultBudget(bool leasedBuffers)
{
  constexpr std::size_t oneGiB = std::size_t{ 1 } << 30;
  const long            pages = sysconf(_SC_PHYS_PAGES);
  const long            pageSize = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || pageSize <= 0)
  {
    return oneGiB;
  }
  const std::size_t ram = static_cast<std::size_t>(pages) * static_cast<std::size_t>(pageSize);
  return leasedBuffers ? std::min(oneGiB, ram / 8) : ram / 4;
}

/** The readers a run gets unless told: a quarter of the hardware threads, and at least two per worker so that
 * decoding the next items keeps every GPU fed, but at most half the threads (the writers need the rest). */
unsigned
DefaultReaders(unsigned hardwareThreads, std::size_t workers)
{
  constexpr unsigned readersPerWorker = 2;
  const unsigned     wanted = std::max(hardwareThreads / 4, readersPerWorker * static_cast<unsigned>(workers));
  return std::max(1u, std::min(wanted, hardwareThreads / 2));
}

} // namespace

const char *
ToString(VolumeStatus status)
{
  switch (status)
  {
    case VolumeStatus::Done:
      return "done";
    case VolumeStatus::Skipped:
      return "skipped";
    default:
      return "failed";
  }
}

void
ResolveBackend(const PipelineOptions & options, svdlr::Backend & backend, std::vector<int> & devices,
               std::string & notes)
{
  backend = options.backend;
  devices.clear();
  notes.clear();
  if (backend == svdlr::Backend::CPU)
  {
    return;
  }
  std::vector<int> wanted = options.devices;
  if (wanted.empty())
  {
    for (int d = 0; d < svdlr::CudaDeviceCount(); ++d)
    {
      wanted.push_back(d);
    }
  }
  // Each device's check creates its context (about 0.1 s): all at once, one thread each, so that a second GPU
  // costs the batch no more start-up than the first.
  std::vector<std::string>       reasons(wanted.size());
  std::vector<std::future<bool>> checks;
  for (std::size_t k = 0; k < wanted.size(); ++k)
  {
    checks.push_back(std::async(std::launch::async,
                                [&, k] { return svdlr::CudaDeviceUsable(wanted[k], &reasons[k]); }));
  }
  for (std::size_t k = 0; k < wanted.size(); ++k)
  {
    const int           device = wanted[k];
    const std::string & why = reasons[k];
    if (checks[k].get())
    {
      devices.push_back(device);
    }
    else if (backend == svdlr::Backend::CUDA)
    {
      throw svdlr::Error(svdlr::ErrorCode::BackendUnavailable,
                         "CUDA device " + std::to_string(device) + " cannot be used: " + why);
    }
    else
    {
      notes += "CUDA device " + std::to_string(device) + " skipped: " + why + "; ";
    }
  }
  if (devices.empty())
  {
    if (backend == svdlr::Backend::CUDA)
    {
      std::string why;
      svdlr::CudaDeviceUsable(0, &why);
      throw svdlr::Error(svdlr::ErrorCode::BackendUnavailable, "no usable CUDA device: " + why);
    }
    if (notes.empty())
    {
      std::string why;
      svdlr::CudaDeviceUsable(0, &why);
      notes = "no CUDA device (" + why + "); ";
    }
    notes += "the CPU does them all";
    backend = svdlr::Backend::CPU;
    return;
  }
  backend = svdlr::Backend::CUDA;
}

BatchSummary
RunPipeline(BatchJob & job, const PipelineOptions & options)
{
  BatchSummary      summary;
  const std::size_t count = job.Count();
  const auto        start = Clock::now();
  // Which devices can be used is found while the readers start: on a GPU host it costs the driver's start and a
  // context per device (0.7-1.0 s measured on two H200s, before this ran beside the reading), time in which the
  // first series are read. The workers start once it is known.
  std::future<void> resolving = std::async(std::launch::async, [&] {
    ResolveBackend(options, summary.backend, summary.devices, summary.notes);
  });

  std::vector<VolumeResult> & results = summary.volumes;
  results.resize(count);
  std::mutex  finishMutex;
  std::size_t finished = 0;
  const auto  finish = [&](std::size_t i, VolumeStatus status, const std::string & message) {
    const std::lock_guard<std::mutex> lock(finishMutex);
    results[i].status = status;
    results[i].message = message;
    ++finished;
    if (options.onVolume)
    {
      options.onVolume(results[i], finished, count);
    }
  };

  // Outputs only ever appear by an atomic rename: an item whose outputs all exist is complete, and is not redone; one
  // with only some (a run killed between its renames, whose partials the redo's writers remove) is redone.
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < count; ++i)
  {
    results[i].index = i;
    results[i].input = job.InputName(i);
    results[i].output = job.OutputPath(i);
    const auto  set = job.OutputSet(i);
    const auto  present = std::count_if(set.begin(), set.end(), [](const std::string & output) {
      std::error_code error;
      return std::filesystem::exists(output, error);
    });
    if (!options.overwrite && static_cast<std::size_t>(present) == set.size())
    {
      finish(i, VolumeStatus::Skipped, "output exists");
    }
    else
    {
      results[i].redo = !options.overwrite && present > 0;
      todo.push_back(i);
    }
  }

  // The readers' count and the buffers' pinning are decided before the devices are known: from the devices asked
  // for (one when all are: DefaultReaders gives a GPU host's cores/4 whatever the count), and pinned unless the CPU
  // was asked for (a pool that cannot pin falls back to pageable memory).
  const bool        gpuAskedFor = options.backend != svdlr::Backend::CPU;
  const std::size_t workersAskedFor = gpuAskedFor ? std::max<std::size_t>(1, options.devices.size()) : 1;
  const unsigned    hardware = svdlr::UsableCpuThreads();
  summary.readers = options.readers > 0 ? options.readers : DefaultReaders(hardware, workersAskedFor);
  // Writing (compressing) is the slowest step of most items: the writers get the cores the readers leave. The
  // GPU workers mostly wait for their device; a CPU worker shares the cores with them.
  summary.writers = options.writers > 0 ? options.writers : std::max(1u, hardware - std::min(hardware - 1, summary.readers));
  summary.readers = std::max(1u, std::min<unsigned>(summary.readers, static_cast<unsigned>(todo.size())));
  summary.writers = std::max(1u, std::min<unsigned>(summary.writers, static_cast<unsigned>(todo.size())));

  HostBufferPool          pool(options.memoryBudget > 0 ? options.memoryBudget : DefaultBudget(job.LeasesBuffers()),
                               gpuAskedFor && job.LeasesBuffers());
  const unsigned           readerThreads = todo.empty() ? 0u : summary.readers;
  WorkQueue<InFlight>      toWork(readerThreads);
  std::atomic<std::size_t> next{ 0 };

  // The first series, one for each worker asked for, are read before the other readers start: alone they get all
  // the cores (a read's decompression takes an equal share of them, ShareOfThreads), so the workers start sooner.
  // With all the readers at once each series took a reader's share: 0.64 s for the first of 20 DWI series on 32
  // cores and 8 readers, the devices idle meanwhile (a trace of the BIDS App, two H200s).
  HeadStart head(std::min(todo.size(), workersAskedFor));
  const auto reader = [&](unsigned r) {
    if (r >= head.count)
    {
      head.Wait();
    }
    for (std::size_t k = next++; k < todo.size(); k = next++)
    {
      const std::size_t i = todo[k];
      const auto        begin = Clock::now();
      try
      {
        InFlight item{ i, job.Read(i, pool, results[i]) };
        results[i].readSeconds = SecondsSince(begin);
        toWork.Push(std::move(item));
      }
      catch (const std::exception & error)
      {
        results[i].readSeconds = SecondsSince(begin);
        finish(i, VolumeStatus::Failed, error.what());
      }
      head.Done(k);
    }
    head.Release(); // this reader is out of series: none of the first is still to come from it
    toWork.ProducerDone();
  };
  std::vector<std::thread> threads;
  for (unsigned r = 0; r < readerThreads; ++r)
  {
    threads.emplace_back(reader, r);
  }
  try
  {
    resolving.get();
  }
  catch (...)
  {
    // No worker will come: the readers stop after the series they hold, whose buffers go back as they are dropped.
    next = todo.size();
    while (toWork.Pop())
    {
    }
    for (auto & thread : threads)
    {
      thread.join();
    }
    throw;
  }
  const bool          onGpu = summary.backend == svdlr::Backend::CUDA;
  std::vector<Worker> workers;
  for (std::size_t w = 0; w < (onGpu ? summary.devices.size() : 1); ++w)
  {
    workers.push_back({ w, summary.backend, onGpu ? summary.devices[w] : -1 });
  }
  WorkQueue<InFlight> toWrite(workers.size());
  std::vector<double> workerSeconds(workers.size(), 0.0);

  const auto worker = [&](const Worker & where) {
    while (auto item = toWork.Pop())
    {
      const std::size_t i = item->index;
      const auto        begin = Clock::now();
      try
      {
        job.Work(*item->staged, where, results[i]);
        results[i].solveSeconds = SecondsSince(begin);
        results[i].device = where.device;
        workerSeconds[where.index] += results[i].solveSeconds;
        toWrite.Push(std::move(*item));
      }
      catch (const std::exception & error)
      {
        results[i].solveSeconds = SecondsSince(begin);
        workerSeconds[where.index] += results[i].solveSeconds;
        item->staged.reset(); // give its memory back before the next item
        finish(i, VolumeStatus::Failed, error.what());
      }
    }
    toWrite.ProducerDone();
  };
  const auto writer = [&] {
    while (auto item = toWrite.Pop())
    {
      const std::size_t i = item->index;
      const auto        begin = Clock::now();
      try
      {
        job.Write(*item->staged, i, results[i]);
        item->staged.reset();
        results[i].writeSeconds = SecondsSince(begin);
        finish(i, VolumeStatus::Done, "");
      }
      catch (const std::exception & error)
      {
        item->staged.reset();
        results[i].writeSeconds = SecondsSince(begin);
        finish(i, VolumeStatus::Failed, error.what());
      }
    }
  };

  if (!todo.empty())
  {
    for (const Worker & where : workers)
    {
      threads.emplace_back(worker, where);
    }
    for (unsigned w = 0; w < summary.writers; ++w)
    {
      threads.emplace_back(writer);
    }
    for (auto & thread : threads)
    {
      thread.join();
    }
  }

  summary.wallSeconds = SecondsSince(start);
  summary.pinned = onGpu && job.LeasesBuffers() && pool.AllPinned() && pool.PeakLeasedBytes() > 0;
  summary.peakBytes = pool.PeakLeasedBytes();
  const double busy = std::accumulate(workerSeconds.begin(), workerSeconds.end(), 0.0);
  summary.solverBusy = summary.wallSeconds > 0 ? busy / (summary.wallSeconds * workers.size()) : 0.0;
  for (const auto & result : results)
  {
    summary.done += result.status == VolumeStatus::Done ? 1 : 0;
    summary.skipped += result.status == VolumeStatus::Skipped ? 1 : 0;
    summary.failed += result.status == VolumeStatus::Failed ? 1 : 0;
  }
  return summary;
}

} // namespace svdlr_batch
