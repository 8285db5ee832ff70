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
// The noise level from noise-only volumes (svdlr/ComplexSeries.h), and the shape checks the complex-series functions
// share (svdlrComplexSeriesDetail.h).
#include "svdlr/ComplexSeries.h"

#include "noise/svdlrComplexSeriesDetail.h"
#include "denoise/svdlrWindowSums.h"

#include <cmath>
#include <string>
#include <vector>

namespace svdlr
{
namespace detail
{

void
RequireSeries(const SeriesView<const float> & series, const char * what)
{
  if (!series.data || series.VoxelCount() == 0 || series.volumes == 0)
  {
    throw Error(ErrorCode::InvalidArgument, std::string(what) + " is empty: it needs voxels and volumes");
  }
}

void
RequireSameShape(const SeriesView<const float> & reference, const SeriesView<const float> & other, const char * what)
{
  if (!other.data || other.size != reference.size || other.volumes != reference.volumes)
  {
    throw Error(ErrorCode::InvalidArgument,
                std::string(what) + " must have the size and volume count of the series (" +
                  std::to_string(reference.size[0]) + " x " + std::to_string(reference.size[1]) + " x " +
                  std::to_string(reference.size[2]) + ", " + std::to_string(reference.volumes) + " volumes), got " +
                  std::to_string(other.size[0]) + " x " + std::to_string(other.size[1]) + " x " +
                  std::to_string(other.size[2]) + ", " + std::to_string(other.volumes) + " volumes");
  }
}

} // namespace detail

NoiseScanEstimate
EstimateNoiseFromScan(const SeriesView<const float> & first, const SeriesView<const float> & imag, float * sigmaMap,
                      const NoiseScanOptions & options)
{
  detail::RequireSeries(first, "the noise scan");
  const bool complexSamples = imag.data != nullptr;
  if (complexSamples)
  {
    detail::RequireSameShape(first, imag, "the noise scan's imaginary part");
  }
  if (options.window == 0 || options.window % 2 == 0)
  {
    throw Error(ErrorCode::InvalidArgument,
                "the noise scan's window must be odd and >= 1 voxels, got " + std::to_string(options.window));
  }
  if (options.coils == 0 || (complexSamples && options.coils != 1))
  {
    throw Error(ErrorCode::InvalidArgument, "the noise scan's coil count must be >= 1 (and 1 for complex samples)");
  }
  // sumOfSquares[v] = sum over volumes of |z|^2 (complex) or M^2 (magnitude): E = volumes * 2 coils sigma^2.
  const std::size_t   voxels = first.VoxelCount();
  std::vector<double> sumOfSquares(voxels, 0.0);
  double              total = 0.0;
  for (std::size_t t = 0; t < first.volumes; ++t)
  {
    for (std::size_t v = 0; v < voxels; ++v)
    {
      const double a = first.data[detail::ElementOffset(first, v, t)];
      const double b = complexSamples ? imag.data[detail::ElementOffset(imag, v, t)] : 0.0;
      if (!std::isfinite(a) || !std::isfinite(b))
      {
        throw Error(ErrorCode::NonFiniteInput,
                    "the noise scan holds NaN or Inf at voxel " + std::to_string(v) + ", volume " + std::to_string(t),
                    static_cast<std::ptrdiff_t>(v));
      }
      sumOfSquares[v] += a * a + b * b;
    }
  }
  if (options.gfactor)
  {
    // Each sample divided by g: (|z| / g)^2 summed over the volumes is sumOfSquares / g^2.
    const std::string problem = GFactorMapProblem(options.gfactor, first.size);
    if (!problem.empty())
    {
      throw Error(ErrorCode::InvalidArgument, "svdlr: the noise scan's " + problem);
    }
    for (std::size_t v = 0; v < voxels; ++v)
    {
      const double g = options.gfactor[v];
      sumOfSquares[v] /= g * g;
    }
  }
  for (double s : sumOfSquares)
  {
    total += s;
  }
  const double perSample = 2.0 * options.coils * static_cast<double>(first.volumes); // E[sumOfSquares] / sigma^2
  NoiseScanEstimate estimate;
  estimate.sigma = std::sqrt(total / (perSample * static_cast<double>(voxels)));
  std::size_t windowVoxels = 1;
  for (std::size_t extent : first.size)
  {
    windowVoxels *= std::min(options.window, extent);
  }
  estimate.samplesPerWindow = windowVoxels * first.volumes * (complexSamples ? 2 : 1);
  estimate.uniform = estimate.samplesPerWindow < kMinimumNoiseSamplesPerWindow;
  if (!sigmaMap)
  {
    return estimate;
  }
  if (estimate.uniform)
  {
    std::fill(sigmaMap, sigmaMap + voxels, static_cast<float>(estimate.sigma));
    return estimate;
  }
  // Box sums of the squares and of the voxel counts, one axis at a time: each voxel's window is cut at the borders.
  std::vector<double> counts(voxels, 1.0);
  const auto          window = detail::ClippedWindow(options.window / 2);
  for (unsigned axis = 0; axis < 3; ++axis)
  {
    detail::SumOverWindowsAlongAxis(sumOfSquares, first.size, axis, window);
    detail::SumOverWindowsAlongAxis(counts, first.size, axis, window);
  }
  for (std::size_t v = 0; v < voxels; ++v)
  {
    sigmaMap[v] = static_cast<float>(std::sqrt(sumOfSquares[v] / (perSample * counts[v])));
  }
  return estimate;
}

} // namespace svdlr
