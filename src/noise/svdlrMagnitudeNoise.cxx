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
// The magnitude noise model applied to series (svdlr/MagnitudeNoise.h), and DenoiseLocalLowRank's magnitude path:
// sigma, stabilise, denoise, invert, or denoise, correct sigma for the floor, remove the floor
// (svdlrLocalDenoiseBackends.h).
#include "svdlr/MagnitudeNoise.h"

#include "noise/svdlrComplexSeriesDetail.h"
#include "denoise/svdlrLocalDenoiseBackends.h"
#include "noise/svdlrMagnitudeTransform.h"
#include "shared/svdlrParallel.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace svdlr
{
namespace
{

/** body(t, z, y) for every row of a series of `size` voxels and `volumes` volumes, in parallel over (volume, plane)
 * pairs: each row is contiguous along x in a compact series, so that the loops stream through memory (a loop over
 * voxels, then volumes, jumps a whole volume between reads and divides to find each voxel's row). */
template <typename TBody>
void
ForEachRow(const std::array<std::size_t, 3> & size, std::size_t volumes, unsigned threads, const TBody & body)
{
  detail::PoolParallelFor(threads, volumes * size[2], [&](std::size_t task) {
    const std::size_t t = task / size[2], z = task % size[2];
    for (std::size_t y = 0; y < size[1]; ++y)
    {
      body(t, z, y);
    }
  });
}

template <typename T>
T *
RowStart(const SeriesView<T> & view, std::size_t t, std::size_t z, std::size_t y)
{
  return view.data + static_cast<std::ptrdiff_t>(y) * view.strides[1] + static_cast<std::ptrdiff_t>(z) * view.strides[2] +
         static_cast<std::ptrdiff_t>(t) * view.strides[3];
}

/** out(v, t) = f(sigma(v), in(v, t)) for every voxel (in parallel over rows), f keeping the value where sigma is 0. */
template <typename TFunction>
void
ApplyPerVoxel(const SeriesView<const float> & in, const float * sigma, const SeriesView<float> & out,
              unsigned threads, const char * what, const TFunction & f)
{
  detail::RequireSeries(in, what);
  detail::RequireSameShape(in, out, "the output");
  if (!sigma)
  {
    throw Error(ErrorCode::InvalidArgument, std::string("svdlr: ") + what + " needs sigma per voxel");
  }
  const std::size_t voxels = in.VoxelCount();
  for (std::size_t v = 0; v < voxels; ++v)
  {
    if (!(std::isfinite(sigma[v]) && sigma[v] >= 0.0f))
    {
      throw Error(ErrorCode::InvalidArgument, "svdlr: sigma must be finite and >= 0, got " +
                                                std::to_string(sigma[v]) + " at voxel " + std::to_string(v));
    }
  }
  ForEachRow(in.size, in.volumes, threads, [&](std::size_t t, std::size_t z, std::size_t y) {
    const float * source = RowStart(in, t, z, y);
    float *       target = RowStart(out, t, z, y);
    const float * rowSigma = sigma + (z * in.size[1] + y) * in.size[0];
    for (std::size_t x = 0; x < in.size[0]; ++x)
    {
      target[static_cast<std::ptrdiff_t>(x) * out.strides[0]] =
        f(rowSigma[x], source[static_cast<std::ptrdiff_t>(x) * in.strides[0]]);
    }
  });
}

/** Seconds since `start`, and restarts it: the magnitude path's steps are timed back to back. */
double
Lap(std::chrono::steady_clock::time_point & start)
{
  const auto   now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - start).count();
  start = now;
  return seconds;
}

enum class Direction
{
  Stabilise, // StabilisedValue
  Invert     // UnstabilisedValue
};

/** `transform` applied to every voxel of `in` into `out` (which may be `in`). */
void
ApplyTransform(const SeriesView<const float> & in, const MagnitudeTransform & transform, Direction direction,
               const SeriesView<float> & out, unsigned threads)
{
  if (direction == Direction::Stabilise)
  {
    ApplyPerVoxel(in, transform.sigma, out, threads, "the variance-stabilising transform",
                  [&transform](float s, float m) { return StabilisedValue(transform, s, m); });
  }
  else
  {
    ApplyPerVoxel(in, transform.sigma, out, threads, "the inverse variance-stabilising transform",
                  [&transform](float s, float d) { return UnstabilisedValue(transform, s, d); });
  }
}

MagnitudeTransform
TransformFor(unsigned coils, const float * sigma, MagnitudeEstimate estimate)
{
  MagnitudeTransform transform;
  transform.tables = NoncentralChiModel::ForCoils(coils).Tables();
  transform.sigma = sigma;
  transform.toSignal = estimate == MagnitudeEstimate::Signal;
  return transform;
}

} // namespace

void
StabiliseMagnitude(const SeriesView<const float> & magnitude, const float * sigma, unsigned coils,
                   const SeriesView<float> & out, unsigned threads)
{
  ApplyTransform(magnitude, TransformFor(coils, sigma, MagnitudeEstimate::Signal), Direction::Stabilise, out, threads);
}

void
UnstabiliseMagnitude(const SeriesView<const float> & denoised, const float * sigma, unsigned coils,
                     MagnitudeEstimate estimate, const SeriesView<float> & out, unsigned threads)
{
  ApplyTransform(denoised, TransformFor(coils, sigma, estimate), Direction::Invert, out, threads);
}

void
CorrectNoiseFloor(const SeriesView<const float> & magnitude, const float * sigma, unsigned coils,
                  const SeriesView<float> & out, unsigned threads)
{
  const NoncentralChiModel & model = NoncentralChiModel::ForCoils(coils);
  ApplyPerVoxel(magnitude, sigma, out, threads, "the noise-floor correction", [&model](float s, float m) {
    return s > 0.0f ? static_cast<float>(s * model.SignalFromMeanMagnitude(static_cast<double>(m) / s)) : m;
  });
}

MagnitudeNoiseOptions
MagnitudeNoiseUsed(const LocalDenoiseOptions & options, bool negativeValues)
{
  MagnitudeNoiseOptions model = options.magnitudeNoise;
  model.automatic = false;
  if (!options.magnitudeNoise.automatic || options.magnitudeNoise.Active())
  {
    return model;
  }
  const bool sigmaEstimated = options.noiseSigma == nullptr && options.policy.noiseSigma == 0.0 &&
                              PatchesHaveSigma(options.policy, false);
  if (!negativeValues && sigmaEstimated && options.gfactor == nullptr && !options.estimateGFactor)
  {
    model.stabilise = kAutomaticMagnitudeStabilise;
    model.noiseFloor = kAutomaticMagnitudeNoiseFloor;
  }
  return model;
}

bool
HasNegativeValue(const SeriesView<const float> & input, unsigned threads)
{
  std::atomic<bool> negative{ false };
  ForEachRow(input.size, input.volumes, threads, [&](std::size_t t, std::size_t z, std::size_t y) {
    const float * row = RowStart(input, t, z, y);
    bool          found = false;
    for (std::size_t x = 0; x < input.size[0]; ++x)
    {
      found |= row[static_cast<std::ptrdiff_t>(x) * input.strides[0]] < 0.0f;
    }
    if (found)
    {
      negative.store(true, std::memory_order_relaxed);
    }
  });
  return negative.load();
}

std::string
MagnitudeNoiseName(const MagnitudeNoiseOptions & model)
{
  std::string name;
  for (const auto & [on, part] : { std::pair{ model.stabilise, "vst" }, std::pair{ model.noiseFloor, "noise-floor" },
                                   std::pair{ model.sigmaFloorCorrection, "sigma-floor-correction" } })
  {
    name += on ? (name.empty() ? "" : "+") + std::string(part) : "";
  }
  return name.empty() ? "none" : name;
}

namespace detail
{

void
DenoiseBetweenHostTransforms(const SeriesView<const float> & input, const SeriesView<float> & output,
                             const MagnitudeTransform & transform, unsigned threads,
                             LocalDenoiseReport::MagnitudeSteps & seconds, const std::function<void()> & denoise)
{
  auto clock = std::chrono::steady_clock::now();
  ApplyTransform(input, transform, Direction::Stabilise, output, threads);
  seconds.stabilise = Lap(clock);
  denoise();
  seconds.denoise = Lap(clock);
  ApplyTransform(output, transform, Direction::Invert, output, threads);
  seconds.inverse = Lap(clock);
}

namespace
{

/** The options of the first pass that only measures each voxel's sigma for the stabilisation: a cuboid patch's
 * centres on the body-centred lattice whose stride is the patch's smallest extent over kPatchExtentPerSigmaPassStride
 * (overlap-averaged, whatever the aggregation asked for the output, so that every voxel between the centres gets a
 * sigma). */
LocalDenoiseOptions
SigmaPassOptions(const SeriesView<const float> & input, const LocalDenoiseOptions & options)
{
  LocalDenoiseOptions pass = options;
  if (options.patchShape != PatchShape::Cuboid)
  {
    return pass;
  }
  const std::array<std::size_t, 3> patch = PatchSizeUsed(input.size, input.volumes, options.patchSize);
  const std::size_t smallest = *std::min_element(patch.begin(), patch.end());
  pass.aggregation = PatchAggregation::OverlapAverage;
  pass.patchStride = std::max<std::size_t>(1, smallest / kPatchExtentPerSigmaPassStride);
  return pass;
}

} // namespace

LocalDenoiseReport
DenoiseMagnitudeSeries(const SeriesView<const float> & input, const SeriesView<float> & output,
                       const LocalDenoiseMaps & maps, const LocalDenoiseOptions & options)
{
  const MagnitudeNoiseOptions & model = options.magnitudeNoise;
  const bool knownSigma = options.noiseSigma != nullptr;
  const std::string problem = SigmaFloorCorrectionProblem(model, knownSigma);
  if (!problem.empty())
  {
    throw Error(ErrorCode::InvalidArgument, "svdlr: " + problem);
  }
  if (!knownSigma && !PatchesHaveSigma(options.policy, false))
  {
    throw Error(ErrorCode::InvalidArgument,
                "svdlr: variance stabilisation, the noise floor and the sigma floor correction need sigma: a known "
                "sigma map, or a rank policy that estimates it (Marchenko-Pastur or Gavish-Donoho)");
  }
  NoncentralChiModel::ForCoils(model.coils); // its errors (the coil count) before any work
  LocalDenoiseOptions plain = options;
  plain.magnitudeNoise = {};
  const std::size_t voxels = input.VoxelCount();
  const unsigned    threads = WorkerCount(options.threads);

  // Each voxel's sigma, 0 outside the mask, where every transform is then the identity and the series is copied.
  std::vector<float> sigma(voxels, 0.0f);
  std::vector<float> estimated;
  LocalDenoiseMaps   outMaps = maps;
  if (!outMaps.noiseSigma)
  {
    estimated.resize(voxels);
    outMaps.noiseSigma = estimated.data();
  }
  auto clock = std::chrono::steady_clock::now();
  if (!model.stabilise)
  {
    // One pass over the magnitude, whose sigma (given or estimated, then corrected for the floor's spread if asked)
    // places the floor.
    LocalDenoiseReport report = DenoiseLocalLowRank(input, output, outMaps, plain);
    report.magnitudeSeconds.denoise = Lap(clock);
    for (std::size_t v = 0; v < voxels; ++v)
    {
      sigma[v] = options.mask && !options.mask[v] ? 0.0f : outMaps.noiseSigma[v];
    }
    if (model.sigmaFloorCorrection)
    {
      CorrectSigmaForNoiseFloor(output, sigma.data(), options.mask, report.patchSize, model.coils, sigma.data(),
                                threads);
      std::copy(sigma.begin(), sigma.end(), outMaps.noiseSigma);
    }
    if (model.noiseFloor)
    {
      CorrectNoiseFloor(output, sigma.data(), model.coils, output, threads);
    }
    report.magnitudeSeconds.inverse = Lap(clock);
    report.magnitudeNoise = model;
    return report;
  }

  LocalDenoiseMaps firstMaps;
  firstMaps.noiseSigma = sigma.data();
  if (knownSigma)
  {
    std::copy(options.noiseSigma, options.noiseSigma + voxels, sigma.begin());
  }
  else if (options.volumeGroups == nullptr)
  {
    // sigma from a first pass over the magnitude, on a coarser lattice, that forms the maps alone: no eigenvectors,
    // no approximation and no series written (on 176x176x120x200 on the H200 the pass took 0.69 s with them and
    // 0.50 s without; nor does it need a scratch series when the caller denoises in place).
    const SeriesView<float> mapsOnly{ nullptr, input.size, input.volumes, input.strides };
    DenoiseLowRankPass(input, mapsOnly, firstMaps, SigmaPassOptions(input, plain), nullptr);
  }
  else
  {
    // The front end demeans each group into the output before the pass: no copy of the series is made beside the
    // input and the output (3 GB on a 176x176x120x200 series). The first pass's own denoised series, never read,
    // goes to the output, unless the output is the input (a caller denoising in place), whose values the second
    // pass still needs; then to a scratch series.
    // Not zeroed: the pass writes every element, and nothing reads them.
    const bool inPlace = static_cast<const void *>(input.data) == static_cast<const void *>(output.data);
    const std::unique_ptr<float[]> scratch(inPlace ? new float[voxels * input.volumes] : nullptr);
    const SeriesView<float> firstOutput =
      inPlace ? SeriesView<float>{ scratch.get(), input.size, input.volumes,
                                   { 1, static_cast<std::ptrdiff_t>(input.size[0]),
                                     static_cast<std::ptrdiff_t>(input.size[0] * input.size[1]),
                                     static_cast<std::ptrdiff_t>(voxels) } }
              : output;
    DenoiseLocalLowRank(input, firstOutput, firstMaps, SigmaPassOptions(input, plain));
  }
  LocalDenoiseReport::MagnitudeSteps seconds;
  seconds.sigmaPass = Lap(clock);
  for (std::size_t v = 0; options.mask && v < voxels; ++v)
  {
    sigma[v] = options.mask[v] ? sigma[v] : 0.0f;
  }
  const MagnitudeTransform transform = TransformFor(
    model.coils, sigma.data(), model.noiseFloor ? MagnitudeEstimate::Signal : MagnitudeEstimate::ExpectedMagnitude);
  // The stabilised noise has about the magnitude's sigma everywhere: a known sigma stays known; an estimated one is
  // estimated again, now without the floor's bias.
  LocalDenoiseReport report;
  if (options.volumeGroups == nullptr)
  {
    // The low-rank pass stabilises and inverts as it goes (DenoiseLowRankPass): the GPU as each slab goes in and
    // out, the CPU around its run. On the GPU the series then crosses the host once each way, as without the model:
    // on 176x176x120x200 the host's two passes and the in-place copy had cost 2.4 s of 9.9 s.
    report = DenoiseLowRankPass(input, output, outMaps, plain, &transform);
    seconds.stabilise = report.magnitudeSeconds.stabilise;
    seconds.inverse = report.magnitudeSeconds.inverse;
    seconds.denoise = Lap(clock) - seconds.stabilise - seconds.inverse;
  }
  else
  {
    // Each group's mean is taken out of the stabilised series, so it is stabilised before the pass demeans it.
    DenoiseBetweenHostTransforms(input, output, transform, threads, seconds,
                                 [&] { report = DenoiseLocalLowRank(output, output, outMaps, plain); });
  }
  report.magnitudeSeconds = seconds;
  report.magnitudeNoise = model;
  return report;
}

} // namespace detail
} // namespace svdlr
