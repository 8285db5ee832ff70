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

TEST_F(LocalDenoiseCuda, SphereAcrossManySlabsAndBatchesEqualsCpu)
{
  // One centre plane per slab and a handful of patches per batch: the sums (weights included) carried from slab to
  // slab, patches whose sphere is cut by the window's edge, and each sphere's rows walked from the table per batch.
  // Radius 0 is the default √3, the whole 3 x 3 x 3 box (27 voxels, volume side); √2 keeps 19 of the box's 27
  // (voxel side); √5 keeps 57 of 5 x 5 x 5 (a window of 5 planes). The options are the defaults, shrinkage Auto:
  // DenoiseTuned passes it to the backend unresolved, as the CPU backend's test of that
  // (SVDLowRankDenoiseDefaults.BackendCalledWithAutoShrinkageShrinksAsTheFrontEndResolvesIt) does on the CPU.
  // This test failed on the H100 (2026-11-26: worst 1.14, series rms 10.8, nearly every value) when the CUDA
  // backend read Auto as the hard threshold while the CPU's front end resolved it to optimal shrinkage.
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series input = LowRankPlusNoise({ 12, 11, 14 }, 22, 3, m_Random);
  for (const double radius : { 0.0, std::sqrt(2.0), std::sqrt(5.0) })
  {
    for (const auto aggregation : kEveryAggregation)
    {
      SCOPED_TRACE("radius " + std::to_string(radius) + ", aggregation " + svdlr::AggregationName(aggregation));
      const LocalDenoiseOptions                   options = SphereOptions(aggregation, radius);
      const Result                                cpu = Denoise(input, options, svdlr::Backend::CPU);
      const svdlr::detail::LocalDenoiseCudaTuning tuning = OnePlanePerSlabTuning(input, cpu, options);
      svdlr::detail::LocalDenoiseCudaTrace        trace;
      const Result gpu = DenoiseTuned(input, options, cpu.report.patchSize, tuning, trace);
      EXPECT_EQ(trace.centrePlanesPerSlab, 1u) << "the plan did not shrink its slabs to one centre plane";
      EXPECT_EQ(trace.slabs, input.size[2]);
      EXPECT_LE(trace.batchSize, 16u);
      ExpectSameResult(gpu, cpu, input);
    }
  }
}

} // namespace
