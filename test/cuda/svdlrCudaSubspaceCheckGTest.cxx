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
// The subspace solver's a-posteriori check and its exact fallback, on adversarial spectra: every slice must
// meet the optimality bound ||A - R||_F <= (1 + 1e-4) ||A - A_k||_F against the float64 reference, whether
// the check passed it or the exact solver redid it; where the answer is known, the tests also assert whether
// the fallback ran. Each family also checks that the check's estimate of the excess is never below the true
// excess (from the reference), and prints what the check decided. Every test skips without a usable device.
#include "svdlrCudaTestFixture.h"

#include "svdlrCudaTestHooks.h"
#include "slice/svdlrSubspaceCheck.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace
{
using namespace svdlr::test;

constexpr double kBound = 1e-4;
// Below this relative error the float32 output's own rounding and the Gram matrix's float64 rounding decide,
// for every solver alike (the check's floor, svdlrSubspaceCheck.h, is ~6e-7 for these sides).
constexpr double kRoundingFloor = 1e-6;

struct CheckedRun
{
  svdlr::Report                    report;
  std::vector<float>               output;
  svdlr::detail::CudaPipelineTrace trace;
};

/** The subspace solver, forced, through the pipeline's trace (which carries the check's inputs). */
CheckedRun
RunSubspace(const std::vector<Matrix> & matrices, std::size_t k, bool forceRedo = false, std::size_t perBatch = 0)
{
  const std::size_t        count = matrices.size(), rows = matrices[0].rows, cols = matrices[0].cols;
  const std::vector<float> input = Pack<float>(matrices);
  CheckedRun               run;
  run.output.assign(input.size(), std::numeric_limits<float>::quiet_NaN());
  auto options = GpuOptions(svdlr::RankPolicy::Fixed(k));
  options.solver = svdlr::Solver::Subspace;
  options.maxMatricesPerBatch = perBatch;
  run.report.ranks.assign(count, 0);
  run.report.singularValues.assign(count, {});
  run.report.noiseSigmas.assign(count, 0.0);
  svdlr::detail::CudaPipelineTuning tuning;
  tuning.forceRedo = forceRedo;
  run.trace = svdlr::detail::testing::ReconstructWithTrace(
    ConstBatch(input, count, rows, cols), MutableBatch(run.output, count, rows, cols), options, run.report, tuning);
  return run;
}

bool
Redone(const svdlr::Report & report, std::size_t matrix)
{
  return std::find(report.redoneMatrices.begin(), report.redoneMatrices.end(), matrix) != report.redoneMatrices.end();
}

/** Asserts the bound on every slice, the check's estimate against the true excess, and the report's
 * consistency; prints a summary line for the family. Returns how many slices were redone. */
std::size_t
ExpectEverySliceOptimal(const std::string & family, const std::vector<Matrix> & matrices, const CheckedRun & run,
                        std::size_t k)
{
  const std::size_t rows = matrices[0].rows, cols = matrices[0].cols, n = std::min(rows, cols);
  const std::size_t w = run.trace.checkWidth;
  EXPECT_EQ(run.report.solver, svdlr::Solver::Subspace) << family;
  EXPECT_EQ(run.report.slicesRedone, run.report.redoneMatrices.size()) << family;
  EXPECT_TRUE(std::is_sorted(run.report.redoneMatrices.begin(), run.report.redoneMatrices.end())) << family;
  EXPECT_TRUE(AllFinite(run.output)) << family;
  EXPECT_EQ(run.trace.subspaceCheck.size(), matrices.size() * (w + 1)) << family;
  double worstRatio = 0.0, worstTrueShare = 0.0, tightest = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < matrices.size(); ++i)
  {
    const ReferenceSvd reference(matrices[i]);
    const double       error = DifferenceNorm(matrices[i].values, run.output, i * rows * cols);
    const double       optimal = reference.TailNorm(k);
    const double       norm = Norm(matrices[i].values);
    const bool         floored = error <= kRoundingFloor * norm;
    EXPECT_TRUE(floored || error <= (1.0 + kBound) * optimal)
      << family << ", matrix " << i << ": ||A - R|| / ||A - A_k|| - 1 = " << error / optimal - 1.0
      << ", relative error " << error / norm << (Redone(run.report, i) ? " (redone)" : " (checked)");
    if (!floored)
    {
      worstRatio = std::max(worstRatio, error / optimal - 1.0);
    }
    EXPECT_EQ(run.report.ranks[i], std::min(k, n)) << family << ", matrix " << i;
    EXPECT_EQ(run.report.singularValues[i].size(), Redone(run.report, i) ? n : w) << family << ", matrix " << i;

    // The check again on the host, from what the device computed: the same decision, and an estimate of
    // the excess Delta = sum_{i<=k} (lambda_i - theta_i) at least as large as the true one.
    const double *                     data = run.trace.subspaceCheck.data() + i * (w + 1);
    const double *                     ritz = run.trace.ritzValues.data() + i * w;
    const svdlr::detail::SubspaceCheckOutcome outcome = svdlr::detail::CheckSubspaceOptimality(
      data[w], ritz, data, static_cast<int>(n), static_cast<int>(w), static_cast<int>(k));
    EXPECT_EQ(!outcome.passes, Redone(run.report, i)) << family << ", matrix " << i;
    double kept = 0.0, best = 0.0;
    for (std::size_t j = 0; j < k; ++j)
    {
      kept += ritz[w - 1 - j];
      best += reference.SingularValues()[j] * reference.SingularValues()[j];
    }
    const double trueExcess = best - kept;
    const double scale = data[w];
    if (outcome.passes && outcome.excess > 0.0 && trueExcess > 1e-12 * scale)
    {
      EXPECT_GE(outcome.excess * (1.0 + 1e-6) + 1e-12 * scale, trueExcess)
        << family << ", matrix " << i << ": the check's estimate is below the true excess";
      tightest = std::min(tightest, outcome.excess / trueExcess);
    }
    if (outcome.budget > 0.0)
    {
      worstTrueShare = std::max(worstTrueShare, trueExcess / outcome.budget);
    }
  }
  std::printf("[ check    ] %-34s %zu slices, k %zu, w %zu: %zu redone; worst ratio - 1 %.3g; true excess / budget "
              "<= %.3g; estimate / true excess >= %.3g\n",
              family.c_str(),
              matrices.size(),
              k,
              w,
              run.report.slicesRedone,
              worstRatio,
              worstTrueShare,
              tightest);
  return run.report.slicesRedone;
}

std::vector<Matrix>
WithSpectrum(std::size_t count, std::size_t rows, std::size_t cols, const std::vector<double> & spectrum,
             Random & random)
{
  std::vector<Matrix> matrices;
  for (std::size_t i = 0; i < count; ++i)
  {
    matrices.push_back(RoundedTo<float>(MatrixWithSpectrum(rows, cols, spectrum, random)));
  }
  return matrices;
}

// MRI-like slices (the solver's main work): every slice meets the bound and the check lets them through.
TEST_F(SVDLowRankEngineCuda, CheckPassesMriLikeSlicesWithoutRedoingThem)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::size_t   count = 32, rows = 160, cols = 128, k = 16;
  std::vector<Matrix> matrices;
  for (std::size_t i = 0; i < count; ++i)
  {
    matrices.push_back(RoundedTo<float>(MriLikeSlice(rows, cols, static_cast<double>(i) / count, random)));
  }
  const CheckedRun run = RunSubspace(matrices, k);
  const std::size_t redone = ExpectEverySliceOptimal("MRI-like 160 x 128", matrices, run, k);
  EXPECT_LE(redone, count / 8) << "the check trips on MRI-like slices";
}

TEST_F(SVDLowRankEngineCuda, CheckKeepsTheBoundWhereTheSpectrumIsClusteredAtK)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::size_t   rows = 120, cols = 96, k = 12;
  std::vector<double> spectrum(std::min(rows, cols));
  for (std::size_t i = 0; i < spectrum.size(); ++i)
  {
    // Strong leading values, a cluster of 12 values within 1e-6 around index k, then a decaying tail.
    spectrum[i] = i + 6 < k ? 10.0 * std::pow(0.9, static_cast<double>(i))
                            : (i < k + 6 ? 1.0 + 1e-6 * static_cast<double>(i) : 0.05 * std::pow(0.97, static_cast<double>(i)));
  }
  std::sort(spectrum.rbegin(), spectrum.rend());
  const std::vector<Matrix> matrices = WithSpectrum(16, rows, cols, spectrum, random);
  // The block holds the whole cluster (w = 2k): the Ritz values converge, only the vectors inside the
  // cluster are arbitrary, which optimality does not see. No redo.
  EXPECT_EQ(ExpectEverySliceOptimal("clustered at k", matrices, RunSubspace(matrices, k), k), 0u);
}

TEST_F(SVDLowRankEngineCuda, CheckKeepsTheBoundOnSlowlyDecayingSpectra)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::size_t   rows = 128, cols = 128, k = 20;
  std::vector<double> spectrum(rows);
  for (std::size_t i = 0; i < spectrum.size(); ++i)
  {
    spectrum[i] = std::pow(static_cast<double>(i + 1), -0.25); // sigma_{w+1} / sigma_k = 0.84
  }
  const std::vector<Matrix> matrices = WithSpectrum(16, rows, cols, spectrum, random);
  ExpectEverySliceOptimal("slowly decaying (i^-1/4)", matrices, RunSubspace(matrices, k), k);
}

TEST_F(SVDLowRankEngineCuda, CheckKeepsTheBoundOnPureNoise)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::size_t   rows = 96, cols = 80, k = 10;
  std::vector<Matrix> matrices;
  for (std::size_t i = 0; i < 16; ++i)
  {
    matrices.push_back(RoundedTo<float>(RandomMatrix(rows, cols, random)));
  }
  ExpectEverySliceOptimal("pure noise", matrices, RunSubspace(matrices, k), k);
}

TEST_F(SVDLowRankEngineCuda, CheckKeepsTheBoundOnValuesFrom1eMinus6To1e6)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::size_t   rows = 100, cols = 72, k = 10;
  std::vector<double> spectrum(std::min(rows, cols));
  for (std::size_t i = 0; i < spectrum.size(); ++i)
  {
    spectrum[i] = std::pow(10.0, 6.0 - 12.0 * static_cast<double>(i) / static_cast<double>(spectrum.size() - 1));
  }
  std::vector<Matrix> matrices = WithSpectrum(8, rows, cols, spectrum, random);
  // And the same shapes scaled down to 1e-6: the check is scale-free.
  for (std::size_t i = 0; i < 8; ++i)
  {
    Matrix small = MriLikeSlice(rows, cols, 0.1 * static_cast<double>(i), random);
    for (double & v : small.values)
    {
      v *= 1e-6;
    }
    matrices.push_back(RoundedTo<float>(small));
  }
  ExpectEverySliceOptimal("1e-6 .. 1e6", matrices, RunSubspace(matrices, k), k);
}

// Constant, rank-1 and zero slices reach the rounding floor at k >= their rank: the check passes them (no
// redo) and the output is exact to float rounding.
TEST_F(SVDLowRankEngineCuda, CheckPassesConstantRankOneAndZeroSlicesWithoutRedo)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::size_t rows = 96, cols = 72;
  for (const std::size_t k : { 1, 4 })
  {
    std::vector<Matrix> matrices;
    for (std::size_t i = 0; i < 6; ++i)
    {
      Matrix constant(rows, cols);
      std::fill(constant.values.begin(), constant.values.end(), 1.0 + static_cast<double>(i));
      matrices.push_back(constant);
      matrices.push_back(RoundedTo<float>(MatrixWithSpectrum(rows, cols, { 3.0 + static_cast<double>(i) }, random)));
    }
    matrices.emplace_back(rows, cols);
    const CheckedRun run = RunSubspace(matrices, k);
    EXPECT_EQ(ExpectEverySliceOptimal("constant / rank-1 / zero, k " + std::to_string(k), matrices, run, k), 0u);
    for (std::size_t i = 0; i < matrices.size(); ++i)
    {
      EXPECT_LE(DifferenceNorm(matrices[i].values, run.output, i * rows * cols), 1e-6 * Norm(matrices[i].values) + 0.0)
        << "k " << k << ", matrix " << i;
    }
  }
}

/** sigma_1 = 1, then sigma_2..sigma_k at ~1e-4 (below the subspace solver's resolution, ~3e-4 of sigma_1,
 * docs/performance.md), then a plateau at 1e-5: a gap at k that the exact solver resolves (its Gram matrix
 * rounds at ~1e-8 of sigma_1), so that it meets the bound. */
std::vector<double>
SpectrumBelowTheResolution(std::size_t n, std::size_t k)
{
  std::vector<double> spectrum(n, 1e-5);
  spectrum[0] = 1.0;
  for (std::size_t i = 1; i < k; ++i)
  {
    spectrum[i] = 1e-4 * std::pow(0.9, static_cast<double>(i));
  }
  return spectrum;
}

// Directions weaker than the orthonormalisation's resolution: the block loses them, only the exact solver
// meets the bound, and the check must send exactly those slices to it, among MRI-like slices that it must let
// through.
TEST_F(SVDLowRankEngineCuda, CheckSendsSlicesBelowTheResolutionToTheExactSolver)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::size_t         rows = 128, cols = 96, k = 8;
  const std::vector<double> weak = SpectrumBelowTheResolution(std::min(rows, cols), k);
  std::vector<Matrix>       matrices;
  std::vector<std::size_t> adversarial;
  for (std::size_t i = 0; i < 24; ++i)
  {
    if (i % 3 == 1)
    {
      adversarial.push_back(i);
      matrices.push_back(RoundedTo<float>(MatrixWithSpectrum(rows, cols, weak, random)));
    }
    else
    {
      matrices.push_back(RoundedTo<float>(MriLikeSlice(rows, cols, static_cast<double>(i) / 24.0, random)));
    }
  }
  const CheckedRun run = RunSubspace(matrices, k, false, 10); // three batches: indices across batches
  ExpectEverySliceOptimal("below the resolution, mixed", matrices, run, k);
  for (const std::size_t i : adversarial)
  {
    EXPECT_TRUE(Redone(run.report, i)) << "matrix " << i << " has directions below the resolution";
    // The exact solver's values: sigma_2 at ~1e-4 of sigma_1, resolved.
    ASSERT_GE(run.report.singularValues[i].size(), 2u);
    EXPECT_NEAR(run.report.singularValues[i][1], weak[1], 1e-3 * weak[1]) << "matrix " << i;
  }
  EXPECT_EQ(run.report.slicesRedone, adversarial.size()) << "MRI-like slices were redone too";
}

// The fallback itself, forced on every slice through the test hook: the result is the exact solver's, in
// several batches, and the report names every slice.
TEST_F(SVDLowRankEngineCuda, ForcedRedoGivesTheExactSolversResultAndReportsEverySlice)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::size_t   count = 13, rows = 72, cols = 100, k = 6;
  std::vector<Matrix> matrices;
  for (std::size_t i = 0; i < count; ++i)
  {
    matrices.push_back(RoundedTo<float>(MatrixWithSpectrum(rows, cols, SpectrumWithGap(rows, cols, k), random)));
  }
  const CheckedRun run = RunSubspace(matrices, k, true, 5);
  ASSERT_EQ(run.report.slicesRedone, count);
  for (std::size_t i = 0; i < count; ++i)
  {
    EXPECT_EQ(run.report.redoneMatrices[i], i);
    const ReferenceSvd reference(matrices[i]);
    EXPECT_LE(RelativeError(run.output, i * rows * cols, reference.Truncated(k)), 1e-5) << "matrix " << i;
    ASSERT_EQ(run.report.singularValues[i].size(), rows) << "matrix " << i;
    for (std::size_t j = 0; j < rows; ++j)
    {
      EXPECT_NEAR(run.report.singularValues[i][j], reference.SingularValues()[j], 1e-9) << "matrix " << i;
    }
  }
}

// Double input is converted in place, so the redo must solve before the batch's reconstruction overwrites it:
// forced on every slice, the result is the exact solver's at float64 accuracy.
TEST_F(SVDLowRankEngineCuda, ForcedRedoOfDoubleInputUsesTheInputBeforeItIsOverwritten)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::size_t   count = 7, rows = 90, cols = 64, k = 5;
  std::vector<Matrix> matrices;
  for (std::size_t i = 0; i < count; ++i)
  {
    matrices.push_back(MatrixWithSpectrum(rows, cols, SpectrumWithGap(rows, cols, k), random));
  }
  const std::vector<double> input = Pack<double>(matrices);
  std::vector<double>       output(input.size(), std::numeric_limits<double>::quiet_NaN());
  auto                      options = GpuOptions(svdlr::RankPolicy::Fixed(k));
  options.solver = svdlr::Solver::Subspace;
  options.maxMatricesPerBatch = 3;
  svdlr::Report report;
  report.ranks.assign(count, 0);
  report.singularValues.assign(count, {});
  report.noiseSigmas.assign(count, 0.0);
  svdlr::detail::CudaPipelineTuning tuning;
  tuning.forceRedo = true;
  (void)svdlr::detail::testing::ReconstructWithTrace(
    ConstBatch(input, count, rows, cols), MutableBatch(output, count, rows, cols), options, report, tuning);
  ASSERT_EQ(report.slicesRedone, count);
  for (std::size_t i = 0; i < count; ++i)
  {
    const ReferenceSvd reference(matrices[i]);
    EXPECT_LE(RelativeError(output, i * rows * cols, reference.Truncated(k)), 1e-9) << "matrix " << i;
  }
}

// Through the public API: the subspace solver's report names exactly the slices that the exact solver redid, the
// exact solver reports none, and both meet the bound.
//
// Which slices are redone is the check's decision on what the block found, not a property of the input alone.
// These slices' directions 2..8 (sigma 1e-4..5e-5 of sigma_1, so eigenvalues of G at ~1e-8 of its largest) lie
// below what the block's orthonormalisation resolves, so their Ritz residuals are large and the check fails on
// nearly every one; but where a slice's random start block happens to keep them, its residuals are small, the
// check passes it, and it legitimately stays the subspace solver's (the bound below holds for it too). That
// happened to 1 slice of 16 once on an H100 (seed 15185313466945022380), so "all 16 redone" was luck, not the
// mechanism. What the mechanism does fix, per slice: a redone slice carries the exact solver's result, all
// min(rows, cols) singular values, and a slice the check passed carries the block's k + p (Report's contract).
// The report's count and list are checked against that evidence, slice by slice. The count is bounded below by
// half the slices only to show that the inputs do exercise the redo: at a pass rate of 1 in 100 (higher than
// the 1 in ~250 slices seen), 8 or more passes among 16 have a probability of about 1e-12.
TEST_F(SVDLowRankEngineCuda, ReportCountsRedoneSlicesOnlyForTheSubspaceSolver)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::size_t         count = 16, rows = 128, cols = 96, k = 8, n = std::min(rows, cols);
  const std::vector<Matrix> matrices =
    WithSpectrum(count, rows, cols, SpectrumBelowTheResolution(n, k), random);
  const std::vector<float>  input = Pack<float>(matrices);
  std::vector<float>        output(input.size());
  for (const svdlr::Solver solver : { svdlr::Solver::Subspace, svdlr::Solver::Exact })
  {
    auto options = GpuOptions(svdlr::RankPolicy::Fixed(k));
    options.solver = solver;
    const svdlr::Report report =
      svdlr::Reconstruct(ConstBatch(input, count, rows, cols), MutableBatch(output, count, rows, cols), options);
    EXPECT_EQ(report.solver, solver);
    EXPECT_EQ(report.redoneMatrices.size(), report.slicesRedone);
    EXPECT_TRUE(std::is_sorted(report.redoneMatrices.begin(), report.redoneMatrices.end()));
    ASSERT_EQ(report.singularValues.size(), count);
    std::size_t withExactValues = 0;
    for (std::size_t i = 0; i < count; ++i)
    {
      const bool exactValues = report.singularValues[i].size() == n;
      withExactValues += exactValues ? 1 : 0;
      if (solver == svdlr::Solver::Subspace)
      {
        EXPECT_EQ(Redone(report, i), exactValues)
          << "matrix " << i << ": " << report.singularValues[i].size() << " singular values";
      }
      const ReferenceSvd reference(matrices[i]);
      const double       error = DifferenceNorm(matrices[i].values, output, i * rows * cols);
      EXPECT_TRUE(error <= (1.0 + kBound) * reference.TailNorm(k) || error <= kRoundingFloor * Norm(matrices[i].values))
        << ToString(solver) << ", matrix " << i << (Redone(report, i) ? " (redone)" : "");
    }
    if (solver == svdlr::Solver::Subspace)
    {
      EXPECT_EQ(report.slicesRedone, withExactValues);
      EXPECT_GE(report.slicesRedone, count / 2) << "the check passed most slices below the resolution";
      std::printf("[ redone   ] %zu of %zu slices below the resolution\n", report.slicesRedone, count);
    }
    else
    {
      EXPECT_EQ(report.slicesRedone, 0u);
      EXPECT_EQ(withExactValues, count);
    }
  }
}

} // namespace
