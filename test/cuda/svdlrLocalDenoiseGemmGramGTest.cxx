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
// The Gram stage by cuBLAS's batched DGEMM (LaunchPatchGramByGemm, the default from kGemmGramFromSide on) against
// the CPU backend's float64 result: forced at small sides, on the volume and the voxel side and for spheres; and at
// its default on the long series it is for, n = 200 (our eigen-solver), 500 and 1,000 (cuSOLVER's). Every test
// skips, saying why, without a usable CUDA device.
#include "svdlrLocalDenoiseCudaTesting.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace
{
using namespace svdlr::test;
using svdlr::PatchShape;

/** The GPU with the Gram stage chosen by `gemmGram` (LocalDenoiseCudaTuning) equals the CPU, and took that path;
 * with a `label`, their distance is recorded for test/seed-spread under it. */
void
ExpectGramPathEqualsCpu(const Series & input, const LocalDenoiseOptions & options, int gemmGram,
                        const std::string & label = {}, std::uint64_t seed = 0)
{
  svdlr::detail::LocalDenoiseCudaTuning tuning;
  tuning.gemmGram = gemmGram;
  svdlr::detail::LocalDenoiseCudaTrace trace;
  const ResultDistance                 distance = ExpectTunedEqualsCpu(input, options, tuning, trace);
  EXPECT_TRUE(trace.usedGemmGram);
  if (!label.empty())
  {
    RecordSpread("value-" + label, seed, distance.value);
    RecordSpread("sigma-" + label, seed, distance.sigma);
    RecordSpread("ranks-" + label, seed, static_cast<double>(distance.ranks));
  }
}

TEST_F(LocalDenoiseCuda, GramByGemmEqualsCpuOnEitherSideAndForSpheres)
{
  SCOPED_TRACE(m_Random.SeedTrace());
  LocalDenoiseOptions options = WrittenForOptions();
  options.aggregation = PatchAggregation::OverlapAverage;
  ExpectGramPathEqualsCpu(LowRankPlusNoise({ 13, 12, 11 }, 30, 3, m_Random), options, 1); // 5x5x5: n = 30 volumes
  options.patchSize = { 3, 3, 3 };                                                       // n = 27 voxels < 40 volumes
  ExpectGramPathEqualsCpu(LowRankPlusNoise({ 12, 11, 10 }, 40, 3, m_Random), options, 1);
  options.patchSize = {};
  options.patchShape = PatchShape::Sphere; // the default radius: 81 voxels x 28 volumes
  ExpectGramPathEqualsCpu(LowRankPlusNoise({ 12, 13, 11 }, 28, 3, m_Random), options, 1);
}

TEST_F(LocalDenoiseCuda, LongSeriesAt200To1000VolumesEqualCpuThroughTheDefaultGramStage)
{
  SCOPED_TRACE(m_Random.SeedTrace());
  LocalDenoiseOptions options = WrittenForOptions();
  options.aggregation = PatchAggregation::OverlapAverage;
  options.patchStride = 5; // a few dozen patches: the CPU's float64 reference at n = 1,000 takes seconds a patch
  // Spread over 119 seeds on an H200, in two runs of test/seed-spread/measure.sh ... 'LocalDenoiseCuda.LongSeries*'
  // 60, before and after the CPU's Gram and reduction kernels were retiled: no voxel of another rank, σ equal to
  // the bit, and the worst value off by at most 1.0e-7, 2.1e-7 and 2.3e-7 of the series' rms at n = 200, 500 and
  // 1,000 (means at most 3.3e-9, 5.7e-8, 1.4e-7; sd at most 1.6e-8, 4.8e-8, 5.1e-8): float rounding of the
  // output, 4.3 times inside ExpectSameResult's 1e-6.
  struct Case
  {
    std::size_t volumes, extent, side;
  };
  for (const Case c : { Case{ 200, 7, 9 }, Case{ 500, 9, 11 }, Case{ 1000, 11, 12 } })
  {
    SCOPED_TRACE("volumes " + std::to_string(c.volumes));
    options.patchSize = { c.extent, c.extent, c.extent }; // more voxels than volumes: n = volumes
    ExpectGramPathEqualsCpu(LowRankPlusNoise({ c.side, c.side, c.side }, c.volumes, 5, m_Random), options, -1,
                            "n" + std::to_string(c.volumes), m_Random.Seed());
  }
}

} // namespace
