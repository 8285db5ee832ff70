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
// The CUDA backend's host-side logic (batch results, batch planning, buffer layout): runs without a GPU.
#include "svdlr/Engine.h"

#include "cuda/svdlrCudaPipeline.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace
{

// ---------------------------------------------------------------------------------------------------------
// The backend's host-side logic: runs without a GPU.

svdlr::Report
SizedReport(std::size_t count)
{
  svdlr::Report report;
  report.ranks.assign(count, 0);
  report.singularValues.assign(count, {});
  report.noiseSigmas.assign(count, std::numeric_limits<double>::quiet_NaN());
  return report;
}

TEST(SVDLowRankCudaHostLogic, BatchResultsGiveDescendingSingularValuesAndClampRoundingBelowZero)
{
  // Two matrices of n = 3 at positions 5 and 6 of the run; eigenvalues ascending as cuSOLVER gives them.
  const std::vector<double> eigenvalues = { -1e-18, 0.25, 4.0, 0.0, 0.0, 9.0 };
  const std::vector<int>    flags = { 0, 0 }, info = { 0, 0 };
  std::vector<int>          ranks(2, -1);
  svdlr::Report             report = SizedReport(7);
  const std::size_t         largest = svdlr::detail::CollectBatchResults(
    flags.data(), info.data(), eigenvalues.data(), 5, 2, 3, 3, 3, svdlr::RankPolicy::Fixed(2), report, ranks.data());
  EXPECT_EQ(report.singularValues[5], (std::vector<double>{ 2.0, 0.5, 0.0 }));
  EXPECT_EQ(report.singularValues[6], (std::vector<double>{ 3.0, 0.0, 0.0 }));
  EXPECT_EQ(report.ranks[5], 2u);
  EXPECT_EQ(ranks, (std::vector<int>{ 2, 2 }));
  EXPECT_EQ(largest, 2u);
}

TEST(SVDLowRankCudaHostLogic, BatchResultsPickARankPerMatrix)
{
  // Energies 16/9/4/1 (fraction .9 needs 3) and 9/0/0/0 (needs 1); a zero matrix gets rank 0.
  const std::vector<double> eigenvalues = { 1, 4, 9, 16, 0, 0, 0, 9, 0, 0, 0, 0 };
  const std::vector<int>    flags(3, 0), info(3, 0);
  std::vector<int>          ranks(3, -1);
  svdlr::Report             report = SizedReport(3);
  const std::size_t         largest = svdlr::detail::CollectBatchResults(
    flags.data(), info.data(), eigenvalues.data(), 0, 3, 4, 4, 4, svdlr::RankPolicy::Energy(0.9), report, ranks.data());
  EXPECT_EQ(report.ranks, (std::vector<std::size_t>{ 3, 1, 0 }));
  EXPECT_EQ(ranks, (std::vector<int>{ 3, 1, 0 }));
  EXPECT_EQ(largest, 3u);
}

TEST(SVDLowRankCudaHostLogic, BatchResultsNameTheFirstNonFiniteMatrixBeforeAnySolverFailure)
{
  const std::vector<double> eigenvalues(8, 1.0);
  const std::vector<int>    flags = { 0, 0, 1, 1 }, info = { 0, 3, 0, 0 };
  std::vector<int>          ranks(4);
  svdlr::Report             report = SizedReport(14);
  try
  {
    svdlr::detail::CollectBatchResults(
      flags.data(), info.data(), eigenvalues.data(), 10, 4, 2, 2, 2, svdlr::RankPolicy::Fixed(1), report, ranks.data());
    FAIL() << "expected svdlr::Error";
  }
  catch (const svdlr::Error & error)
  {
    EXPECT_EQ(error.Code(), svdlr::ErrorCode::NonFiniteInput);
    EXPECT_EQ(error.Matrix(), 12);
    EXPECT_NE(std::string(error.what()).find("matrix 12"), std::string::npos) << error.what();
  }
}

TEST(SVDLowRankCudaHostLogic, BatchResultsNameTheMatrixTheSolverFailedOn)
{
  const std::vector<double> eigenvalues(4, 1.0);
  const std::vector<int>    flags = { 0, 0 }, info = { 0, 7 };
  std::vector<int>          ranks(2);
  svdlr::Report             report = SizedReport(4);
  try
  {
    svdlr::detail::CollectBatchResults(
      flags.data(), info.data(), eigenvalues.data(), 2, 2, 2, 2, 2, svdlr::RankPolicy::Fixed(1), report, ranks.data());
    FAIL() << "expected svdlr::Error";
  }
  catch (const svdlr::Error & error)
  {
    EXPECT_EQ(error.Code(), svdlr::ErrorCode::NumericalFailure);
    EXPECT_EQ(error.Matrix(), 3);
  }
}

svdlr::detail::BatchGeometry
FloatGeometry(std::int64_t rows, std::int64_t cols)
{
  svdlr::detail::BatchGeometry geometry;
  geometry.rows = rows;
  geometry.cols = cols;
  geometry.elementBytes = sizeof(float);
  geometry.convertsToDouble = true;
  return geometry;
}

// A stand-in for cuSOLVER's workspace query: 3.7 MB per 256^2 matrix, as measured for XsyevBatched.
std::size_t
FakeEigenWorkspace(std::size_t batch)
{
  return batch * 3700000;
}

constexpr std::size_t kPlentyOfMemory = std::size_t{ 64 } << 30;

TEST(SVDLowRankCudaHostLogic, PlanSplitsALargeRunInTwoForOverlap)
{
  const auto plan = svdlr::detail::PlanBatches(FloatGeometry(256, 256), 256, 0, kPlentyOfMemory, FakeEigenWorkspace);
  EXPECT_EQ(plan.batches, 2u);
  EXPECT_EQ(plan.batchSize, 128u);
  EXPECT_EQ(plan.slots, 2u);
}

TEST(SVDLowRankCudaHostLogic, PlanKeepsASmallRunInOneBatchOnOneStream)
{
  const auto plan = svdlr::detail::PlanBatches(FloatGeometry(181, 217), 181, 0, kPlentyOfMemory, FakeEigenWorkspace);
  EXPECT_EQ(plan.batches, 1u);
  EXPECT_EQ(plan.batchSize, 181u);
  EXPECT_EQ(plan.slots, 1u);
}

TEST(SVDLowRankCudaHostLogic, PlanHonoursMaxMatricesPerBatchWithEvenBatches)
{
  const auto plan = svdlr::detail::PlanBatches(FloatGeometry(32, 24), 257, 64, kPlentyOfMemory, FakeEigenWorkspace);
  EXPECT_EQ(plan.batches, 5u);
  EXPECT_EQ(plan.batchSize, 52u);
  EXPECT_EQ(plan.slots, 2u);
}

TEST(SVDLowRankCudaHostLogic, PlanFitsTwoSlotsInTheAvailableMemory)
{
  const auto        geometry = FloatGeometry(256, 256);
  const std::size_t available = std::size_t{ 1 } << 30;
  const auto        plan = svdlr::detail::PlanBatches(geometry, 1000, 0, available, FakeEigenWorkspace);
  ASSERT_GE(plan.batchSize, 1u);
  EXPECT_EQ(plan.slots, 2u);
  EXPECT_LE(2 * svdlr::detail::ComputeSlotLayout(geometry, plan.batchSize, FakeEigenWorkspace(plan.batchSize)).Total(),
            available);
  EXPECT_GE(plan.batchSize * plan.batches, 1000u);
}

TEST(SVDLowRankCudaHostLogic, PlanNeverExceedsTheGridLimit)
{
  const auto plan = svdlr::detail::PlanBatches(FloatGeometry(4, 4), 200000, 0, kPlentyOfMemory, FakeEigenWorkspace);
  EXPECT_LE(plan.batchSize, 65535u);
  EXPECT_GE(plan.batchSize * plan.batches, 200000u);
}

TEST(SVDLowRankCudaHostLogic, SlotLayoutReusesTheSolverWorkspaceForTheFactors)
{
  // 10 matrices of 300 x 200 (n = 200): factors P (10, 300, 200) and Q (10, 200, 200) in float64.
  const auto        geometry = FloatGeometry(300, 200);
  const std::size_t factors = 10 * (300 + 200) * 200 * sizeof(double);
  EXPECT_EQ(svdlr::detail::ComputeSlotLayout(geometry, 10, 0).scratch, factors);
  EXPECT_EQ(svdlr::detail::ComputeSlotLayout(geometry, 10, 2 * factors).scratch, 2 * factors);
  auto doubles = geometry;
  doubles.elementBytes = sizeof(double);
  doubles.convertsToDouble = false;
  EXPECT_EQ(svdlr::detail::ComputeSlotLayout(doubles, 10, 0).a, 0u); // double input is converted in place
}

} // namespace

namespace
{

svdlr::Options
SolverOptions(svdlr::Solver solver, svdlr::RankPolicy policy)
{
  svdlr::Options options;
  options.solver = solver;
  options.policy = policy;
  return options;
}

} // namespace

TEST(SVDLowRankCudaHostLogic, SubspacePlanOversamplesSmallRanksForFloat32Data)
{
  using svdlr::detail::PlanSubspace;
  const auto auto32 = [](std::size_t k, std::int64_t rows, std::int64_t cols, std::size_t count = 256) {
    return PlanSubspace(SolverOptions(svdlr::Solver::Auto, svdlr::RankPolicy::Fixed(k)), rows, cols, count, false);
  };
  EXPECT_EQ(auto32(32, 256, 256).width, 64);   // W1: p = k
  EXPECT_EQ(auto32(4, 256, 256).width, 20);    // at least 16 beyond the rank
  EXPECT_EQ(auto32(100, 256, 256).width, 160); // capped by the Cholesky kernel's shared memory
  EXPECT_GT(auto32(20, 217, 181).iterations, 0);
  EXPECT_FALSE(auto32(120, 256, 130).Used()); // the block would be the whole space
  EXPECT_FALSE(auto32(200, 512, 512).Used()); // no room to oversample
  EXPECT_FALSE(auto32(100, 256, 256, 1).Used()); // one small slice: the exact solver is faster
  EXPECT_TRUE(auto32(64, 1024, 1024, 1).Used()); // one large slice: the subspace solver is faster
}

TEST(SVDLowRankCudaHostLogic, SubspacePlanFollowsTheRequest)
{
  using svdlr::detail::PlanSubspace;
  const auto fixed = svdlr::RankPolicy::Fixed(8);
  EXPECT_FALSE(PlanSubspace(SolverOptions(svdlr::Solver::Exact, fixed), 256, 256, 256, false).Used());
  EXPECT_FALSE(PlanSubspace(SolverOptions(svdlr::Solver::Auto, fixed), 256, 256, 256, true).Used()); // float64 data
  EXPECT_FALSE(PlanSubspace(SolverOptions(svdlr::Solver::Auto, svdlr::RankPolicy::Energy(0.9)), 256, 256, 256, false).Used());
  EXPECT_TRUE(PlanSubspace(SolverOptions(svdlr::Solver::Subspace, fixed), 256, 256, 256, true).Used());
  EXPECT_EQ(PlanSubspace(SolverOptions(svdlr::Solver::Subspace, svdlr::RankPolicy::Fixed(30)), 40, 30, 1, false).width, 30);
  try
  {
    PlanSubspace(SolverOptions(svdlr::Solver::Subspace, svdlr::RankPolicy::Fixed(200)), 512, 512, 1, false);
    ADD_FAILURE() << "a rank beyond the block cap must be refused";
  }
  catch (const svdlr::Error & error)
  {
    EXPECT_EQ(error.Code(), svdlr::ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(error.what()).find("Solver::Exact"), std::string::npos) << error.what();
  }
  // The default block: max(2k, k + 16) = 24 vectors for k = 8, 12 iterations.
  const auto plan = PlanSubspace(SolverOptions(svdlr::Solver::Subspace, fixed), 256, 256, 256, false);
  EXPECT_EQ(plan.width, 24);
  EXPECT_EQ(plan.iterations, 12);
}
