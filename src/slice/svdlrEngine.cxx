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
// The engine's front end: validates a request, picks the backend, and runs it.
#include "svdlr/CpuThreads.h"
#include "svdlr/Engine.h"
#include "svdlr/Names.h"

#include "shared/svdlrBackendChoice.h"
#include "shared/svdlrBackends.h"

#include <cmath>
#include <limits>
#include <sstream>

namespace svdlr
{

void
ReleaseCudaResources() noexcept
{
  WaitForCudaWarmUp();
  detail::ReleaseCachedCudaResources();
}

void
ReleaseCudaDevices() noexcept
{
  ReleaseCudaResources();
  for (const int deviceId : detail::TakeWarmCudaDevices())
  {
    detail::ResetCudaDevice(deviceId);
  }
}

bool
CudaBackendBuilt() noexcept
{
  return detail::CudaCompiledIn();
}

int
CudaDeviceCount() noexcept
{
  return detail::CudaVisibleDevices();
}

void *
AllocatePinnedHostMemory(std::size_t bytes) noexcept
{
  return bytes == 0 ? nullptr : detail::AllocatePinnedHost(bytes);
}

void
FreePinnedHostMemory(void * memory) noexcept
{
  if (memory != nullptr)
  {
    detail::FreePinnedHost(memory);
  }
}

bool
CudaDeviceUsable(int deviceId, std::string * why)
{
  std::string reason;
  const bool  usable = detail::CudaDeviceReady(deviceId, reason);
  if (why != nullptr)
  {
    *why = reason;
  }
  return usable;
}

namespace
{

[[noreturn]] void
ThrowInvalid(const std::string & message)
{
  throw Error(ErrorCode::InvalidArgument, "svdlr: " + message);
}

template <typename T>
bool
Overlaps(const MatrixBatch<const T> & input, const MatrixBatch<T> & output)
{
  const auto span = [](const auto & batch) { return (batch.count - 1) * batch.matrixStride + batch.MatrixSize(); };
  const T *  inBegin = input.data;
  const T *  outBegin = output.data;
  return inBegin < outBegin + span(output) && outBegin < inBegin + span(input);
}

template <typename T>
void
Validate(const MatrixBatch<const T> & input, const MatrixBatch<T> & output, const Options & options)
{
  if (input.count == 0 || input.rows == 0 || input.cols == 0)
  {
    std::ostringstream msg;
    msg << "empty input: " << input.count << " matrices of " << input.rows << " x " << input.cols;
    ThrowInvalid(msg.str());
  }
  if (input.data == nullptr || output.data == nullptr)
  {
    ThrowInvalid("input or output data pointer is null");
  }
  if (output.count != input.count || output.rows != input.rows || output.cols != input.cols)
  {
    ThrowInvalid("output batch shape differs from the input batch shape");
  }
  if (input.count > 1 && (input.matrixStride < input.MatrixSize() || output.matrixStride < output.MatrixSize()))
  {
    ThrowInvalid("matrix stride is smaller than rows * cols, so matrices would overlap");
  }
  const bool inPlace = static_cast<const void *>(input.data) == static_cast<const void *>(output.data) &&
                       (input.count == 1 || input.matrixStride == output.matrixStride);
  if (!inPlace && Overlaps(input, output))
  {
    ThrowInvalid("output overlaps the input without being the same buffer");
  }

  const std::string problem = PolicyProblem(options.policy, options.solver);
  if (!problem.empty())
  {
    ThrowInvalid(problem);
  }
  if (NeedsGivenSigma(options.policy) && !(options.policy.noiseSigma > 0.0))
  {
    ThrowInvalid(std::string("the ") + PolicyName(options.policy) +
                 " policy needs a known noise sigma: set RankPolicy::noiseSigma > 0");
  }
  if (options.deviceId < 0)
  {
    ThrowInvalid("device id must be >= 0, got " + std::to_string(options.deviceId));
  }
}

Report
SizedReport(std::size_t count)
{
  Report report;
  report.ranks.assign(count, 0);
  report.singularValues.assign(count, {});
  report.noiseSigmas.assign(count, std::numeric_limits<double>::quiet_NaN());
  return report;
}

/** The CPU backend always computes the exact SVD, whatever options.solver asks. */
template <typename T>
void
RunOnCpu(const MatrixBatch<const T> & input, const MatrixBatch<T> & output, const Options & options, Report & report)
{
  report.backend = Backend::CPU;
  report.solver = Solver::Exact;
  report.slicesRedone = 0; // an Auto run redone on the CPU keeps nothing of its GPU attempt
  report.redoneMatrices.clear();
  detail::RunCpu(input, output, options, report);
}

template <typename T>
Report
Run(const MatrixBatch<const T> & input, const MatrixBatch<T> & output, const Options & options)
{
  Validate(input, output, options);

  Report report = SizedReport(input.count);

  report.backend = detail::RunOnChosenBackend(
    options.backend,
    options.deviceId,
    detail::AutoPrefersCpuWhenCold(input.count, input.rows, input.cols, options),
    [&] {
      report.backend = Backend::CUDA;
      const RunningParallelJob deviceCall(ParallelJobKind::DeviceEngineCall); // its host side shares with other GPUs'
      detail::RunCuda(input, output, options, report);
    },
    [&] { RunOnCpu(input, output, options, report); },
    report.notes);
  return report;
}

// Device pointers: only the CUDA backend can read them, so there is no CPU fallback.
template <typename T>
Report
RunOnDevice(const MatrixBatch<const T> & input, const MatrixBatch<T> & output, const Options & options, void * stream)
{
  Validate(input, output, options);
  if (options.backend == Backend::CPU)
  {
    ThrowInvalid("ReconstructOnDevice takes GPU memory, which the CPU backend cannot read: use Backend::CUDA or "
                 "Backend::Auto, or Reconstruct on host memory");
  }
  WaitForCudaWarmUp(); // returns at once on the warm-up's own thread
  std::string why;
  if (!detail::CudaDeviceReady(options.deviceId, why))
  {
    throw Error(ErrorCode::BackendUnavailable, "svdlr: ReconstructOnDevice needs the CUDA backend: " + why);
  }
  Report report = SizedReport(input.count);
  report.backend = Backend::CUDA;
  const RunningParallelJob deviceCall(ParallelJobKind::DeviceEngineCall);
  detail::RunCudaOnDevice(input, output, options, report, stream);
  detail::NoteCudaDeviceWarm(options.deviceId);
  return report;
}

} // namespace

Report
Reconstruct(const MatrixBatch<const float> & input, const MatrixBatch<float> & output, const Options & options)
{
  return Run(input, output, options);
}

Report
Reconstruct(const MatrixBatch<const double> & input, const MatrixBatch<double> & output, const Options & options)
{
  return Run(input, output, options);
}

Report
ReconstructOnDevice(const MatrixBatch<const float> & input, const MatrixBatch<float> & output, const Options & options,
                    void * stream)
{
  return RunOnDevice(input, output, options, stream);
}

Report
ReconstructOnDevice(const MatrixBatch<const double> & input, const MatrixBatch<double> & output,
                    const Options & options, void * stream)
{
  return RunOnDevice(input, output, options, stream);
}

} // namespace svdlr
