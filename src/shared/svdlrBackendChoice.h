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
#ifndef svdlr_BackendChoice_h
#define svdlr_BackendChoice_h

// How every entry point of the engine (Reconstruct, DenoiseLocalLowRank) picks its backend, in one place so that
// Backend::Auto means the same thing everywhere.

#include "svdlr/Engine.h"
#include "shared/svdlrBackends.h"
#include "svdlr/CpuThreads.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace svdlr
{
namespace detail
{

// What the engine knows about the CUDA backend's start-up in this process: whether StartCudaWarmUp runs, and
// which devices have already been set up, so that Backend::Auto can weigh a cold GPU against the CPU.

/** Records that `deviceId` has run CUDA work in this process (its context, handles and kernels are loaded). */
void
NoteCudaDeviceWarm(int deviceId) noexcept;

/** The devices NoteCudaDeviceWarm recorded, which count as cold again from now on (ReleaseCudaDevices). */
std::vector<int>
TakeWarmCudaDevices() noexcept;

/** True when `deviceId` has run CUDA work in this process, or a warm-up for it runs now. */
bool
CudaDeviceWarmOrWarming(int deviceId) noexcept;

/** What a fresh process pays before its first CUDA result, measured on the H100 machine (the filter cold, minus
 * its warm time: 0.37-0.62 s, docs/performance.md). Auto runs smaller jobs on the CPU while the GPU is cold. */
constexpr double kCudaColdStartSeconds = 0.35;

/** A rough CPU time for the exact reconstruction of `count` float matrices of rows x cols on `threads` threads:
 * the Gram matrix (q p^2), its eigen-decomposition (about 5 p^3) and the two products (4 q p k), p the smaller
 * side, at 4 GFLOP/s per thread: the CPU backend's rate on Colin27 on the H100 machine's 16 cores (124 ms for
 * 181 slices; the 2-core CI machine reaches 10). Only for Auto's choice. */
inline double
EstimatedCpuSeconds(std::size_t count, std::size_t rows, std::size_t cols, std::size_t rank, unsigned threads)
{
  const double p = static_cast<double>(rows < cols ? rows : cols);
  const double q = static_cast<double>(rows < cols ? cols : rows);
  const double flops = static_cast<double>(count) * (q * p * p + 5.0 * p * p * p + 4.0 * q * p * static_cast<double>(rank));
  return flops / (4e9 * static_cast<double>(threads > 0 ? threads : 1));
}

/** True when Backend::Auto runs this job on the CPU while the GPU is cold: its estimated CPU time is below
 * kCudaColdStartSeconds. */
inline bool
AutoPrefersCpuWhenCold(std::size_t count, std::size_t rows, std::size_t cols, const Options & options)
{
  const std::size_t rank =
    options.policy.kind == RankPolicy::Kind::FixedRank ? options.policy.rank : std::min(rows, cols) / 2;
  const unsigned threads = options.threads > 0 ? options.threads : UsableCpuThreads();
  return EstimatedCpuSeconds(count, rows, cols, rank, threads) < kCudaColdStartSeconds;
}

/** Errors after which Auto may still succeed on the CPU: the GPU could not run this job at all. */
inline bool
GpuCouldNotRun(ErrorCode code)
{
  return code == ErrorCode::BackendUnavailable || code == ErrorCode::DeviceFailure || code == ErrorCode::OutOfMemory;
}

/** Runs a validated job on the backend `requested` asks for and returns the one that did it:
 * - CPU: `runCpu()`;
 * - CUDA: `runCuda()`, or Error(BackendUnavailable) when the build or the device cannot run it;
 * - Auto: `runCpu()` at once when the GPU is cold in this process (no CUDA work yet, no warm-up running) and
 *   `preferCpuWhenCold` (AutoPrefersCpuWhenCold: the CPU finishes before a cold GPU would start); else `runCuda()` when the device is ready, else, or when it throws an error
 *   after which the GPU could not run the job (GpuCouldNotRun), `runCpu()`, with the reason in `notes` when the
 *   build has CUDA.
 * Other errors, and every error when CUDA was asked for, propagate. A warm-up in flight is waited for before
 * the GPU is used (StartCudaWarmUp). */
template <typename TRunCuda, typename TRunCpu>
Backend
RunOnChosenBackend(Backend requested, int deviceId, bool preferCpuWhenCold, TRunCuda && runCuda, TRunCpu && runCpu,
                   std::string & notes)
{
  const bool coldAndSmall =
    requested == Backend::Auto && preferCpuWhenCold && !CudaDeviceWarmOrWarming(deviceId);
  if (requested == Backend::CPU || coldAndSmall)
  {
    runCpu();
    return Backend::CPU;
  }

  WaitForCudaWarmUp(); // returns at once on the warm-up's own thread
  std::string why;
  const bool  gpuReady = CudaDeviceReady(deviceId, why);
  if (requested == Backend::CUDA && !gpuReady)
  {
    throw Error(ErrorCode::BackendUnavailable, "svdlr: CUDA backend requested but unavailable: " + why);
  }
  if (gpuReady)
  {
    try
    {
      runCuda();
      NoteCudaDeviceWarm(deviceId);
      return Backend::CUDA;
    }
    catch (const Error & error)
    {
      if (requested == Backend::CUDA || !GpuCouldNotRun(error.Code()))
      {
        throw;
      }
      why = error.what();
    }
  }
  if (CudaCompiledIn())
  {
    notes = "CUDA backend unavailable, ran on the CPU: " + why;
  }
  runCpu();
  return Backend::CPU;
}

} // namespace detail
} // namespace svdlr

#endif
