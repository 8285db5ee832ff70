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
#include "SVDLowRankBatchPipeline.h"

#include "SVDLowRankBatchBuffers.h"
#include "SVDLowRankBatchQueue.h"
#include "SVDLowRankBatchVolume.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <mutex>
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

std::size_t
DefaultBudget()
{
  constexpr std::size_t oneGiB = std::size_t{ 1 } << 30;
  const long            pages = sysconf(_SC_PHYS_PAGES);
  const long            pageSize = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || pageSize <= 0)
  {
    return oneGiB;
  }
  return std::min(oneGiB, static_cast<std::size_t>(pages) * static_cast<std::size_t>(pageSize) / 8);
}

unsigned
HardwareThreads()
{
  return std::max(1u, std::thread::hardware_concurrency());
}

std::string
Describe(const BatchInput & input)
{
  if (input.source == VolumeSource::DicomSeries)
  {
    return input.path + " (DICOM series " + (input.seriesNumber.empty() ? input.seriesInstanceUID : input.seriesNumber) +
           ")";
  }
  return input.path;
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
ResolveBackend(const BatchOptions & options, svdlr::Backend & backend, std::vector<int> & devices,
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
  for (const int device : wanted)
  {
    std::string why;
    if (svdlr::CudaDeviceUsable(device, &why))
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
    notes += "the CPU solves every volume";
    backend = svdlr::Backend::CPU;
    return;
  }
  backend = svdlr::Backend::CUDA;
}

BatchSummary
RunBatch(const std::vector<BatchInput> & inputs, const std::string & outputRoot, const BatchOptions & options)
{
  BatchSummary summary;
  ResolveBackend(options, summary.backend, summary.devices, summary.notes);
  const bool        onGpu = summary.backend == svdlr::Backend::CUDA;
  const std::string tag = svdlr::OutputTag(options.policy);
  const auto        start = Clock::now();

  std::vector<VolumeResult> & results = summary.volumes;
  results.resize(inputs.size());
  std::mutex  finishMutex;
  std::size_t finished = 0;
  const auto  finish = [&](std::size_t i, VolumeStatus status, const std::string & message) {
    const std::lock_guard<std::mutex> lock(finishMutex);
    results[i].status = status;
    results[i].message = message;
    ++finished;
    if (options.onVolume)
    {
      options.onVolume(results[i], finished, inputs.size());
    }
  };

  // Outputs only ever appear by an atomic rename: one that exists is complete, and is not redone.
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < inputs.size(); ++i)
  {
    results[i].input = Describe(inputs[i]);
    results[i].output = OutputPathFor(inputs[i], outputRoot, tag);
    std::error_code error;
    if (!options.overwrite && std::filesystem::exists(results[i].output, error))
    {
      finish(i, VolumeStatus::Skipped, "output exists");
    }
    else
    {
      todo.push_back(i);
    }
  }

  const unsigned hardware = HardwareThreads();
  summary.readers = options.readers > 0 ? options.readers : std::max(1u, hardware / 4);
  // Writing (compressing) is the slowest step of most volumes: the writers get the cores the readers leave. The
  // GPU solvers mostly wait for their device; a CPU solver shares the cores with them.
  summary.writers = options.writers > 0 ? options.writers : std::max(1u, hardware - summary.readers);
  summary.readers = std::max(1u, std::min<unsigned>(summary.readers, static_cast<unsigned>(todo.size())));
  summary.writers = std::max(1u, std::min<unsigned>(summary.writers, static_cast<unsigned>(todo.size())));
  const std::vector<int> solverDevices = onGpu ? summary.devices : std::vector<int>{ -1 };

  HostBufferPool          pool(options.memoryBudget > 0 ? options.memoryBudget : DefaultBudget(), onGpu);
  WorkQueue<StagedVolume> toSolve(summary.readers);
  WorkQueue<StagedVolume> toWrite(solverDevices.size());
  std::atomic<std::size_t> next{ 0 };
  std::vector<double>      solverSeconds(solverDevices.size(), 0.0);

  const auto reader = [&] {
    for (std::size_t k = next++; k < todo.size(); k = next++)
    {
      const std::size_t i = todo[k];
      const auto        begin = Clock::now();
      try
      {
        StagedVolume volume = ReadVolume(inputs[i], i, pool);
        results[i].readSeconds = SecondsSince(begin);
        toSolve.Push(std::move(volume));
      }
      catch (const std::exception & error)
      {
        results[i].readSeconds = SecondsSince(begin);
        finish(i, VolumeStatus::Failed, error.what());
      }
    }
    toSolve.ProducerDone();
  };
  const auto solver = [&](std::size_t which) {
    svdlr::Options engine;
    engine.policy = options.policy;
    engine.backend = onGpu ? svdlr::Backend::CUDA : svdlr::Backend::CPU;
    engine.solver = options.solver;
    engine.deviceId = onGpu ? solverDevices[which] : 0;
    engine.threads = options.threads;
    while (auto volume = toSolve.Pop())
    {
      const std::size_t i = volume->index;
      const auto        begin = Clock::now();
      try
      {
        const svdlr::Report report = ReconstructVolume(*volume, engine);
        results[i].solveSeconds = SecondsSince(begin);
        results[i].device = onGpu ? engine.deviceId : -1;
        results[i].AddSlices(report.ranks, report.noiseSigmas);
        solverSeconds[which] += results[i].solveSeconds;
        toWrite.Push(std::move(*volume));
      }
      catch (const std::exception & error)
      {
        results[i].solveSeconds = SecondsSince(begin);
        solverSeconds[which] += results[i].solveSeconds;
        volume->pixels = BufferLease(); // give the buffer back before the next volume
        finish(i, VolumeStatus::Failed, error.what());
      }
    }
    toWrite.ProducerDone();
  };
  const auto writer = [&] {
    while (auto volume = toWrite.Pop())
    {
      const std::size_t i = volume->index;
      const auto        begin = Clock::now();
      try
      {
        WriteVolume(*volume, inputs[i], results[i], options.policy, options.overwrite, options.compressionLevel);
        volume->pixels = BufferLease();
        results[i].writeSeconds = SecondsSince(begin);
        finish(i, VolumeStatus::Done, "");
      }
      catch (const std::exception & error)
      {
        volume->pixels = BufferLease();
        results[i].writeSeconds = SecondsSince(begin);
        finish(i, VolumeStatus::Failed, error.what());
      }
    }
  };

  if (!todo.empty())
  {
    std::vector<std::thread> threads;
    for (unsigned r = 0; r < summary.readers; ++r)
    {
      threads.emplace_back(reader);
    }
    for (std::size_t s = 0; s < solverDevices.size(); ++s)
    {
      threads.emplace_back(solver, s);
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
  summary.pinned = onGpu && pool.AllPinned() && pool.PeakLeasedBytes() > 0;
  summary.peakBytes = pool.PeakLeasedBytes();
  double busy = 0;
  for (const double seconds : solverSeconds)
  {
    busy += seconds;
  }
  summary.solverBusy = summary.wallSeconds > 0 ? busy / (summary.wallSeconds * solverDevices.size()) : 0.0;
  for (const auto & result : results)
  {
    summary.done += result.status == VolumeStatus::Done ? 1 : 0;
    summary.skipped += result.status == VolumeStatus::Skipped ? 1 : 0;
    summary.failed += result.status == VolumeStatus::Failed ? 1 : 0;
  }
  return summary;
}

} // namespace svdlr_batch
