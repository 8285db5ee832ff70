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
#ifndef svdlr_GFactorPhantom_h
#define svdlr_GFactorPhantom_h

// A phantom whose noise is sigma g(x), with g known (the g-factor tests' data), and how a run on it scores.

#include "svdlrLocalDenoiseRun.h"
#include "svdlrLocalDenoiseSeriesShape.h"
#include "svdlrTestSeries.h"

#include <cmath>
#include <vector>

namespace svdlr
{
namespace test
{
namespace gfactor_phantom
{
using namespace svdlr::test::local_denoise_series; // kSize, kVolumes, kSigma

/** A g-factor that grows smoothly from 1 at the image's centre to 2 at its corners, as parallel imaging's does
 * towards the coils' overlap: 1 + d², d the distance from the centre over the corner's. */
inline std::vector<float>
SmoothGFactor(const std::array<std::size_t, 3> & size)
{
  std::vector<float> g(size[0] * size[1] * size[2]);
  for (std::size_t v = 0; v < g.size(); ++v)
  {
    const std::size_t c[3] = { v % size[0], v / size[0] % size[1], v / (size[0] * size[1]) };
    double            d2 = 0.0;
    for (int axis = 0; axis < 3; ++axis)
    {
      const double half = 0.5 * double(size[axis] - 1);
      d2 += (double(c[axis]) - half) * (double(c[axis]) - half) / (3.0 * half * half);
    }
    g[v] = static_cast<float>(1.0 + d2);
  }
  return g;
}

/** The clean low-rank series of LowRankSeries with noise of sigma g(v) in voxel v (the noise redrawn), on a grid of
 * `size` (kSize by default; g has its voxels). */
inline NoisySeries
SeriesWithGFactorNoise(const std::vector<float> & g, int rank, Random & random, double amplitude = 4.0,
                       const std::array<std::size_t, 3> & size = kSize)
{
  NoisySeries series = LowRankSeries(size, kVolumes, rank, kSigma, amplitude, random);
  for (std::size_t v = 0; v < series.clean.Voxels(); ++v)
  {
    for (std::size_t t = 0; t < kVolumes; ++t)
    {
      series.noisy(v, t) = static_cast<float>(series.clean(v, t) + kSigma * g[v] * random.Normal());
    }
  }
  return series;
}

/** The root-mean-square error against the clean series, and the mean |sigma map / (kSigma g) - 1|, over voxels at
 * least 2 from every face (a patch there is centred). */
struct Scores
{
  double rmse{ 0.0 };
  double sigmaError{ 0.0 };
};

inline Scores
ScoreRun(const NoisySeries & series, const std::vector<float> & g, const svdlr::LocalDenoiseOptions & options)
{
  const Denoised result = Denoise(series.noisy, options);
  Scores         scores;
  std::size_t    voxels = 0;
  for (std::size_t v = 0; v < series.clean.Voxels(); ++v)
  {
    if (!Interior(v, kSize, 2))
    {
      continue;
    }
    ++voxels;
    for (std::size_t t = 0; t < kVolumes; ++t)
    {
      const double d = double(result.output(v, t)) - double(series.clean(v, t));
      scores.rmse += d * d;
    }
    scores.sigmaError += std::abs(double(result.sigma[v]) / (kSigma * double(g[v])) - 1.0);
  }
  scores.rmse = std::sqrt(scores.rmse / double(voxels * kVolumes));
  scores.sigmaError /= double(voxels);
  return scores;
}

} // namespace gfactor_phantom
} // namespace test
} // namespace svdlr

#endif
