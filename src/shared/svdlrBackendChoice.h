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
#include "shared/svdlrCudaWarmUp.h"

#include <string>

namespace svdlr
{
namespace detail
{

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
