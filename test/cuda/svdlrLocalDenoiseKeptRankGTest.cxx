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
// The CUDA local denoiser computes the eigenvectors of each patch's kept rank only (the ranks are chosen from the
// eigenvalues first): it must give what the CPU backend gives, at rank 0, at full rank, and with ties among the kept
// eigenvalues. Then the device memory limit (LocalDenoiseOptions::deviceMemoryLimit): the
// buffers stay within it, the result does not change, and a limit too small for one patch is a clear error. Every
// test skips, saying why, without a usable CUDA device.
#include "svdlrLocalDenoiseCudaTesting.h"

#include "svdlr/RankPolicy.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace
{
using namespace svdlr::test;

/** The kept-rank path of our eigen-solver gives the CPU's result. */
void
ExpectKeptRankEqualsCpu(const Series & input, const LocalDenoiseOptions & options)
{
  const Result                         cpu = Denoise(input, options, svdlr::Backend::CPU);
  svdlr::detail::LocalDenoiseCudaTrace keptTrace;
  const Result                         kept = DenoiseTuned(input, options, cpu.report.patchSize, {}, keptTrace);
  EXPECT_FALSE(keptTrace.usedCusolver);
  ExpectSameResult(kept, cpu, input);
}

/** How many voxels kept rank `rank`. */
std::size_t
VoxelsOfRank(const Result & result, std::uint16_t rank)
{
  return static_cast<std::size_t>(std::count(result.rank.begin(), result.rank.end(), rank));
}

/** Two components of equal energy in every 5-wide patch: cos and sin of 2πx/5 are orthogonal with equal norms over
 * any 5 consecutive x, so each patch's two singular values tie (to float rounding of the series), times two
 * orthonormal time courses; no noise. */
Series
TiedPair(std::array<std::size_t, 3> size, std::size_t volumes, Random & random)
{
  Series s = ZeroSeries(size, volumes);
  const double pi = 3.14159265358979323846;
  const double phase = random.Uniform(0.0, 2.0 * pi);
  const double shift = random.Uniform(0.0, 2.0 * pi);
  for (std::size_t z = 0; z < size[2]; ++z)
    for (std::size_t y = 0; y < size[1]; ++y)
      for (std::size_t x = 0; x < size[0]; ++x)
        for (std::size_t t = 0; t < volumes; ++t)
        {
          const double angle = 2.0 * pi * static_cast<double>(x) / 5.0 + phase;
          // cos and sin of 2π t / volumes + shift: orthogonal with equal norms over the volumes too.
          const double time = 2.0 * pi * static_cast<double>(t) / static_cast<double>(volumes) + shift;
          s.At(x, y, z, t) = static_cast<float>(10.0 * (std::cos(angle) * std::cos(time) + std::sin(angle) * std::sin(time)));
        }
  return s;
}

TEST_F(LocalDenoiseCuda, KeptRankEigenvectorsGiveWhatTheCpuGives)
{
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series input = LowRankPlusNoise({ 15, 14, 12 }, 30, 4, m_Random);
  for (const auto aggregation : { PatchAggregation::CentreVoxel, PatchAggregation::OverlapAverage })
  {
    for (const auto shrinkage : { svdlr::Shrinkage::Hard, svdlr::Shrinkage::OptimalFrobenius })
    {
      SCOPED_TRACE(std::string(aggregation == PatchAggregation::CentreVoxel ? "centre" : "overlap") +
                   (shrinkage == svdlr::Shrinkage::Hard ? ", hard" : ", frobenius"));
      LocalDenoiseOptions options = WrittenForOptions();
      options.aggregation = aggregation;
      options.shrinkage = shrinkage;
      ExpectKeptRankEqualsCpu(input, options);
    }
  }
  // The Marchenko-Pastur variant dwidenoise 3.0 defaults to.
  LocalDenoiseOptions exp2 = WrittenForOptions();
  exp2.policy = svdlr::RankPolicy::MarchenkoPastur(svdlr::MarchenkoPasturEstimator::CorderoGrande2019);
  ExpectKeptRankEqualsCpu(input, exp2);
}

TEST_F(LocalDenoiseCuda, KeptRankZeroOnPureNoiseAndFullRankEqualCpu)
{
  SCOPED_TRACE(m_Random.SeedTrace());
  // Rank 0: pure noise, where Marchenko-Pastur keeps nothing in most patches.
  const Series noise = LowRankPlusNoise({ 14, 13, 11 }, 24, 0, m_Random);
  LocalDenoiseOptions options = WrittenForOptions();
  options.aggregation = PatchAggregation::OverlapAverage;
  options.shrinkage = svdlr::Shrinkage::OptimalFrobenius;
  ExpectKeptRankEqualsCpu(noise, options);
  const Result cpu = Denoise(noise, options, svdlr::Backend::CPU);
  EXPECT_GT(VoxelsOfRank(cpu, 0), noise.Voxels() / 2) << "pure noise should keep rank 0 in most patches";

  // Full rank: every eigenvector kept (n = 24 volumes), so the centre rows come back as they were.
  const Series        input = LowRankPlusNoise({ 11, 10, 9 }, 24, 3, m_Random);
  LocalDenoiseOptions full = WrittenForOptions();
  full.policy = svdlr::RankPolicy::Fixed(24);
  ExpectKeptRankEqualsCpu(input, full);
  const Result gpu = Denoise(input, full, svdlr::Backend::CUDA);
  EXPECT_EQ(VoxelsOfRank(gpu, 24), input.Voxels());
  const double scale = RootMeanSquare(input.data);
  double       worst = 0.0;
  for (std::size_t i = 0; i < input.data.size(); ++i)
  {
    worst = std::max(worst, std::abs(static_cast<double>(gpu.output.data[i]) - input.data[i]));
  }
  EXPECT_LE(worst, 1e-5 * scale) << "full rank must reproduce the series";
}

TEST_F(LocalDenoiseCuda, TiedKeptEigenvaluesEqualCpuAndReproduceTheSeries)
{
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series input = TiedPair({ 13, 11, 10 }, 30, m_Random);
  const double scale = RootMeanSquare(input.data);
  // Rank 2 keeps the tied pair whole; 3 and 5 add eigenvectors from the zero cluster below it (ties again).
  for (const unsigned rank : { 2u, 3u, 5u })
  {
    SCOPED_TRACE("rank " + std::to_string(rank));
    for (const auto aggregation : { PatchAggregation::CentreVoxel, PatchAggregation::OverlapAverage })
    {
      LocalDenoiseOptions options = WrittenForOptions();
      options.policy = svdlr::RankPolicy::Fixed(rank);
      options.aggregation = aggregation;
      options.patchSize = { 5, 5, 5 };
      ExpectKeptRankEqualsCpu(input, options);
      const Result gpu = Denoise(input, options, svdlr::Backend::CUDA);
      double       worst = 0.0;
      for (std::size_t i = 0; i < input.data.size(); ++i)
      {
        worst = std::max(worst, std::abs(static_cast<double>(gpu.output.data[i]) - input.data[i]));
      }
      // The series is exactly of rank 2 (to float rounding): keeping the pair reproduces it.
      EXPECT_LE(worst, 1e-5 * scale);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The device memory limit.

TEST_F(LocalDenoiseCuda, DeviceMemoryLimitBoundsTheBuffersKeepsTheResultAndRefusesTooLittle)
{
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series        input = LowRankPlusNoise({ 16, 15, 14 }, 30, 4, m_Random);
  LocalDenoiseOptions options = WrittenForOptions();
  options.aggregation = PatchAggregation::OverlapAverage;
  const Result cpu = Denoise(input, options, svdlr::Backend::CPU);
  // Unlimited first: the cached buffers are then at least as large as this series takes, and a limited run must
  // give them back rather than keep them.
  const Result roomy = Denoise(input, options, svdlr::Backend::CUDA);
  ASSERT_GT(roomy.report.peakDeviceBytes, 0u);
  std::size_t limit = roomy.report.peakDeviceBytes / 2;
  std::size_t tightestRun = 0;
  for (; limit > 0; limit /= 2)
  {
    SCOPED_TRACE("limit " + std::to_string(limit) + " bytes");
    options.deviceMemoryLimit = limit;
    try
    {
      const Result limited = Denoise(input, options, svdlr::Backend::CUDA);
      EXPECT_LE(limited.report.peakDeviceBytes, limit);
      ExpectSameResult(limited, cpu, input);
      tightestRun = limit;
    }
    catch (const svdlr::Error & error)
    {
      EXPECT_EQ(error.Code(), svdlr::ErrorCode::InvalidArgument) << error.what();
      EXPECT_NE(std::string(error.what()).find("device memory limit"), std::string::npos) << error.what();
      break;
    }
  }
  EXPECT_GT(limit, 0u) << "no limit was refused, not even 1 byte";
  EXPECT_LE(tightestRun, roomy.report.peakDeviceBytes / 8) << "the limit should allow far smaller plans";
  // And without a limit afterwards, from the small cached buffers.
  options.deviceMemoryLimit = 0;
  ExpectSameResult(Denoise(input, options, svdlr::Backend::CUDA), cpu, input);
}

} // namespace
