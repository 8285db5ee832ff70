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
// DenoiseLocalLowRank on the CPU backend: against an independent float64 reference (full SVD per patch), against
// the known truth of synthetic series (σ, rank, error to the clean signal), and its contract (masks, layouts, in
// place, errors). Progress and abort: svdlrLocalDenoiseProgressGTest.cxx.
#include "svdlr/LocalDenoise.h"
#include "svdlrLocalDenoiseReference.h"
#include "svdlrLocalDenoiseRun.h"
#include "svdlrLocalDenoiseSeriesShape.h"
#include "svdlrTestSeries.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

namespace
{
using namespace svdlr::test;
using svdlr::LocalDenoiseOptions;
using svdlr::PatchAggregation;
using svdlr::RankPolicy;

using namespace svdlr::test::local_denoise_series; // kSize, kVolumes, kSigma

/** The configuration these tests and their measured bounds were written for, dwidenoise's with the Veraart
 * estimator (centre voxel, hard threshold), pinned so that the defaults (svdlrDenoiseDefaultsGTest.cxx) can move
 * without moving them. The tests vary it where they say so. */
LocalDenoiseOptions
CpuOptions()
{
  LocalDenoiseOptions options;
  options.policy = RankPolicy::MarchenkoPastur(svdlr::MarchenkoPasturEstimator::Veraart2016);
  options.aggregation = PatchAggregation::CentreVoxel;
  options.shrinkage = svdlr::Shrinkage::Hard;
  options.backend = svdlr::Backend::CPU;
  return options;
}

TEST(SVDLowRankLocalDenoise, MatchesFloat64SvdReferenceWhenVolumesAreTheSmallerSide)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const NoisySeries series = LowRankSeries(kSize, kVolumes, 3, kSigma, 4.0, random);
  ExpectMatchesReference(series.noisy, CpuOptions(), { 5, 5, 5 }); // 125 voxels x 30 volumes
}

TEST(SVDLowRankLocalDenoise, MatchesFloat64SvdReferenceWhenVoxelsAreTheSmallerSide)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const NoisySeries   series = LowRankSeries(kSize, kVolumes, 3, kSigma, 4.0, random);
  LocalDenoiseOptions options = CpuOptions();
  options.patchSize = { 3, 3, 3 }; // 27 voxels x 30 volumes
  ExpectMatchesReference(series.noisy, options, { 3, 3, 3 });
}

TEST(SVDLowRankLocalDenoise, CorderoGrandeEstimatorMatchesReference)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const NoisySeries   series = LowRankSeries(kSize, kVolumes, 2, kSigma, 3.0, random);
  LocalDenoiseOptions options = CpuOptions();
  options.policy = RankPolicy::MarchenkoPastur(svdlr::MarchenkoPasturEstimator::CorderoGrande2019);
  ExpectMatchesReference(series.noisy, options, { 5, 5, 5 });
}

TEST(SVDLowRankLocalDenoise, GavishDonohoWithOptimalShrinkageMatchesReference)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const NoisySeries   series = LowRankSeries(kSize, kVolumes, 3, kSigma, 4.0, random);
  LocalDenoiseOptions options = CpuOptions();
  options.policy = RankPolicy::GavishDonoho();
  options.shrinkage = svdlr::Shrinkage::OptimalFrobenius;
  ExpectMatchesReference(series.noisy, options, { 5, 5, 5 });
}

TEST(SVDLowRankLocalDenoise, FixedRankMatchesReference)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const NoisySeries   series = LowRankSeries(kSize, kVolumes, 3, kSigma, 4.0, random);
  LocalDenoiseOptions options = CpuOptions();
  options.policy = RankPolicy::Fixed(2);
  ExpectMatchesReference(series.noisy, options, { 5, 5, 5 });
}

// Measured over 1,000 seeds with the default lattice of patch centres (test/seed-spread/measure.sh, 2026-11-29;
// min..max, mean, standard deviation):
//   lowest σ/σtrue of the interior's voxels    0.869..0.946, 0.922, 0.011
//   highest σ/σtrue                            1.009..1.044, 1.024, 0.006
//   mean σ/σtrue                               0.975..0.994, 0.985, 0.003
//   fraction of the interior at the true rank  0.794..0.955, 0.896, 0.025; never below the true rank
// A CI run met 0.774 (seed 12449647851697074507), beyond those 1,000 seeds: the fraction's low tail is long. Bounds
// by the margin rule of svdlrTestSeed.h, with that seed counted: σ per voxel 0.83..1.15, the mean within 3 %, the
// true rank on at least 71 % of the voxels.
TEST(SVDLowRankLocalDenoise, NoiseMapFindsTheTrueSigmaAndRankInTheInterior)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const NoisySeries series = LowRankSeries({ 16, 16, 14 }, kVolumes, 3, kSigma, 4.0, random);
  const Denoised    result = Denoise(series.noisy, CpuOptions());
  std::vector<double> sigmas;
  std::size_t         interior = 0, rightRank = 0;
  for (std::size_t v = 0; v < series.noisy.Voxels(); ++v)
  {
    if (Interior(v, series.noisy.size, 2))
    {
      ++interior;
      sigmas.push_back(result.sigma[v]);
      rightRank += result.rank[v] == series.rank;
      EXPECT_GE(result.rank[v], series.rank) << "voxel " << v;
      EXPECT_GE(result.sigma[v], 0.83 * kSigma) << "voxel " << v;
      EXPECT_LE(result.sigma[v], 1.15 * kSigma) << "voxel " << v;
    }
  }
  const double mean = std::accumulate(sigmas.begin(), sigmas.end(), 0.0) / double(sigmas.size());
  const auto [lowest, highest] = std::minmax_element(sigmas.begin(), sigmas.end());
  RecordSpread("lowest-sigma/true", random.Seed(), *lowest / kSigma);
  RecordSpread("highest-sigma/true", random.Seed(), *highest / kSigma);
  RecordSpread("mean-sigma/true", random.Seed(), mean / kSigma);
  RecordSpread("right-rank-fraction", random.Seed(), double(rightRank) / double(interior));
  EXPECT_NEAR(mean, kSigma, 0.03 * kSigma);
  // MP-PCA's estimate of the bulk from 30 eigenvalues fluctuates: now and then it takes the largest noise
  // component for signal (about 1 patch in 10 here), but it never drops a signal component.
  EXPECT_GE(double(rightRank), 0.71 * double(interior)) << rightRank << " of " << interior;
}

// Issue 23, row 5: a series constant over time (every voxel 1 or 2) is noise-free. Each patch is a rank-1 matrix;
// it comes back unchanged, with sigma 0 and rank 1 (0 where the patch is all zero), whatever the noise rule.
TEST(SVDLowRankLocalDenoise, SeriesConstantOverTimeComesBackUnchangedWithSigmaZero)
{
  Series series = EmptySeries(kSize, kVolumes);
  for (std::size_t voxel = 0; voxel < series.Voxels(); ++voxel)
  {
    for (std::size_t t = 0; t < kVolumes; ++t)
    {
      series(voxel, t) = voxel % 3 == 0 ? 2.0f : 1.0f;
    }
  }
  for (const RankPolicy policy : { RankPolicy::MarchenkoPastur(),
                                   RankPolicy::MarchenkoPastur(svdlr::MarchenkoPasturEstimator::CorderoGrande2019),
                                   RankPolicy::GavishDonoho() })
  {
    LocalDenoiseOptions options = CpuOptions();
    options.policy = policy;
    const Denoised result = Denoise(series, options);
    for (std::size_t i = 0; i < series.values.size(); ++i)
    {
      ASSERT_NEAR(result.output.values[i], series.values[i], 1e-5f) << "value " << i;
    }
    for (std::size_t voxel = 0; voxel < series.Voxels(); ++voxel)
    {
      ASSERT_EQ(result.sigma[voxel], 0.0f) << "voxel " << voxel;
      ASSERT_EQ(result.rank[voxel], 1) << "voxel " << voxel;
    }
  }
  const Denoised zeros = Denoise(EmptySeries(kSize, kVolumes), CpuOptions());
  EXPECT_TRUE(std::all_of(zeros.output.values.begin(), zeros.output.values.end(), [](float v) { return v == 0.0f; }));
  EXPECT_TRUE(std::all_of(zeros.rank.begin(), zeros.rank.end(), [](std::uint16_t r) { return r == 0; }));
}

TEST(SVDLowRankLocalDenoise, DenoisedSeriesIsCloserToTheCleanSignal)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const NoisySeries series = LowRankSeries(kSize, kVolumes, 3, kSigma, 4.0, random);
  for (const PatchAggregation aggregation : { PatchAggregation::CentreVoxel, PatchAggregation::OverlapAverage })
  {
    LocalDenoiseOptions options = CpuOptions();
    options.aggregation = aggregation;
    const Denoised result = Denoise(series.noisy, options);
    double         noisyError = 0.0, denoisedError = 0.0;
    for (std::size_t i = 0; i < series.clean.values.size(); ++i)
    {
      noisyError += std::pow(double(series.noisy.values[i]) - series.clean.values[i], 2);
      denoisedError += std::pow(double(result.output.values[i]) - series.clean.values[i], 2);
    }
    RecordSpread("error/noisy." + std::to_string(int(aggregation)), random.Seed(),
                 std::sqrt(denoisedError / noisyError));
    // Over 500 seeds (2026-11-25): 0.351..0.381 (mean 0.365) with the centre voxel, 0.326..0.349 (0.338) with
    // overlap averaging; 0.5 is more than the margin rule asks (0.39).
    EXPECT_LT(std::sqrt(denoisedError), 0.5 * std::sqrt(noisyError)) << "aggregation " << int(aggregation);
  }
}

std::vector<std::uint8_t>
BallMask(const std::array<std::size_t, 3> & size, Random & random)
{
  std::vector<std::uint8_t> mask(size[0] * size[1] * size[2]);
  const double cx = random.Uniform(4, 7), cy = random.Uniform(4, 7), cz = random.Uniform(4, 6), r = 4.2;
  for (std::size_t v = 0; v < mask.size(); ++v)
  {
    const double x = double(v % size[0]) - cx, y = double(v / size[0] % size[1]) - cy,
                 z = double(v / (size[0] * size[1])) - cz;
    mask[v] = x * x + y * y + z * z <= r * r ? std::uint8_t(1 + v % 3) : std::uint8_t(0); // any nonzero is inside
  }
  return mask;
}

/** The masked run against the unmasked one, inside the mask: rounding only (see the test for what was measured). */
constexpr double kMaskRoundingBound = 1e-5;

TEST(SVDLowRankLocalDenoise, MaskCopiesOutsideVoxelsAndZeroesTheirMaps)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const NoisySeries               series = LowRankSeries(kSize, kVolumes, 3, kSigma, 4.0, random);
  const std::vector<std::uint8_t> mask = BallMask(kSize, random);
  LocalDenoiseOptions             options = CpuOptions();
  options.mask = mask.data();
  const Denoised result = Denoise(series.noisy, options);
  const Denoised unmasked = Denoise(series.noisy, CpuOptions());
  const auto     inside = static_cast<std::size_t>(std::count_if(mask.begin(), mask.end(), [](auto m) { return m; }));
  EXPECT_EQ(result.report.patches, inside);
  // Inside, a voxel's patch reads its neighbours whether they are in the mask or not: the unmasked result, up to
  // rounding, because the CPU kernels slide each patch's Gram matrix from the previous voxel's, and the mask changes
  // which voxel that was. Outside, the input itself, bit for bit, and zero maps.
  double largestInside = 0.0, largestDifference = 0.0;
  std::size_t rankDifferences = 0;
  for (std::size_t v = 0; v < series.noisy.Voxels(); ++v)
  {
    for (std::size_t t = 0; t < kVolumes; ++t)
    {
      const float actual = result.output(v, t);
      if (mask[v])
      {
        largestInside = std::max(largestInside, double(std::fabs(unmasked.output(v, t))));
        largestDifference = std::max(largestDifference, double(std::fabs(actual - unmasked.output(v, t))));
      }
      else
      {
        const float expected = series.noisy(v, t);
        ASSERT_EQ(std::memcmp(&actual, &expected, sizeof(float)), 0) << "voxel " << v << " volume " << t;
      }
    }
    if (mask[v])
    {
      EXPECT_NEAR(result.sigma[v], unmasked.sigma[v], 1e-5 * unmasked.sigma[v]) << "voxel " << v;
      rankDifferences += result.rank[v] != unmasked.rank[v] ? 1 : 0;
    }
    else
    {
      EXPECT_EQ(result.sigma[v], 0.0f);
      EXPECT_EQ(result.rank[v], 0);
    }
  }
  RecordSpread("inside-difference/largest", random.Seed(), largestDifference / largestInside);
  RecordSpread("inside-rank-differences", random.Seed(), double(rankDifferences));
  // Measured (test/seed-spread/measure.sh, 2026-11-25): 3,500 seeds bit-identical and 0 rank differences; one seed
  // of CI's (SVDLR_TEST_SEED=14531601796169269729) 2.5e-9 of the largest value. The bound is float32 rounding
  // with a wide margin: a wrong voxel or patch would differ by the noise (about 1e-1 of it).
  EXPECT_LE(largestDifference, kMaskRoundingBound * largestInside);
  EXPECT_EQ(rankDifferences, 0u);
}

TEST(SVDLowRankLocalDenoise, KnownSigmaMapIsUsedAndReturned)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const NoisySeries  series = LowRankSeries(kSize, kVolumes, 3, kSigma, 4.0, random);
  std::vector<float> known(series.noisy.Voxels());
  for (float & value : known)
  {
    value = float(kSigma * random.Uniform(0.8, 1.2)); // varies voxel to voxel
  }
  for (const RankPolicy policy : { RankPolicy::MarchenkoPastur(), RankPolicy::GavishDonoho() })
  {
    LocalDenoiseOptions options = CpuOptions();
    options.policy = policy;
    options.noiseSigma = known.data();
    ExpectMatchesReference(series.noisy, options, { 5, 5, 5 });
    const Denoised result = Denoise(series.noisy, options);
    EXPECT_EQ(result.sigma, known);
  }
}

TEST(SVDLowRankLocalDenoise, OverlapAverageMatchesReference)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const NoisySeries   series = LowRankSeries(kSize, kVolumes, 3, kSigma, 4.0, random);
  LocalDenoiseOptions options = CpuOptions();
  options.aggregation = PatchAggregation::OverlapAverage;
  options.patchSize = { 3, 5, 3 };
  ExpectMatchesReference(series.noisy, options, { 3, 5, 3 });
}

TEST(SVDLowRankLocalDenoise, OverlapAverageWithStrideMatchesReference)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const NoisySeries series = LowRankSeries(kSize, kVolumes, 3, kSigma, 4.0, random);
  for (const std::size_t stride : { 2, 3 })
  {
    LocalDenoiseOptions options = CpuOptions();
    options.aggregation = PatchAggregation::OverlapAverage;
    options.patchStride = stride;
    SCOPED_TRACE("stride " + std::to_string(stride));
    ExpectMatchesReference(series.noisy, options, { 5, 5, 5 });
  }
}

TEST(SVDLowRankLocalDenoise, StrideWithMaskCoversEveryVoxelInside)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const NoisySeries               series = LowRankSeries(kSize, kVolumes, 3, kSigma, 4.0, random);
  const std::vector<std::uint8_t> mask = BallMask(kSize, random);
  LocalDenoiseOptions             options = CpuOptions();
  options.aggregation = PatchAggregation::OverlapAverage;
  options.patchStride = 3;
  options.mask = mask.data();
  const Denoised result = Denoise(series.noisy, options);
  // A voxel inside is denoised when its series changed: a single denoised value may round to the noisy one. Over 500
  // seeds (2026-11-25), 1 run of 500 kept one of its values inside (0 to 1, mean 0.002), which the check of volume 0
  // alone, as it was, meets about once in 15,000 runs.
  std::size_t valuesKept = 0;
  for (std::size_t v = 0; v < series.noisy.Voxels(); ++v)
  {
    if (mask[v])
    {
      EXPECT_GT(result.rank[v], 0) << "voxel " << v;
      EXPECT_GT(result.sigma[v], 0.0f) << "voxel " << v;
      std::size_t same = 0;
      for (std::size_t t = 0; t < kVolumes; ++t)
      {
        same += result.output(v, t) == series.noisy(v, t) ? 1 : 0;
      }
      valuesKept += same;
      EXPECT_LT(same, kVolumes) << "voxel " << v;
    }
  }
  RecordSpread("values-kept-inside", random.Seed(), double(valuesKept));
}

/** The same series as an itk::VectorImage<float, 3> lays it out: each voxel's volumes contiguous. */
std::vector<float>
VectorLayout(const Series & series)
{
  std::vector<float> values(series.values.size());
  for (std::size_t v = 0; v < series.Voxels(); ++v)
  {
    for (std::size_t t = 0; t < series.volumes; ++t)
    {
      values[v * series.volumes + t] = series(v, t);
    }
  }
  return values;
}

TEST(SVDLowRankLocalDenoise, ImageAndVectorImageLayoutsGiveTheSameResult)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const NoisySeries series = LowRankSeries(kSize, kVolumes, 3, kSigma, 4.0, random);
  for (const PatchAggregation aggregation : { PatchAggregation::CentreVoxel, PatchAggregation::OverlapAverage })
  {
    LocalDenoiseOptions options = CpuOptions();
    options.aggregation = aggregation;
    const Denoised                      image = Denoise(series.noisy, options);
    const std::vector<float>            input = VectorLayout(series.noisy);
    std::vector<float>                  output(input.size(), std::numeric_limits<float>::quiet_NaN());
    const std::array<std::ptrdiff_t, 4> strides{ std::ptrdiff_t(kVolumes), std::ptrdiff_t(kVolumes * kSize[0]),
                                                 std::ptrdiff_t(kVolumes * kSize[0] * kSize[1]), 1 };
    svdlr::DenoiseLocalLowRank({ input.data(), kSize, kVolumes, strides }, { output.data(), kSize, kVolumes, strides },
                               {}, options);
    EXPECT_EQ(output, VectorLayout(image.output)) << "aggregation " << int(aggregation);
  }
}

TEST(SVDLowRankLocalDenoise, InPlaceGivesTheSameResult)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const NoisySeries               series = LowRankSeries(kSize, kVolumes, 3, kSigma, 4.0, random);
  const std::vector<std::uint8_t> mask = BallMask(kSize, random);
  for (const PatchAggregation aggregation : { PatchAggregation::CentreVoxel, PatchAggregation::OverlapAverage })
  {
    LocalDenoiseOptions options = CpuOptions();
    options.aggregation = aggregation;
    options.mask = mask.data();
    const Denoised expected = Denoise(series.noisy, options);
    Series         buffer = series.noisy;
    svdlr::DenoiseLocalLowRank(buffer.View(), buffer.View(), {}, options);
    EXPECT_EQ(buffer.values, expected.output.values) << "aggregation " << int(aggregation);
  }
}

TEST(SVDLowRankLocalDenoise, ResultDoesNotDependOnTheThreadCount)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const NoisySeries series = LowRankSeries(kSize, kVolumes, 3, kSigma, 4.0, random);
  for (const PatchAggregation aggregation : { PatchAggregation::CentreVoxel, PatchAggregation::OverlapAverage })
  {
    LocalDenoiseOptions options = CpuOptions();
    options.aggregation = aggregation;
    options.threads = 1;
    const Denoised one = Denoise(series.noisy, options);
    options.threads = 5;
    const Denoised five = Denoise(series.noisy, options);
    EXPECT_EQ(one.output.values, five.output.values) << "aggregation " << int(aggregation);
  }
}

// OverlapAverage's workers add their patches in a fixed order, each waiting only for the neighbours before it
// (svdlrOverlapSchedule.h): with more workers than a plane has blocks of one colour, with steps of several planes,
// with a mask that leaves rows and blocks empty and with a patch of unequal extents, a missed wait would lose an
// addition or change a voxel's sum order.
TEST(SVDLowRankLocalDenoise, OverlapAverageInAMaskDoesNotDependOnTheThreadCount)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::array<std::size_t, 3> size{ 17, 13, 12 };
  const NoisySeries                series = LowRankSeries(size, kVolumes, 3, kSigma, 4.0, random);
  const std::vector<std::uint8_t>  mask = BallMask(size, random);
  for (const std::array<std::size_t, 3> patch : { std::array<std::size_t, 3>{ 3, 5, 3 }, { 5, 3, 5 } })
  {
    for (const bool masked : { true, false })
    {
      LocalDenoiseOptions options = CpuOptions();
      options.aggregation = PatchAggregation::OverlapAverage;
      options.patchSize = patch;
      options.mask = masked ? mask.data() : nullptr;
      options.threads = 1;
      const Denoised one = Denoise(series.noisy, options);
      for (const unsigned threads : { 3u, 16u })
      {
        options.threads = threads;
        const Denoised many = Denoise(series.noisy, options);
        EXPECT_EQ(one.output.values, many.output.values)
          << threads << " threads, patch " << patch[0] << "x" << patch[1] << "x" << patch[2]
          << (masked ? ", masked" : "");
        EXPECT_EQ(one.sigma, many.sigma) << threads << " threads";
        EXPECT_EQ(one.report.patches, many.report.patches) << threads << " threads";
      }
    }
  }
}

TEST(SVDLowRankLocalDenoise, DefaultPatchSizeIsTheSmallestOddCubeHoldingTheVolumes)
{
  using Patch = std::array<std::size_t, 3>;
  EXPECT_EQ(svdlr::DefaultPatchSize(2), (Patch{ 3, 3, 3 }));
  EXPECT_EQ(svdlr::DefaultPatchSize(27), (Patch{ 3, 3, 3 }));
  EXPECT_EQ(svdlr::DefaultPatchSize(28), (Patch{ 5, 5, 5 }));
  EXPECT_EQ(svdlr::DefaultPatchSize(65), (Patch{ 5, 5, 5 }));
  EXPECT_EQ(svdlr::DefaultPatchSize(126), (Patch{ 7, 7, 7 }));
}

TEST(SVDLowRankLocalDenoise, DefaultPatchShrinksToAThinImageAndGrowsTheOtherAxes)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  using Patch = std::array<std::size_t, 3>;
  const NoisySeries slab = LowRankSeries({ 14, 12, 4 }, 65, 2, kSigma, 4.0, random);
  EXPECT_EQ(Denoise(slab.noisy, CpuOptions()).report.patchSize, (Patch{ 5, 5, 3 })); // 75 >= 65 voxels
  const NoisySeries slice = LowRankSeries({ 14, 12, 1 }, 65, 2, kSigma, 4.0, random);
  EXPECT_EQ(Denoise(slice.noisy, CpuOptions()).report.patchSize, (Patch{ 9, 9, 1 })); // 81 >= 65
  const NoisySeries small = LowRankSeries({ 4, 3, 1 }, 65, 2, kSigma, 4.0, random);
  EXPECT_EQ(Denoise(small.noisy, CpuOptions()).report.patchSize, (Patch{ 3, 3, 1 })); // the whole image it can
}

TEST(SVDLowRankLocalDenoise, AutoRunsOnTheCpuWhenCudaIsUnavailable)
{
  if (svdlr::CudaDeviceUsable(0))
  {
    GTEST_SKIP() << "a CUDA device is usable here";
  }
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const NoisySeries   series = LowRankSeries(kSize, kVolumes, 2, kSigma, 4.0, random);
  LocalDenoiseOptions options = CpuOptions();
  options.backend = svdlr::Backend::Auto;
  const Denoised result = Denoise(series.noisy, options);
  EXPECT_EQ(result.report.backend, svdlr::Backend::CPU);
  EXPECT_EQ(result.output.values, Denoise(series.noisy, CpuOptions()).output.values);
}

// Errors: each bad request gets its own code and a message that names the problem.

void
ExpectError(const Series & input, Series & output, const LocalDenoiseOptions & options, svdlr::ErrorCode code,
            const std::string & words)
{
  try
  {
    svdlr::DenoiseLocalLowRank(input.View(), output.View(), {}, options);
    ADD_FAILURE() << "expected an error about " << words;
  }
  catch (const svdlr::Error & error)
  {
    EXPECT_EQ(error.Code(), code) << error.what();
    EXPECT_NE(std::string(error.what()).find(words), std::string::npos) << error.what();
  }
}

void
ExpectInvalid(const LocalDenoiseOptions & options, const std::string & words, std::array<std::size_t, 3> size = kSize,
              std::size_t volumes = kVolumes)
{
  Random      random;
  const auto  series = LowRankSeries(size, volumes, 1, kSigma, 4.0, random);
  Series      output = EmptySeries(size, volumes);
  ExpectError(series.noisy, output, options, svdlr::ErrorCode::InvalidArgument, words);
}

TEST(SVDLowRankLocalDenoiseErrors, FewerThanTwoVolumesIsRejected)
{
  ExpectInvalid(CpuOptions(), "at least 2 volumes", kSize, 1);
}

TEST(SVDLowRankLocalDenoiseErrors, EmptyImageIsRejected)
{
  Series input = EmptySeries({ 4, 0, 3 }, kVolumes), output = input;
  ExpectError(input, output, CpuOptions(), svdlr::ErrorCode::InvalidArgument, "empty image");
}

TEST(SVDLowRankLocalDenoiseErrors, MismatchedOutputIsRejected)
{
  Random       random;
  const auto   series = LowRankSeries(kSize, kVolumes, 1, kSigma, 4.0, random);
  Series       output = EmptySeries(kSize, kVolumes - 1);
  ExpectError(series.noisy, output, CpuOptions(), svdlr::ErrorCode::InvalidArgument, "differs");
}

TEST(SVDLowRankLocalDenoiseErrors, OutputOverlappingTheInputIsRejected)
{
  Random     random;
  auto       series = LowRankSeries(kSize, kVolumes, 1, kSigma, 4.0, random);
  auto       shifted = series.noisy.View();
  shifted.data += 1; // same buffer, one element on
  shifted.size[0] -= 1;
  auto input = series.noisy.View();
  input.size[0] -= 1;
  try
  {
    svdlr::DenoiseLocalLowRank(input, shifted, {}, CpuOptions());
    ADD_FAILURE() << "expected an error";
  }
  catch (const svdlr::Error & error)
  {
    EXPECT_EQ(error.Code(), svdlr::ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(error.what()).find("overlaps"), std::string::npos) << error.what();
  }
}

TEST(SVDLowRankLocalDenoiseErrors, BadPatchSizesAreRejected)
{
  const struct
  {
    std::array<std::size_t, 3> patchSize;
    const char *               message;
  } cases[] = { { { 5, 4, 5 }, "must be odd" },
                { { 5, 0, 5 }, "must be odd and >= 1" },
                { { 5, 5, 11 }, "exceeds the image" },
                { { 1, 1, 1 }, "at least 2 voxels" } };
  for (const auto & c : cases)
  {
    SCOPED_TRACE(c.message);
    LocalDenoiseOptions options = CpuOptions();
    options.patchSize = c.patchSize;
    ExpectInvalid(options, c.message);
  }
}

TEST(SVDLowRankLocalDenoiseErrors, StrideWithCentreVoxelIsRejected)
{
  LocalDenoiseOptions options = CpuOptions();
  options.patchStride = 2;
  ExpectInvalid(options, "OverlapAverage");
}

TEST(SVDLowRankLocalDenoiseErrors, StrideAboveThePatchExtentIsRejected)
{
  LocalDenoiseOptions options = CpuOptions();
  options.aggregation = PatchAggregation::OverlapAverage;
  options.patchSize = { 5, 3, 5 };
  options.patchStride = 4;
  ExpectInvalid(options, "leave gaps");
}

TEST(SVDLowRankLocalDenoiseErrors, BadKnownSigmaIsRejectedNamingTheVoxel)
{
  std::vector<float> known(kSize[0] * kSize[1] * kSize[2], 1.0f);
  LocalDenoiseOptions options = CpuOptions();
  options.noiseSigma = known.data();
  known[37] = -0.5f;
  ExpectInvalid(options, "voxel 37 (x 1, y 3, z 0)");
  known[37] = std::numeric_limits<float>::quiet_NaN();
  ExpectInvalid(options, "voxel 37");
  known[37] = std::numeric_limits<float>::infinity();
  ExpectInvalid(options, "voxel 37");
}

TEST(SVDLowRankLocalDenoiseErrors, PolicyOutOfRangeIsRejected)
{
  LocalDenoiseOptions options = CpuOptions();
  options.policy = RankPolicy::Fixed(0);
  ExpectInvalid(options, "rank must be at least 1");
  options.policy = RankPolicy::Energy(1.5);
  ExpectInvalid(options, "energy fraction");
  options.policy = RankPolicy::GavishDonoho(-1.0);
  ExpectInvalid(options, "noise sigma must be finite and >= 0");
  options.policy = RankPolicy::MarchenkoPastur(static_cast<svdlr::MarchenkoPasturEstimator>(7));
  ExpectInvalid(options, "estimator");
  options.policy.kind = static_cast<RankPolicy::Kind>(9);
  ExpectInvalid(options, "unknown rank policy");
}

TEST(SVDLowRankLocalDenoiseErrors, OptimalShrinkageWithoutSigmaIsRejected)
{
  LocalDenoiseOptions options = CpuOptions();
  options.policy = RankPolicy::Fixed(2);
  options.shrinkage = svdlr::Shrinkage::OptimalFrobenius;
  ExpectInvalid(options, "needs σ");
}

TEST(SVDLowRankLocalDenoiseErrors, NonFiniteInputNamesTheFirstVoxel)
{
  Random     random;
  auto       series = LowRankSeries(kSize, kVolumes, 1, kSigma, 4.0, random);
  Series     output = EmptySeries(kSize, kVolumes);
  series.noisy(500, 17) = std::numeric_limits<float>::infinity();
  series.noisy(321, 29) = std::numeric_limits<float>::quiet_NaN();
  try
  {
    svdlr::DenoiseLocalLowRank(series.noisy.View(), output.View(), {}, CpuOptions());
    FAIL() << "expected an error";
  }
  catch (const svdlr::Error & error)
  {
    EXPECT_EQ(error.Code(), svdlr::ErrorCode::NonFiniteInput);
    EXPECT_EQ(error.Matrix(), 321);
    EXPECT_NE(std::string(error.what()).find("voxel 321"), std::string::npos) << error.what();
  }
}

TEST(SVDLowRankLocalDenoiseErrors, CudaRequestedWithoutCudaIsUnavailable)
{
  if (svdlr::CudaDeviceUsable(0))
  {
    GTEST_SKIP() << "a CUDA device is usable here";
  }
  LocalDenoiseOptions options;
  options.backend = svdlr::Backend::CUDA;
  Random     random;
  const auto series = LowRankSeries(kSize, kVolumes, 1, kSigma, 4.0, random);
  Series     output = EmptySeries(kSize, kVolumes);
  ExpectError(series.noisy, output, options, svdlr::ErrorCode::BackendUnavailable, "CUDA");
}

} // namespace
