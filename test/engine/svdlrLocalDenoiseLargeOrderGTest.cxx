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
// The CPU denoiser at Gram orders where its dense steps are BLAS's (dsyrk for the Gram matrix and its sliding updates,
// dgemm, from 128) and LAPACK's (dsytrd, from 320; svdlrPatchLowRank.cxx), against the float64 SVD reference
// (svdlrLocalDenoiseReference.h): on the volume side at n = 130, 200 and 350, on the voxel side at n = 147, with the
// centre voxel (a patch on every voxel: the sliding updates) and overlap averaging on the default lattice.
#include "svdlrLocalDenoiseReference.h"
#include "svdlrLocalDenoiseRun.h"
#include "svdlrTestSeed.h"
#include "svdlrTestSeries.h"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <string>

namespace
{
using namespace svdlr::test;
using svdlr::LocalDenoiseOptions;
using svdlr::PatchAggregation;

struct LargeOrder
{
  std::array<std::size_t, 3> size;
  std::size_t                volumes;
  std::array<std::size_t, 3> patch;
  PatchAggregation           aggregation;
};

// Measured over 60 seeds (test/seed-spread/measure.sh, 2026-11-29; min..max): the largest relative distance of a
// voxel's series 2.8e-8..3.3e-8 and of σ 2.5e-9..5.9e-8 in every case (the float32 output's rounding), ranks always
// equal. ExpectMatchesReference's bounds (1e-5, 1e-6, equal ranks) lie far outside that.
TEST(SVDLowRankLocalDenoise, MatchesFloat64SvdReferenceAtLargeGramOrders)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  for (const LargeOrder & c : { LargeOrder{ { 8, 7, 7 }, 130, { 7, 7, 7 }, PatchAggregation::CentreVoxel },   // n = 130
                                LargeOrder{ { 11, 10, 9 }, 200, { 7, 7, 7 }, PatchAggregation::OverlapAverage }, // 200
                                LargeOrder{ { 9, 9, 5 }, 200, { 7, 7, 3 }, PatchAggregation::OverlapAverage },  // 147
                                LargeOrder{ { 10, 8, 8 }, 350, { 9, 7, 7 }, PatchAggregation::OverlapAverage } }) // 350
  {
    SCOPED_TRACE(std::to_string(c.volumes) + " volumes, patch " + std::to_string(c.patch[0]) + "x" +
                 std::to_string(c.patch[1]) + "x" + std::to_string(c.patch[2]));
    const NoisySeries   series = LowRankSeries(c.size, c.volumes, 3, 1.0, 4.0, random);
    LocalDenoiseOptions options;
    options.backend = svdlr::Backend::CPU;
    options.patchSize = c.patch;
    options.aggregation = c.aggregation;
    const ReferenceDistance distance = DistanceToReference(series.noisy, options, c.patch);
    const std::string       at = "n" + std::to_string(c.volumes) + "-" + std::to_string(c.patch[2]);
    RecordSpread("value-" + at, random.Seed(), distance.value);
    RecordSpread("sigma-" + at, random.Seed(), distance.sigma);
    RecordSpread("ranks-" + at, random.Seed(), static_cast<double>(distance.ranks));
    EXPECT_LE(distance.value, 1e-5); // ExpectMatchesReference's bounds
    EXPECT_LE(distance.sigma, 1e-6);
    EXPECT_EQ(distance.ranks, 0u);
  }
}

} // namespace
