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
// The subspace solver's a-posteriori check (svdlrSubspaceCheck.h) as plain arithmetic, on the host: the GPU
// runs the same function in a kernel. These run without a GPU (in CI).
#include "slice/svdlrSubspaceCheck.h"

#include "svdlrTestMatrices.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace
{
using svdlr::detail::CheckSubspaceOptimality;
using svdlr::detail::SubspaceCheckOutcome;

/** A spectrum of G (descending) and a block that holds its top w eigenpairs up to the given residuals. */
struct CheckCase
{
  std::vector<double> eigenvalues; // of G, descending
  int                 w{ 0 };
  int                 k{ 0 };
  std::vector<double> ritzAscending;
  std::vector<double> residuals; // descending order of theta

  static CheckCase
  Invariant(std::vector<double> eigenvalues, int w, int k)
  {
    CheckCase c;
    c.eigenvalues = std::move(eigenvalues);
    c.w = w;
    c.k = k;
    c.ritzAscending.assign(c.eigenvalues.begin(), c.eigenvalues.begin() + w);
    std::reverse(c.ritzAscending.begin(), c.ritzAscending.end());
    c.residuals.assign(static_cast<std::size_t>(w), 0.0);
    return c;
  }
  double
  Trace() const
  {
    return std::accumulate(eigenvalues.begin(), eigenvalues.end(), 0.0);
  }
  SubspaceCheckOutcome
  Check() const
  {
    return CheckSubspaceOptimality(Trace(),
                                   ritzAscending.data(),
                                   residuals.data(),
                                   static_cast<int>(eigenvalues.size()),
                                   w,
                                   k);
  }
};

std::vector<double>
Decaying(std::size_t n, double ratio, double floor)
{
  std::vector<double> values(n);
  for (std::size_t i = 0; i < n; ++i)
  {
    values[i] = std::pow(ratio, static_cast<double>(i)) + floor;
  }
  return values;
}

TEST(SubspaceCheck, AnInvariantBlockHoldingTheTopEigenpairsPasses)
{
  const CheckCase            c = CheckCase::Invariant(Decaying(128, 0.9, 1e-3), 32, 16);
  const SubspaceCheckOutcome outcome = c.Check();
  EXPECT_TRUE(outcome.passes);
  EXPECT_EQ(outcome.excess, 0.0); // zero residuals below a gap: nothing can be missing
  // Achieved error: the tail beyond k, up to the rounding allowance.
  double tail = 0.0;
  for (std::size_t i = 16; i < c.eigenvalues.size(); ++i)
  {
    tail += c.eigenvalues[i];
  }
  EXPECT_NEAR(outcome.achieved, tail, 1e-12 * c.Trace());
}

TEST(SubspaceCheck, ResidualsLargeAgainstTheGapFail)
{
  CheckCase c = CheckCase::Invariant(Decaying(128, 0.9, 1e-3), 32, 16);
  for (double & r : c.residuals)
  {
    r = 0.05; // theta_16 = 0.2, theta_32 + rho_32 = 0.04 + 0.05: excess ~ 2 * 16 * 0.0025 / 0.3 = 0.3
  }
  const SubspaceCheckOutcome outcome = c.Check();
  EXPECT_FALSE(outcome.passes);
  // The quadratic estimate, by hand.
  const double top = c.ritzAscending[0] + c.residuals[31];
  double       expected = 0.0;
  for (int i = 0; i < 16; ++i)
  {
    expected += 0.05 * 0.05 / (c.ritzAscending[31 - i] - top);
  }
  expected *= svdlr::detail::kResidualEstimateSafety;
  EXPECT_NEAR(outcome.excess, expected, 1e-12 * expected);
}

TEST(SubspaceCheck, SmallResidualsPassAndTheExcessIsQuadraticInThem)
{
  CheckCase c = CheckCase::Invariant(Decaying(128, 0.9, 1e-3), 32, 16);
  std::fill(c.residuals.begin(), c.residuals.end(), 1e-4);
  const SubspaceCheckOutcome small = c.Check();
  std::fill(c.residuals.begin(), c.residuals.end(), 2e-4);
  const SubspaceCheckOutcome twice = c.Check();
  EXPECT_TRUE(small.passes);
  EXPECT_TRUE(twice.passes);
  EXPECT_GT(small.excess, 0.0);
  EXPECT_NEAR(twice.excess / small.excess, 4.0, 0.01); // the gap moves a little with rho_w
}

TEST(SubspaceCheck, AKeptRitzValueAtTheTopOfTheOutsideFallsBackOnTheOutsideEnergy)
{
  // The block lost columns (zero Ritz pairs, as the orthonormalisation leaves them): theta_k = 0, so only
  // the exact bound Delta <= energy outside the block remains, and it is large.
  CheckCase c = CheckCase::Invariant(Decaying(96, 0.5, 0.0), 24, 10);
  for (int i = 0; i < 20; ++i)
  {
    c.ritzAscending[static_cast<std::size_t>(i)] = 0.0; // only the top 4 survived
  }
  const SubspaceCheckOutcome outcome = c.Check();
  EXPECT_FALSE(outcome.passes);
  double outside = 0.0;
  for (std::size_t i = 4; i < c.eigenvalues.size(); ++i)
  {
    outside += c.eigenvalues[i];
  }
  EXPECT_NEAR(outcome.excess, outside, 1e-12 * c.Trace());
}

TEST(SubspaceCheck, LittleEnergyOutsideTheBlockPassesWhateverTheResiduals)
{
  // The outside-energy bound needs no assumption: with 1e-9 of the trace outside and a budget of 2e-4 of the
  // achieved error, large residuals do not matter.
  std::vector<double> eigenvalues = Decaying(64, 0.8, 0.0);
  for (std::size_t i = 32; i < eigenvalues.size(); ++i)
  {
    eigenvalues[i] = 1e-12;
  }
  CheckCase c = CheckCase::Invariant(eigenvalues, 32, 8);
  std::fill(c.residuals.begin(), c.residuals.end(), 0.5);
  const SubspaceCheckOutcome outcome = c.Check();
  EXPECT_TRUE(outcome.passes);
  EXPECT_LE(outcome.excess, 32 * 1e-12 + 1e-12 * c.Trace());
}

TEST(SubspaceCheck, ErrorsAtRoundingLevelPass)
{
  // A zero matrix and an exactly rank-2 one at k >= 2: nothing to resolve beyond float64 rounding of G.
  const CheckCase zero = CheckCase::Invariant(std::vector<double>(40, 0.0), 20, 4);
  EXPECT_TRUE(zero.Check().passes);
  std::vector<double> rankTwo(40, 0.0);
  rankTwo[0] = 3.0;
  rankTwo[1] = 1.0;
  CheckCase c = CheckCase::Invariant(rankTwo, 20, 4);
  std::fill(c.residuals.begin(), c.residuals.end(), 1e-9); // no gap below theta_4 = 0: the quadratic bound is out
  EXPECT_TRUE(c.Check().passes);
}

TEST(SubspaceCheck, NaNNeverPasses)
{
  CheckCase c = CheckCase::Invariant(Decaying(64, 0.9, 1e-3), 16, 8);
  c.residuals[3] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(c.Check().passes);
  c = CheckCase::Invariant(Decaying(64, 0.9, 1e-3), 16, 8);
  c.ritzAscending[5] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(c.Check().passes);
  c = CheckCase::Invariant(Decaying(64, 0.9, 1e-3), 16, 8);
  EXPECT_FALSE(CheckSubspaceOptimality(std::numeric_limits<double>::quiet_NaN(),
                                       c.ritzAscending.data(),
                                       c.residuals.data(),
                                       64,
                                       16,
                                       8)
                 .passes);
}

// Whenever the check passes, the ratio it certifies, sqrt(E_R / (E_R - excess)), is within the bound: the
// budget is the bound's algebra, not a tuned constant. Random spectra, Ritz values below the eigenvalues
// (interlacing) and random residuals.
TEST(SubspaceCheck, PassingMeansTheCertifiedRatioIsWithinTheBound)
{
  svdlr::test::Random random;
  SCOPED_TRACE(random.SeedTrace());
  int passed = 0, failed = 0;
  for (int trial = 0; trial < 2000; ++trial)
  {
    const int           n = 64, w = 24, k = 1 + static_cast<int>(random.Uniform(0.0, 22.0));
    std::vector<double> eigenvalues(n);
    for (double & e : eigenvalues)
    {
      e = std::pow(10.0, random.Uniform(-6.0, 0.0));
    }
    std::sort(eigenvalues.rbegin(), eigenvalues.rend());
    CheckCase c = CheckCase::Invariant(eigenvalues, w, k);
    for (int i = 0; i < w; ++i)
    {
      c.ritzAscending[static_cast<std::size_t>(i)] *= 1.0 - std::pow(10.0, random.Uniform(-12.0, -2.0));
      c.residuals[static_cast<std::size_t>(i)] = eigenvalues[static_cast<std::size_t>(i)] * std::pow(10.0, random.Uniform(-9.0, -1.0));
    }
    const SubspaceCheckOutcome outcome = c.Check();
    if (outcome.passes)
    {
      ++passed;
      ASSERT_LE(std::sqrt(outcome.achieved / (outcome.achieved - outcome.excess)), 1.0 + 1e-4 + 1e-12)
        << "trial " << trial;
    }
    else
    {
      ++failed;
    }
  }
  EXPECT_GT(passed, 0);
  EXPECT_GT(failed, 0);
}

} // namespace
