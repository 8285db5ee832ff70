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
// The local denoiser's CUDA backend as the engine calls it (svdlrLocalDenoiseBackends.h): one run on the device
// (svdlrCudaLocalDenoiser.h) with its two fallbacks. When our eigen-solver gives up on a patch, the series is redone
// with cuSOLVER's. In place, the output is held aside until the run has succeeded, so that a failed run leaves the
// input intact for the CPU fallback (svdlrLocalDenoiseBackends.h) and for the cuSOLVER rerun.
#include "svdlrLocalDenoiseCuda.h"
#include "svdlr/CpuThreads.h"

#include "svdlrCudaLocalDenoiser.h"
#include "shared/svdlrParallel.h"

#include <memory>
#include <vector>

namespace svdlr
{
namespace detail
{
namespace
{

/** Runs the denoiser, and once more with cuSOLVER's eigen-solver if ours gave up on a patch. */
void
RunWithFallback(const SeriesView<const float> & input, const SeriesView<float> & output, const LocalDenoiseMaps & maps,
                const LocalDenoiseOptions & options, const std::array<std::size_t, 3> & patch,
                LocalDenoiseReport & report, const LocalDenoiseCudaTuning & tuning, LocalDenoiseCudaTrace * trace,
                const MagnitudeTransform * transform)
{
  try
  {
    report.patches =
      RunCudaLocalDenoiser(input, output, maps, options, patch, tuning, trace, transform, &report.peakDeviceBytes);
    return;
  }
  catch (const OwnSolverFailed &)
  {
    // Our eigen-solver gave up on some patch (a tridiagonal matrix with NaN or Inf). The input is untouched
    // (RunLocalDenoiseCudaTuned keeps in-place output aside), so the series is redone with cuSOLVER.
    if (tuning.cusolver)
    {
      throw Error(ErrorCode::NumericalFailure, "svdlr: cuSOLVER's eigen-solver did not converge on a patch");
    }
  }
  LocalDenoiseCudaTuning reference = tuning;
  reference.cusolver = true;
  report.patches =
    RunCudaLocalDenoiser(input, output, maps, options, patch, reference, trace, transform, &report.peakDeviceBytes);
}

/** The output held aside (packed, x fastest, volumes outermost) -> the caller's output view. */
void
CopyHeldOutput(const float * held, const SeriesView<float> & output, const LocalDenoiseOptions & options)
{
  const std::size_t voxels = output.VoxelCount();
  const auto & so = output.strides;
  const auto   copyPlane = [&](std::size_t unit) {
    const std::size_t t = unit / output.size[2];
    const std::size_t z = unit % output.size[2];
    const float *     from = held + t * voxels + z * output.size[0] * output.size[1];
    for (std::size_t y = 0; y < output.size[1]; ++y)
    {
      float * row = output.data + static_cast<std::ptrdiff_t>(t) * so[3] + static_cast<std::ptrdiff_t>(z) * so[2] +
                    static_cast<std::ptrdiff_t>(y) * so[1];
      for (std::size_t x = 0; x < output.size[0]; ++x)
      {
        row[static_cast<std::ptrdiff_t>(x) * so[0]] = *from++;
      }
    }
  };
  const std::size_t units = output.volumes * output.size[2];
  if (options.parallelFor)
  {
    options.parallelFor(units, copyPlane);
  }
  else
  {
    PoolParallelFor(WorkerCount(options.threads), units, copyPlane);
  }
}

} // namespace

void
RunLocalDenoiseCudaTuned(const SeriesView<const float> & input, const SeriesView<float> & output,
                         const LocalDenoiseMaps & maps, const LocalDenoiseOptions & options,
                         const std::array<std::size_t, 3> & patch, LocalDenoiseReport & report,
                         const LocalDenoiseCudaTuning & tuning, LocalDenoiseCudaTrace * trace,
                         const MagnitudeTransform * transform)
{
  // A device job also where Backend::Auto chose the GPU (counted once inside DenoiseLocalLowRank's own for CUDA).
  const RunningParallelJob deviceCall(ParallelJobKind::DeviceEngineCall);
  const bool               inPlace = static_cast<const void *>(input.data) == static_cast<const void *>(output.data);
  if (!inPlace)
  {
    RunWithFallback(input, output, maps, options, patch, report, tuning, trace, transform);
    return;
  }
  // In place, the output is held aside and written only once the whole run has succeeded: an error part way
  // (after which Auto falls back to the CPU, which reads the input) must leave the input as it was.
  const std::size_t voxels = input.VoxelCount();
  // Not zeroed (every element is written before it is read): zeroing 3 GB at 200 volumes cost a pass on one thread.
  const std::unique_ptr<float[]> held(new float[voxels * input.volumes]);
  const auto         nx = static_cast<std::ptrdiff_t>(input.size[0]);
  const auto         ny = static_cast<std::ptrdiff_t>(input.size[1]);
  const SeriesView<float> aside{ held.get(), input.size, input.volumes,
                                 { 1, nx, nx * ny, static_cast<std::ptrdiff_t>(voxels) } };
  RunWithFallback(input, aside, maps, options, patch, report, tuning, trace, transform);
  CopyHeldOutput(held.get(), output, options);
}

void
RunLocalDenoiseCuda(const SeriesView<const float> & input, const SeriesView<float> & output,
                    const LocalDenoiseMaps & maps, const LocalDenoiseOptions & options,
                    const std::array<std::size_t, 3> & patch, LocalDenoiseReport & report,
                    const MagnitudeTransform * transform)
{
  RunLocalDenoiseCudaTuned(input, output, maps, options, patch, report, LocalDenoiseCudaTuning{}, nullptr, transform);
}

} // namespace detail
} // namespace svdlr
