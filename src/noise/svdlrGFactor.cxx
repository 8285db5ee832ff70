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
// The g-factor map's rule (GFactorMapProblem) and DenoiseLocalLowRank's g-factor step (svdlrLocalDenoiseBackends.h).
#include "denoise/svdlrLocalDenoiseBackends.h"

#include "noise/svdlrComplexSeriesDetail.h"
#include "shared/svdlrParallel.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace svdlr
{

std::string
GFactorMapProblem(const float * gfactor, const std::array<std::size_t, 3> & size)
{
  if (gfactor == nullptr)
  {
    return "g-factor map is null";
  }
  const std::size_t voxels = size[0] * size[1] * size[2];
  const std::size_t v = FirstInvalidGFactorVoxel(gfactor, voxels);
  if (v == voxels)
  {
    return {};
  }
  std::ostringstream message;
  message << "g-factor map must be finite and > 0 at every voxel (outside the mask too: fill it with 1 there), got "
          << gfactor[v] << " at voxel [" << v % size[0] << ", " << v / size[0] % size[1] << ", "
          << v / (size[0] * size[1]) << "]";
  return message.str();
}

std::size_t
FirstInvalidGFactorVoxel(const float * gfactor, std::size_t voxels)
{
  for (std::size_t v = 0; v < voxels; ++v)
  {
    // Patches read voxels outside the mask too, so every voxel is divided by its g: none may be 0, negative or NaN.
    if (!(std::isfinite(gfactor[v]) && gfactor[v] > 0.0f))
    {
      return v;
    }
  }
  return voxels;
}

std::string
GFactorKnownSigmaProblem(bool knownSigmaMap)
{
  return knownSigmaMap ? "a known sigma map cannot be given with a g-factor map: a map in the input's units already "
                         "holds g. Give sigma from noise volumes or a noise scan, a single sigma (the sigma where "
                         "g = 1), or let the rank policy estimate it"
                       : std::string();
}

namespace detail
{
namespace
{

/** out(v, t) = in(v, t) * factor(v) (or / factor(v)), in parallel over planes; `out` may be `in`. */
void
ScaleByMap(const SeriesView<const float> & in, const SeriesView<float> & out, const float * map, bool divide,
           const ParallelFor & parallelFor)
{
  const std::size_t nx = in.size[0], ny = in.size[1];
  parallelFor(in.size[2], [&](std::size_t z) {
    for (std::size_t y = 0; y < ny; ++y)
    {
      for (std::size_t x = 0; x < nx; ++x)
      {
        const std::size_t v = x + nx * (y + ny * z);
        const float       g = map[v];
        for (std::size_t t = 0; t < in.volumes; ++t)
        {
          const float value = in.data[ElementOffset(in, v, t)];
          out.data[ElementOffset(out, v, t)] = divide ? value / g : value * g;
        }
      }
    }
  });
}

} // namespace

LocalDenoiseReport
DenoiseWithGFactor(const SeriesView<const float> & input, const SeriesView<float> & output,
                   const LocalDenoiseMaps & maps, const LocalDenoiseOptions & options)
{
  const std::string problem = GFactorMapProblem(options.gfactor, input.size);
  if (!problem.empty())
  {
    throw Error(ErrorCode::InvalidArgument, "svdlr: " + problem);
  }
  if (options.magnitudeNoise.Active())
  {
    throw Error(ErrorCode::InvalidArgument,
                "svdlr: a g-factor map with variance stabilisation, the noise floor or the sigma floor correction is "
                "not supported yet: their Rician model needs sigma in the magnitude's units, voxel by voxel");
  }
  const ParallelFor parallelFor = ParallelForOrThreads(options.parallelFor, WorkerCount(options.threads));
  const float *     g = options.gfactor;
  LocalDenoiseOptions normalised = options;
  normalised.gfactor = nullptr;
  ScaleByMap(input, output, g, true, parallelFor); // output = input / g (in place when output is input)
  LocalDenoiseReport report;
  try
  {
    report = DenoiseLocalLowRank(output, output, maps, normalised);
  }
  catch (...)
  {
    ScaleByMap(output, output, g, false, parallelFor);
    throw;
  }
  ScaleByMap(output, output, g, false, parallelFor);
  if (maps.gfactor)
  {
    std::copy(g, g + input.VoxelCount(), maps.gfactor);
  }
  if (maps.noiseSigma)
  {
    // The sigma of the divided series is that of a voxel with g = 1; the input's noise is g times it.
    for (std::size_t v = 0; v < input.VoxelCount(); ++v)
    {
      maps.noiseSigma[v] *= g[v];
    }
  }
  return report;
}

} // namespace detail
} // namespace svdlr
