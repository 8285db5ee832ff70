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
#ifndef svdlrTestSeries_h
#define svdlrTestSeries_h

// 4D test series with a known answer for the local denoiser: a clean signal of known rank per patch (a few volume
// profiles mixed by spatial weights that vary inside any patch) plus Gaussian noise of known σ, drawn from fresh
// seeds (svdlr::test::Random prints its seed on failure).

#include "svdlr/LocalDenoise.h"
#include "svdlrTestMatrices.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <vector>

namespace svdlr
{
namespace test
{

/** A series in itk::Image<float, 4> order: x fastest, then y, z, volume. */
struct Series
{
  std::array<std::size_t, 3> size{ 0, 0, 0 };
  std::size_t                volumes{ 0 };
  std::vector<float>         values;

  std::size_t
  Voxels() const
  {
    return size[0] * size[1] * size[2];
  }
  float &
  operator()(std::size_t voxel, std::size_t t)
  {
    return values[voxel + t * Voxels()];
  }
  float
  operator()(std::size_t voxel, std::size_t t) const
  {
    return values[voxel + t * Voxels()];
  }
  std::array<std::ptrdiff_t, 4>
  Strides() const
  {
    return { 1, static_cast<std::ptrdiff_t>(size[0]), static_cast<std::ptrdiff_t>(size[0] * size[1]),
             static_cast<std::ptrdiff_t>(Voxels()) };
  }
  SeriesView<const float>
  View() const
  {
    return { values.data(), size, volumes, Strides() };
  }
  SeriesView<float>
  View()
  {
    return { values.data(), size, volumes, Strides() };
  }
};

inline Series
EmptySeries(std::array<std::size_t, 3> size, std::size_t volumes)
{
  Series series;
  series.size = size;
  series.volumes = volumes;
  series.values.assign(series.Voxels() * volumes, 0.0f);
  return series;
}

/** The clean signal and its noisy copy. */
struct NoisySeries
{
  Series clean;
  Series noisy;
  double sigma{ 0.0 };
  int    rank{ 0 };
};

/** `rank` (<= 4) random volume profiles, each mixed by a spatial weight that oscillates with a period of a few
 * voxels along a different direction, so that every patch of 3 voxels or more a side holds all `rank` components
 * well above the noise (amplitude `amplitude` σ per component), plus N(0, σ²) noise. */
inline NoisySeries
LowRankSeries(std::array<std::size_t, 3> size, std::size_t volumes, int rank, double sigma, double amplitude,
              Random & random)
{
  NoisySeries series;
  series.clean = EmptySeries(size, volumes);
  series.noisy = EmptySeries(size, volumes);
  series.sigma = sigma;
  series.rank = rank;
  std::vector<std::vector<double>> profiles(rank, std::vector<double>(volumes));
  for (auto & profile : profiles)
  {
    const double frequency = random.Uniform(0.05, 0.4), phase = random.Uniform(0.0, 6.3);
    for (std::size_t t = 0; t < volumes; ++t)
    {
      profile[t] = std::cos(frequency * static_cast<double>(t) + phase) + 0.3 * random.Normal();
    }
  }
  const double scale = amplitude * sigma;
  for (std::size_t z = 0, v = 0; z < size[2]; ++z)
  {
    for (std::size_t y = 0; y < size[1]; ++y)
    {
      for (std::size_t x = 0; x < size[0]; ++x, ++v)
      {
        const double fx = static_cast<double>(x), fy = static_cast<double>(y), fz = static_cast<double>(z);
        const double weights[4] = { 1.0 + 0.2 * std::sin(0.3 * fx + 0.2 * fy), std::sin(1.9 * fx + 0.4 * fz),
                                    std::cos(2.1 * fy + 0.5 * fx), std::sin(1.7 * fz + 0.9 * fy + 0.3) };
        for (std::size_t t = 0; t < volumes; ++t)
        {
          double value = 0.0;
          for (int k = 0; k < rank; ++k)
          {
            value += scale * weights[k] * profiles[k][t];
          }
          series.clean(v, t) = static_cast<float>(value);
          series.noisy(v, t) = static_cast<float>(value + sigma * random.Normal());
        }
      }
    }
  }
  return series;
}

/** Voxels at least `margin` from every face. */
inline bool
Interior(std::size_t voxel, const std::array<std::size_t, 3> & size, std::size_t margin)
{
  const std::size_t c[3] = { voxel % size[0], voxel / size[0] % size[1], voxel / (size[0] * size[1]) };
  for (int axis = 0; axis < 3; ++axis)
  {
    if (c[axis] < margin || c[axis] + margin >= size[axis])
    {
      return false;
    }
  }
  return true;
}

/** The median of a map's values (the upper one of an even count), as the tests measure σ and rank maps. */
inline double
Median(std::vector<double> values)
{
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

} // namespace test
} // namespace svdlr

#endif
