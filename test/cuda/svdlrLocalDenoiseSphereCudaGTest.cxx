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
// Issue 21, item 6 on the GPU: spherical patches (their rows walked from the offset table a warp at a time) and the
// weighted overlap aggregations (each row's weight in the approximation kernel, the weights summed in float64
// atomics) against the CPU backend, which defines them and is tested against a float64 reference
// (svdlrSpherePatchGTest.cxx). Same tolerance as every CUDA-against-CPU test here (ExpectSameResult: ranks equal,
// values and σ within 1e-6 relative): the atomics add in a varying order, and the device's exp may differ from the
// host's by an ulp, both far below it. Every test skips, saying why, without a usable CUDA device.
#include "svdlrLocalDenoiseCudaTesting.h"

#include "cuda/svdlrLocalDenoiseCuda.h"
#include "cuda/svdlrLocalDenoisePlan.h"
#include "svdlr/LocalDenoise.h"

#include <cmath>
#include <string>
#include <vector>

namespace
{
using namespace svdlr::test;
using svdlr::LocalDenoiseOptions;
using svdlr::PatchAggregation;
using svdlr::PatchShape;

constexpr PatchAggregation kEveryAggregation[] = { PatchAggregation::CentreVoxel, PatchAggregation::OverlapAverage,
                                                   PatchAggregation::OverlapRankWeighted,
                                                   PatchAggregation::OverlapGaussianWeighted };

LocalDenoiseOptions
SphereOptions(PatchAggregation aggregation, double radius)
{
  LocalDenoiseOptions options; // the defaults: Cordero-Grande's MP estimator, optimal shrinkage
  options.aggregation = aggregation;
  options.patchShape = PatchShape::Sphere;
  options.patchRadius = radius;
  return options;
}

TEST_F(LocalDenoiseCuda, SphereEqualsCpuForEveryAggregationOnBothGramSides)
{
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series input = LowRankPlusNoise({ 13, 14, 12 }, 40, 3, m_Random);
  for (const auto aggregation : kEveryAggregation)
  {
    SCOPED_TRACE(std::string("aggregation ") + svdlr::AggregationName(aggregation));
    ExpectGpuEqualsCpu(input, SphereOptions(aggregation, 0.0));            // √6: 81 voxels x 40 volumes
    ExpectGpuEqualsCpu(input, SphereOptions(aggregation, std::sqrt(2.0))); // 19 voxels x 40 volumes
  }
}

TEST_F(LocalDenoiseCuda, WeightedCuboidAggregationsEqualCpuWithAMask)
{
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series                    input = LowRankPlusNoise({ 14, 12, 13 }, 30, 3, m_Random);
  const std::vector<std::uint8_t> mask = BallMask(input.size, m_Random);
  for (const auto aggregation : { PatchAggregation::OverlapRankWeighted, PatchAggregation::OverlapGaussianWeighted })
  {
    SCOPED_TRACE(std::string("aggregation ") + svdlr::AggregationName(aggregation));
    LocalDenoiseOptions options;
    options.aggregation = aggregation;
    ExpectGpuEqualsCpu(input, options);
    options.mask = mask.data();
    ExpectGpuEqualsCpu(input, options);
    options.patchShape = PatchShape::Sphere;
    ExpectGpuEqualsCpu(input, options);
  }
}

TEST_F(LocalDenoiseCuda, SphereOverThinSlabsIsRefused)
{
  // One centre plane per slab and small batches: the sphere's GPU path gave values off by up to 1.1 (series rms
  // 10.8) at nearly every voxel on the H100, for every aggregation, while plans of 3 and 4 centre planes a slab match
  // the CPU (the tests above). Until that is found the CUDA backend refuses a sphere on slabs of fewer than 3 centre
  // planes (BackendUnavailable, so that Auto runs on the CPU); a cuboid on one-plane slabs is tested in
  // svdlrLocalDenoiseCudaGTest.
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series input = LowRankPlusNoise({ 12, 11, 14 }, 22, 3, m_Random);
  const LocalDenoiseOptions                   options = SphereOptions(PatchAggregation::OverlapAverage, 0.0);
  const Result                                cpu = Denoise(input, options, svdlr::Backend::CPU);
  const svdlr::detail::LocalDenoiseCudaTuning tuning = OnePlanePerSlabTuning(input, cpu, options);
  svdlr::detail::LocalDenoiseCudaTrace        trace;
  try
  {
    DenoiseTuned(input, options, cpu.report.patchSize, tuning, trace);
    FAIL() << "a sphere over several slabs ran on the GPU";
  }
  catch (const svdlr::Error & error)
  {
    EXPECT_EQ(error.Code(), svdlr::ErrorCode::BackendUnavailable);
    EXPECT_NE(std::string(error.what()).find("spherical patch"), std::string::npos) << error.what();
  }
}

} // namespace
