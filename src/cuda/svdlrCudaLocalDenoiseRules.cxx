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
#include "svdlrCudaLocalDenoiser.h"

#include "noise/svdlrChooseRank.h"
#include "denoise/svdlrLocalDenoiseBackends.h" // ShrinksOptimally

#include <algorithm>

namespace svdlr
{
namespace detail
{

DenoiseGeometry
GeometryOf(const SeriesView<const float> & input, const std::array<std::size_t, 3> & patch,
           const LocalDenoiseOptions & options, const std::vector<PatchOffset> & sphereOrder)
{
  DenoiseGeometry geometry;
  geometry.nx = static_cast<std::int64_t>(input.size[0]);
  geometry.ny = static_cast<std::int64_t>(input.size[1]);
  geometry.nz = static_cast<std::int64_t>(input.size[2]);
  geometry.volumes = static_cast<std::int64_t>(input.volumes);
  geometry.ex = static_cast<std::int64_t>(patch[0]);
  geometry.ey = static_cast<std::int64_t>(patch[1]);
  geometry.ez = static_cast<std::int64_t>(patch[2]);
  if (options.patchShape == PatchShape::Sphere)
  {
    geometry.sphereVoxels =
      static_cast<std::int64_t>(SpherePatchUsed(input.size, input.volumes, options.patchRadius).voxels);
    geometry.sphereOrderSize = static_cast<std::int64_t>(sphereOrder.size());
  }
  return geometry;
}

std::int64_t
MaxVectorsFor(const RankPolicy & policy, std::int64_t n)
{
  return policy.kind == RankPolicy::Kind::FixedRank
           ? std::max<std::int64_t>(1, std::min<std::int64_t>(static_cast<std::int64_t>(policy.rank), n))
           : n;
}

PatchRankRule
RankRuleFor(const LocalDenoiseOptions & options, const DenoiseGeometry & geometry)
{
  PatchRankRule rule;
  rule.policy = options.policy;
  rule.noiseEstimator = options.noiseEstimator;
  rule.optimalShrinkage = ShrinksOptimally(options);
  rule.removed = static_cast<int>(options.removedVolumeDimensions);
  if (NeedsMarchenkoPasturMedian(options.policy, options.noiseSigma != nullptr))
  {
    const PatchNoiseShape shape =
      NoiseShapeOf(static_cast<int>(geometry.PatchVoxels()), static_cast<int>(geometry.volumes), rule.removed);
    rule.median = MarchenkoPasturMedian(NoiseAspectRatio(shape.rows, shape.cols));
  }
  return rule;
}

} // namespace detail
} // namespace svdlr
