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
// Ranks chosen from the noise on the CUDA backend: its host logic (without a GPU), then, on a GPU, the same ranks and
// σ as the CPU backend, and the threshold math of svdlrNoiseThreshold.h evaluated in a kernel giving the host's
// answers.
#include "svdlrCudaTestFixture.h"
#include "svdlrNoiseReference.h"
#include "svdlrNoiseThresholdOnDevice.h"

#include "cuda/svdlrCudaPipeline.h"
#include "noise/svdlrNoiseThreshold.h"
#include "noise/svdlrRankSelection.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace
{
using namespace svdlr::test;
using svdlr::MarchenkoPasturEstimator;
using svdlr::RankPolicy;

// ---------------------------------------------------------------------------------------------------------
// Host logic: runs without a GPU.

TEST(SVDLowRankCudaHostLogic, BatchResultsGiveTheNoisePolicysRankAndSigma)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::size_t   rows = 125, cols = 65, count = 3;
  std::vector<double> eigenvalues; // (count, cols) ascending
  std::vector<std::vector<double>> singular;
  for (std::size_t i = 0; i < count; ++i)
  {
    const ReferenceSvd svd(LowRankPlusNoise(rows, cols, SignalAboveEdge(rows, cols, 3, 2.0, 1.5, 3.0), 2.0, random));
    singular.push_back(svd.SingularValues());
    for (auto it = svd.SingularValues().rbegin(); it != svd.SingularValues().rend(); ++it)
    {
      eigenvalues.push_back(*it * *it);
    }
  }
  for (const RankPolicy & policy : NoisePolicies(2.0))
  {
    const std::vector<int> flags(count, 0), info(count, 0);
    std::vector<int>       ranks(count, -1);
    svdlr::Report          report;
    report.ranks.assign(count + 1, 0);
    report.singularValues.assign(count + 1, {});
    report.noiseSigmas.assign(count + 1, std::numeric_limits<double>::quiet_NaN());
    svdlr::detail::CollectBatchResults(
      flags.data(), info.data(), eigenvalues.data(), 1, count, cols, rows, cols, policy, report, ranks.data());
    EXPECT_TRUE(std::isnan(report.noiseSigmas[0])); // not in this batch
    for (std::size_t i = 0; i < count; ++i)
    {
      const ReferenceNoiseChoice reference = ReferenceNoiseRank(policy, singular[i], rows, cols);
      EXPECT_EQ(report.ranks[1 + i], reference.rank);
      EXPECT_EQ(ranks[i], static_cast<int>(reference.rank));
      EXPECT_NEAR(report.noiseSigmas[1 + i], reference.sigma, 1e-9 * reference.sigma);
    }
  }
}

TEST(SVDLowRankCudaHostLogic, AutoSolverTakesTheExactSolverForNoisePolicies)
{
  for (const RankPolicy & policy : NoisePolicies(1.0))
  {
    svdlr::Options options;
    options.policy = policy;
    options.solver = svdlr::Solver::Auto;
    // A shape and batch where a fixed rank would take the subspace solver.
    EXPECT_FALSE(svdlr::detail::PlanSubspace(options, 256, 256, 256, false).Used());
  }
}

// ---------------------------------------------------------------------------------------------------------
// On a GPU.

template <typename T>
void
ExpectSameRanksAndSigmasAsTheCpu()
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  struct Shape
  {
    std::size_t rows, cols, rank;
  };
  for (const Shape shape : { Shape{ 256, 256, 5 }, Shape{ 200, 65, 2 }, Shape{ 65, 200, 2 }, Shape{ 1000, 50, 2 } })
  {
    constexpr std::size_t count = 6;
    const double          sigma = random.Uniform(0.5, 20.0);
    std::vector<Matrix>   matrices;
    for (std::size_t i = 0; i < count; ++i)
    {
      matrices.push_back(RoundedTo<T>(LowRankPlusNoise(
        shape.rows, shape.cols, SignalAboveEdge(shape.rows, shape.cols, shape.rank, sigma, 1.5, 3.0), sigma, random)));
    }
    const std::vector<T> input = Pack<T>(matrices);
    for (const RankPolicy & policy : NoisePolicies(sigma))
    {
      SCOPED_TRACE(std::to_string(shape.rows) + " x " + std::to_string(shape.cols));
      std::vector<T> gpuOutput(input.size()), cpuOutput(input.size());
      const auto     gpu = svdlr::Reconstruct(ConstBatch(input, count, shape.rows, shape.cols),
                                          MutableBatch(gpuOutput, count, shape.rows, shape.cols),
                                          GpuOptions(policy));
      const auto     cpu = svdlr::Reconstruct(ConstBatch(input, count, shape.rows, shape.cols),
                                          MutableBatch(cpuOutput, count, shape.rows, shape.cols),
                                          OptionsFor(policy, svdlr::Backend::CPU));
      ASSERT_EQ(gpu.backend, svdlr::Backend::CUDA);
      EXPECT_EQ(gpu.solver, svdlr::Solver::Exact);
      EXPECT_EQ(gpu.ranks, cpu.ranks);
      for (std::size_t i = 0; i < count; ++i)
      {
        EXPECT_NEAR(gpu.noiseSigmas[i], cpu.noiseSigmas[i], 1e-8 * cpu.noiseSigmas[i]) << "matrix " << i;
        EXPECT_EQ(gpu.singularValues[i].size(), std::min(shape.rows, shape.cols));
      }
    }
  }
}

TEST_F(SVDLowRankEngineCuda, Float32NoisePoliciesGiveTheCpuRanksAndSigmas)
{
  ExpectSameRanksAndSigmasAsTheCpu<float>();
}

TEST_F(SVDLowRankEngineCuda, Float64NoisePoliciesGiveTheCpuRanksAndSigmas)
{
  ExpectSameRanksAndSigmasAsTheCpu<double>();
}

TEST_F(SVDLowRankEngineCuda, FixedRankReportsNaNSigmasOnTheGpu)
{
  Random                   random;
  const std::vector<float> input = Pack<float>({ RandomMatrix(40, 30, random), RandomMatrix(40, 30, random) });
  std::vector<float>       output(input.size());
  const auto report = svdlr::Reconstruct(ConstBatch(input, 2, 40, 30), MutableBatch(output, 2, 40, 30),
                                         GpuOptions(RankPolicy::Fixed(3)));
  ASSERT_EQ(report.noiseSigmas.size(), 2u);
  EXPECT_TRUE(std::isnan(report.noiseSigmas[0]));
  EXPECT_TRUE(std::isnan(report.noiseSigmas[1]));
}

// The functions the local denoiser's kernels call, evaluated on the device: the host's decisions to within the
// rounding of a few hundred floating-point operations.
TEST_F(SVDLowRankEngineCuda, NoiseThresholdsOnTheDeviceEqualTheHosts)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  for (const auto & shape : { std::pair<int, int>{ 125, 65 }, std::pair<int, int>{ 65, 343 }, std::pair<int, int>{ 80, 80 } })
  {
    const int           rows = shape.first, cols = shape.second, values = std::min(rows, cols), count = 40;
    std::vector<double> eigenvalues;
    for (int i = 0; i < count; ++i)
    {
      const ReferenceSvd svd(LowRankPlusNoise(rows, cols, SignalAboveEdge(rows, cols, 1 + i % 4, 1.0, 1.2, 3.0), 1.0, random));
      for (auto it = svd.SingularValues().rbegin(); it != svd.SingularValues().rend(); ++it)
      {
        eigenvalues.push_back(*it * *it);
      }
    }
    for (const RankPolicy & policy : NoisePolicies(1.0))
    {
      const auto decisions = DecideNoiseRanksOnDevice(eigenvalues, count, rows, cols, policy);
      for (int i = 0; i < count; ++i)
      {
        const double * own = eigenvalues.data() + static_cast<std::size_t>(i) * values;
        const auto     host = policy.kind == RankPolicy::Kind::GavishDonoho
                                ? svdlr::detail::GavishDonohoRank(own, values, rows, cols, policy.noiseSigma)
                                : svdlr::detail::MarchenkoPasturRank(own, values, rows, cols, policy.estimator);
        EXPECT_EQ(decisions[i].rank, host.rank) << "matrix " << i;
        EXPECT_NEAR(decisions[i].sigma, host.sigma, 1e-12 * host.sigma) << "matrix " << i;
        const double shrunk = svdlr::detail::OptimalFrobeniusShrinkage(std::sqrt(own[values - 1]), host.sigma, rows, cols);
        EXPECT_NEAR(decisions[i].largestShrunk, shrunk, 1e-12 * shrunk) << "matrix " << i;
      }
    }
  }
}

} // namespace
