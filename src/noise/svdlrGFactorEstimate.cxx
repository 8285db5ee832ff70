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
// The g-factor map estimated from the series (svdlrLocalDenoiseBackends.h) and DenoiseLocalLowRank's use of it.

#include "svdlr/RankPolicy.h"
#include "denoise/svdlrLocalDenoiseBackends.h"
#include "denoise/svdlrWindowSums.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace svdlr
{

std::string
GFactorEstimateProblem(bool gfactorGiven, bool magnitudeModel)
{
  if (gfactorGiven)
  {
    return "give a g-factor map or ask for its estimate, not both";
  }
  if (magnitudeModel)
  {
    return "a g-factor estimate with variance stabilisation, the noise floor or the sigma floor correction is not "
           "supported yet: their Rician model needs sigma in the magnitude's units, voxel by voxel";
  }
  return {};
}

namespace detail
{
namespace
{

constexpr double kNotANumber = std::numeric_limits<double>::quiet_NaN();

bool
Inside(const std::uint8_t * mask, std::size_t v)
{
  return mask == nullptr || mask[v] != 0;
}

/** The value at `fraction` (0..1) of the sorted `values` (lower neighbour; nth_element reorders them). */
double
Quantile(std::vector<double> values, double fraction)
{
  const std::size_t at = static_cast<std::size_t>(std::floor(fraction * double(values.size() - 1)));
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(at), values.end());
  return values[at];
}

/** The thermal σ (the σ where g = 1) that LocalDenoiseOptions::estimateGFactor's rule takes from a known σ, or 0
 * where none is given. */
double
GivenReferenceSigma(const LocalDenoiseOptions & options, std::size_t voxels)
{
  if (options.policy.noiseSigma > 0.0)
  {
    return options.policy.noiseSigma;
  }
  if (options.noiseSigma == nullptr)
  {
    return 0.0;
  }
  std::vector<double> known;
  for (std::size_t v = 0; v < voxels; ++v)
  {
    if (Inside(options.mask, v) && options.noiseSigma[v] > 0.0f)
    {
      known.push_back(options.noiseSigma[v]);
    }
  }
  if (known.empty())
  {
    throw Error(ErrorCode::InvalidArgument,
                "svdlr: the known sigma is 0 everywhere in the mask: it cannot be the g-factor estimate's g = 1");
  }
  return Quantile(std::move(known), 0.5);
}

} // namespace

std::vector<double>
SmoothSigmaInMask(const float * sigma, const std::uint8_t * mask, const std::array<std::size_t, 3> & size,
                  const std::array<std::size_t, 3> & halfWidth)
{
  const std::size_t   voxels = size[0] * size[1] * size[2];
  std::vector<double> sum(voxels, 0.0), count(voxels, 0.0);
  for (std::size_t v = 0; v < voxels; ++v)
  {
    if (Inside(mask, v) && std::isfinite(sigma[v]) && sigma[v] > 0.0f)
    {
      sum[v] = sigma[v];
      count[v] = 1.0;
    }
  }
  for (unsigned axis = 0; axis < 3; ++axis)
  {
    SumOverWindowsAlongAxis(sum, size, axis, ClippedWindow(halfWidth[axis]));
    SumOverWindowsAlongAxis(count, size, axis, ClippedWindow(halfWidth[axis]));
  }
  for (std::size_t v = 0; v < voxels; ++v)
  {
    // Counts are sums of ones, exact in float64; a box without a valid voxel has count 0 exactly.
    sum[v] = count[v] > 0.0 ? sum[v] / count[v] : kNotANumber;
  }
  return sum;
}

GFactorEstimate
EstimateGFactor(const SeriesView<const float> & input, const LocalDenoiseOptions & options,
                const ProgressCallback & progress)
{
  const std::size_t voxels = input.VoxelCount();
  GFactorEstimate   estimate;
  // The first pass: σ per patch by the default policy, on a scratch output (the input may be the caller's output).
  LocalDenoiseOptions first = options;
  first.policy = DefaultDenoisePolicy();
  first.noiseSigma = nullptr;
  first.gfactor = nullptr;
  first.estimateGFactor = false;
  first.magnitudeNoise = MagnitudeNoiseOptions{};
  first.shrinkage = kDefaultShrinkage;
  first.progress = progress;
  std::vector<float> sigma(voxels, 0.0f);
  {
    std::vector<float>      scratch(voxels * input.volumes); // freed at the end of this scope, before the second pass
    const SeriesView<float> scratchView{ scratch.data(), input.size, input.volumes,
                                         { 1, static_cast<std::ptrdiff_t>(input.size[0]),
                                           static_cast<std::ptrdiff_t>(input.size[0] * input.size[1]),
                                           static_cast<std::ptrdiff_t>(voxels) } };
    LocalDenoiseMaps firstMaps;
    firstMaps.noiseSigma = sigma.data();
    estimate.firstPass = DenoiseLocalLowRank(input, scratchView, firstMaps, first);
  }

  // g changes over many voxels (the coils' geometry); the σ of one patch is noisy: smooth over one patch extent.
  std::array<std::size_t, 3> halfWidth{};
  for (int axis = 0; axis < 3; ++axis)
  {
    halfWidth[axis] = estimate.firstPass.patchSize[axis] / 2;
  }
  const std::vector<double> smooth = SmoothSigmaInMask(sigma.data(), options.mask, input.size, halfWidth);
  std::vector<double>       inMask;
  for (std::size_t v = 0; v < voxels; ++v)
  {
    if (Inside(options.mask, v) && std::isfinite(smooth[v]))
    {
      inMask.push_back(smooth[v]);
    }
  }
  if (inMask.empty())
  {
    throw Error(ErrorCode::InvalidArgument,
                "svdlr: cannot estimate a g-factor map: the first pass found no noise in the mask (sigma 0 or "
                "undefined everywhere)");
  }
  estimate.referenceSigma = GivenReferenceSigma(options, voxels);
  estimate.referenceGiven = estimate.referenceSigma > 0.0;
  if (!estimate.referenceGiven)
  {
    estimate.referenceSigma = Quantile(inMask, kGFactorEstimateReferencePercentile / 100.0);
  }
  // Voxels whose box holds no valid σ (far outside the mask) take the mask's median g: patches read them, so they
  // need a g, and no patch's noise tells it.
  const double fill = Quantile(std::move(inMask), 0.5);
  estimate.g.resize(voxels);
  for (std::size_t v = 0; v < voxels; ++v)
  {
    const double ratio = (std::isfinite(smooth[v]) ? smooth[v] : fill) / estimate.referenceSigma;
    estimate.g[v] = std::clamp(static_cast<float>(ratio), kGFactorEstimateMinimum, kGFactorEstimateMaximum);
  }
  return estimate;
}

LocalDenoiseReport
DenoiseWithEstimatedGFactor(const SeriesView<const float> & input, const SeriesView<float> & output,
                            const LocalDenoiseMaps & maps, const LocalDenoiseOptions & options)
{
  const std::string problem = GFactorEstimateProblem(options.gfactor != nullptr, options.magnitudeNoise.Active());
  if (!problem.empty())
  {
    throw Error(ErrorCode::InvalidArgument, "svdlr: " + problem);
  }
  // Both passes have the same patches: the progress runs once over twice their count.
  std::size_t            firstTotal = 0;
  const ProgressCallback firstProgress =
    options.progress ? ProgressCallback([&](std::size_t done, std::size_t total) {
      firstTotal = total;
      return options.progress(done, 2 * total);
    })
                     : ProgressCallback();
  const GFactorEstimate estimate = EstimateGFactor(input, options, firstProgress);
  LocalDenoiseOptions   second = options;
  second.estimateGFactor = false;
  second.gfactor = estimate.g.data();
  if (options.progress)
  {
    second.progress = [&](std::size_t done, std::size_t total) {
      const std::size_t before = firstTotal > 0 ? firstTotal : total;
      return options.progress(before + done, before + total);
    };
  }
  LocalDenoiseReport report = DenoiseWithGFactor(input, output, maps, second);
  const auto [low, high] = std::minmax_element(estimate.g.begin(), estimate.g.end());
  std::ostringstream note;
  note << "g-factor estimated from a first pass of " << PolicyName(DefaultDenoisePolicy()) << ": g from " << *low
       << " to " << *high << ", g = 1 at sigma " << estimate.referenceSigma
       << (estimate.referenceGiven ? " (the known sigma)" : " (the map's low percentile in the mask)");
  report.notes += (report.notes.empty() ? "" : "; ") + note.str();
  return report;
}

} // namespace detail
} // namespace svdlr
