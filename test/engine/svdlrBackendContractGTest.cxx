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
// The engine's contract that every backend keeps: accuracy against a float64 truncated SVD, rank policies, exact
// zeros, errors naming the bad matrix, batching, aliasing and the caller's hooks. One TEST_P over the backend:
// svdlrEngineGTest instantiates it for the CPU, svdlrCudaBackendGTest (SVDLR_BACKEND_CONTRACT_CUDA) for CUDA, where
// each test skips, saying why, without a usable device. What one backend alone promises stays in its own suite.
#include "svdlr/Engine.h"
#include "svdlr/Names.h"
#include "svdlrTestBatches.h"
#include "svdlrTestMatrices.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace svdlr
{
// Names the backend in GoogleTest's messages ("GetParam() = cuda"), not as the bytes of the enum.
void
PrintTo(Backend backend, std::ostream * os)
{
  *os << Name(backend);
}
} // namespace svdlr

namespace
{
using namespace svdlr::test;

class SVDLowRankEngine : public ::testing::TestWithParam<svdlr::Backend>
{
protected:
  void
  SetUp() override
  {
    std::string why;
    if (GetParam() == svdlr::Backend::CUDA && !svdlr::CudaDeviceUsable(0, &why))
    {
      GTEST_SKIP() << "no usable CUDA device: " << why;
    }
  }

  svdlr::Options
  Options(svdlr::RankPolicy policy) const
  {
    return OptionsFor(policy, GetParam());
  }

  // The CPU backend's singular values come from LAPACK in the working precision; the CUDA backend's from the
  // float64 Gram matrix, exact to float64 precision for the leading ones.
  template <typename T>
  void
  ExpectMatchesReferenceWithGap(std::size_t count, std::size_t rows, std::size_t cols, std::size_t k, double bound)
  {
    const double valueTolerance = GetParam() == svdlr::Backend::CPU ? 1e-5 : 1e-9;
    svdlr::test::ExpectMatchesReferenceWithGap<T>(GetParam(), count, rows, cols, k, bound, valueTolerance);
  }
};

TEST_P(SVDLowRankEngine, Float32MatchesFloat64ReferenceWithSpectralGap)
{
  ExpectMatchesReferenceWithGap<float>(8, 64, 64, 8, 1e-5);
}

TEST_P(SVDLowRankEngine, Float64MatchesFloat64ReferenceWithSpectralGap)
{
  ExpectMatchesReferenceWithGap<double>(6, 64, 48, 8, 1e-10);
}

TEST_P(SVDLowRankEngine, NonSquareMatricesBothOrientations)
{
  ExpectMatchesReferenceWithGap<float>(3, 181, 217, 20, 1e-5);
  ExpectMatchesReferenceWithGap<float>(3, 217, 181, 20, 1e-5);
  ExpectMatchesReferenceWithGap<double>(2, 37, 90, 5, 1e-10);
}

TEST_P(SVDLowRankEngine, SingleMatrix)
{
  ExpectMatchesReferenceWithGap<float>(1, 100, 70, 10, 1e-5);
}

TEST_P(SVDLowRankEngine, RankOne)
{
  ExpectMatchesReferenceWithGap<float>(4, 50, 60, 1, 1e-5);
}

TEST_P(SVDLowRankEngine, RandomMatricesAreOptimalWithinBound)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::size_t   count = 5, rows = 96, cols = 80, k = 12;
  std::vector<Matrix> matrices;
  for (std::size_t i = 0; i < count; ++i)
  {
    matrices.push_back(RoundedTo<float>(RandomMatrix(rows, cols, random)));
  }
  const std::vector<float> input = Pack<float>(matrices);
  std::vector<float>       output(input.size());
  svdlr::Reconstruct(ConstBatch(input, count, rows, cols),
                     MutableBatch(output, count, rows, cols),
                     Options(svdlr::RankPolicy::Fixed(k)));
  for (std::size_t i = 0; i < count; ++i)
  {
    const ReferenceSvd reference(matrices[i]);
    EXPECT_LE(OptimalityRatio(matrices[i], output, i * rows * cols, reference, k), 1.0 + 1e-4) << "matrix " << i;
  }
}

TEST_P(SVDLowRankEngine, FullRankReproducesTheInput)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  for (const auto & [rows, cols] : { std::pair<std::size_t, std::size_t>{ 40, 25 }, { 25, 40 } })
  {
    const std::vector<float> input =
      Pack<float>({ RandomMatrix(rows, cols, random), RandomMatrix(rows, cols, random) });
    std::vector<float>  output(input.size());
    const svdlr::Report report = svdlr::Reconstruct(ConstBatch(input, 2, rows, cols),
                                                    MutableBatch(output, 2, rows, cols),
                                                    Options(svdlr::RankPolicy::Fixed(std::min(rows, cols))));
    EXPECT_EQ(report.ranks[0], std::min(rows, cols));
    EXPECT_LE(DifferenceNorm(input, output) / Norm(input), 1e-6) << rows << " x " << cols;
  }
}

TEST_P(SVDLowRankEngine, RankAboveMinDimensionIsClampedAndReproducesInput)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::vector<double> input = RandomMatrix(7, 30, random).values;
  std::vector<double>       output(input.size());
  const svdlr::Report       report = svdlr::Reconstruct(
    ConstBatch(input, 1, 7, 30), MutableBatch(output, 1, 7, 30), Options(svdlr::RankPolicy::Fixed(50)));
  EXPECT_EQ(report.ranks[0], 7u);
  EXPECT_LE(DifferenceNorm(input, output) / Norm(input), 1e-12);
}

TEST_P(SVDLowRankEngine, ZeroAndConstantMatricesComeOutExactWithoutNaN)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::size_t rows = 40, cols = 30, size = rows * cols;
  const float       constant = 3.75f;
  Matrix            flat(rows, cols);
  std::fill(flat.values.begin(), flat.values.end(), constant);
  const std::vector<float> input = Pack<float>({ RandomMatrix(rows, cols, random), Matrix(rows, cols), flat });
  for (const auto policy : { svdlr::RankPolicy::Fixed(4), svdlr::RankPolicy::Energy(0.9) })
  {
    std::vector<float>  output(input.size(), std::numeric_limits<float>::quiet_NaN());
    const svdlr::Report report =
      svdlr::Reconstruct(ConstBatch(input, 3, rows, cols), MutableBatch(output, 3, rows, cols), Options(policy));
    ASSERT_TRUE(AllFinite(output));
    EXPECT_GT(Norm(output), 0.0);
    for (std::size_t p = 0; p < size; ++p)
    {
      ASSERT_EQ(output[size + p], 0.0f) << "pixel " << p << " of the zero matrix";
      ASSERT_EQ(output[2 * size + p], constant) << "pixel " << p << " of the constant matrix";
    }
    ExpectSingularValueCount(report, 1, report.ranks[1], cols);
    EXPECT_EQ(report.singularValues[1], std::vector<double>(report.singularValues[1].size(), 0.0));
    if (policy.kind == svdlr::RankPolicy::Kind::EnergyFraction)
    {
      EXPECT_EQ(report.ranks[1], 0u);
      EXPECT_EQ(report.ranks[2], 1u);
    }
  }
}

TEST_P(SVDLowRankEngine, ConstantMatrixInFloat64IsReproduced)
{
  const std::size_t         rows = 17, cols = 33;
  const std::vector<double> input(rows * cols, -2.5);
  std::vector<double>       output(input.size());
  svdlr::Reconstruct(
    ConstBatch(input, 1, rows, cols), MutableBatch(output, 1, rows, cols), Options(svdlr::RankPolicy::Fixed(3)));
  for (const double v : output)
  {
    ASSERT_NEAR(v, -2.5, 1e-12);
  }
}

TEST_P(SVDLowRankEngine, EnergyFractionPicksARankPerMatrix)
{
  // Spectra (4, 3, 2, 1) and (3, 2, 0.5, 0.2): at f = 0.9 they need 3 and 2 values (cumulative fractions
  // .533/.833/.967 and .677/.978), so one batch carries two ranks. Distinct values keep A_k well defined.
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::size_t         rows = 12, cols = 9;
  const std::vector<Matrix> matrices = { MatrixWithSpectrum(rows, cols, { 4.0, 3.0, 2.0, 1.0 }, random),
                                         MatrixWithSpectrum(rows, cols, { 3.0, 2.0, 0.5, 0.2 }, random) };
  const std::vector<double> input = Pack<double>(matrices);
  std::vector<double>       output(input.size());
  const svdlr::Report       report = svdlr::Reconstruct(
    ConstBatch(input, 2, rows, cols), MutableBatch(output, 2, rows, cols), Options(svdlr::RankPolicy::Energy(0.9)));
  EXPECT_EQ(report.ranks, (std::vector<std::size_t>{ 3, 2 }));
  for (std::size_t i = 0; i < 2; ++i)
  {
    const ReferenceSvd reference(matrices[i]);
    EXPECT_LE(RelativeError(output, i * rows * cols, reference.Truncated(report.ranks[i])), 1e-10) << "matrix " << i;
  }
}

TEST_P(SVDLowRankEngine, NonFiniteInputNamesTheMatrix)
{
  Random                   random;
  const std::size_t        rows = 8, cols = 6;
  const std::vector<float> input = NormalValues<float>(6 * rows * cols, random);
  std::vector<float>       output(input.size());
  for (const float bad : { std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity() })
  {
    std::vector<float> poisoned = input;
    poisoned[3 * rows * cols + 17] = bad;
    poisoned[5 * rows * cols + 2] = bad; // the first bad matrix is the one named
    const auto error = FailureOf(
      ConstBatch(poisoned, 6, rows, cols), MutableBatch(output, 6, rows, cols), Options(svdlr::RankPolicy::Fixed(2)));
    EXPECT_EQ(error.Code(), svdlr::ErrorCode::NonFiniteInput);
    EXPECT_EQ(error.Matrix(), 3);
    EXPECT_NE(std::string(error.what()).find("matrix 3"), std::string::npos) << error.what();
  }
}

TEST_P(SVDLowRankEngine, NonFiniteInputInALaterBatchNamesTheMatrix)
{
  Random             random;
  const std::size_t  count = 10, rows = 16, cols = 12;
  std::vector<float> input = NormalValues<float>(count * rows * cols, random);
  input[7 * rows * cols + rows * cols - 1] = -std::numeric_limits<float>::infinity();
  std::vector<float> output(input.size());
  auto               options = Options(svdlr::RankPolicy::Fixed(3));
  options.maxMatricesPerBatch = 3;
  const auto error = FailureOf(ConstBatch(input, count, rows, cols), MutableBatch(output, count, rows, cols), options);
  EXPECT_EQ(error.Code(), svdlr::ErrorCode::NonFiniteInput);
  EXPECT_EQ(error.Matrix(), 7);
}

TEST_P(SVDLowRankEngine, ManySmallBatchesEqualOneBatch)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::size_t        count = 257, rows = 32, cols = 24;
  const std::vector<float> input = NormalValues<float>(count * rows * cols, random);
  std::vector<float>       whole(input.size()), pieces(input.size(), std::numeric_limits<float>::quiet_NaN());
  auto                     options = Options(svdlr::RankPolicy::Fixed(5));
  const svdlr::Report      wholeReport =
    svdlr::Reconstruct(ConstBatch(input, count, rows, cols), MutableBatch(whole, count, rows, cols), options);

  std::vector<std::size_t> progress;
  options.maxMatricesPerBatch = 64;
  options.progress = [&](std::size_t done, std::size_t total) {
    EXPECT_EQ(total, count);
    progress.push_back(done);
    return true;
  };
  const svdlr::Report piecesReport =
    svdlr::Reconstruct(ConstBatch(input, count, rows, cols), MutableBatch(pieces, count, rows, cols), options);
  ASSERT_TRUE(AllFinite(pieces));
  EXPECT_LE(DifferenceNorm(whole, pieces) / Norm(whole), 1e-6);
  EXPECT_EQ(wholeReport.ranks, piecesReport.ranks);
  ASSERT_GE(progress.size(), 5u); // at most 64 per batch
  EXPECT_TRUE(std::is_sorted(progress.begin(), progress.end()));
  EXPECT_EQ(progress.back(), count);
  if (GetParam() == svdlr::Backend::CPU)
  {
    // The CPU computes each matrix alone, whatever the batch: the same bits, and progress after every batch.
    EXPECT_EQ(whole, pieces);
    EXPECT_EQ(progress, (std::vector<std::size_t>{ 64, 128, 192, 256, 257 }));
  }
}

TEST_P(SVDLowRankEngine, InPlaceEqualsOutOfPlace)
{
  Random             random;
  const std::size_t  count = 5, rows = 33, cols = 47;
  std::vector<float> input = NormalValues<float>(count * rows * cols, random);
  std::vector<float> outOfPlace(input.size());
  auto               options = Options(svdlr::RankPolicy::Fixed(5));
  options.maxMatricesPerBatch = 2; // several batches: in place must not read what a later batch wrote
  svdlr::Reconstruct(ConstBatch(input, count, rows, cols), MutableBatch(outOfPlace, count, rows, cols), options);
  svdlr::Reconstruct(ConstBatch(input, count, rows, cols), MutableBatch(input, count, rows, cols), options);
  EXPECT_EQ(input, outOfPlace);
}

TEST_P(SVDLowRankEngine, StridedBatchLeavesTheGapsAlone)
{
  Random                   random;
  const std::size_t        count = 4, rows = 20, cols = 30, stride = rows * cols + 13;
  const std::vector<float> input = NormalValues<float>(count * stride, random);
  std::vector<float>       output(input.size(), -7.0f);
  std::vector<float>       packedInput, packedOutput(count * rows * cols);
  for (std::size_t i = 0; i < count; ++i)
  {
    packedInput.insert(packedInput.end(), input.begin() + i * stride, input.begin() + i * stride + rows * cols);
  }
  const auto options = Options(svdlr::RankPolicy::Fixed(4));
  svdlr::Reconstruct(svdlr::MatrixBatch<const float>{ input.data(), count, rows, cols, stride },
                     svdlr::MatrixBatch<float>{ output.data(), count, rows, cols, stride },
                     options);
  svdlr::Reconstruct(
    ConstBatch(packedInput, count, rows, cols), MutableBatch(packedOutput, count, rows, cols), options);
  for (std::size_t i = 0; i < count; ++i)
  {
    for (std::size_t p = 0; p < stride; ++p)
    {
      const float value = output[i * stride + p];
      if (p < rows * cols)
      {
        ASSERT_EQ(value, packedOutput[i * rows * cols + p]) << "matrix " << i << " pixel " << p;
      }
      else if (i * stride + p < output.size())
      {
        ASSERT_EQ(value, -7.0f) << "gap after matrix " << i << " was written";
      }
    }
  }
}

TEST_P(SVDLowRankEngine, CallerParallelForRunsTheWork)
{
  Random                   random;
  const std::size_t        count = 6, rows = 600, cols = 400; // on CUDA 5.5 MiB: several staging pieces and lanes
  const std::vector<float> input = NormalValues<float>(count * rows * cols, random);
  std::vector<float>       expected(input.size()), output(input.size());
  auto                     options = Options(svdlr::RankPolicy::Fixed(3));
  svdlr::Reconstruct(ConstBatch(input, count, rows, cols), MutableBatch(expected, count, rows, cols), options);
  int calls = 0;
  options.parallelFor = [&](std::size_t n, const std::function<void(std::size_t)> & body) {
    ++calls;
    for (std::size_t i = n; i-- > 0;) // reverse order: nothing may depend on it
    {
      body(i);
    }
  };
  svdlr::Reconstruct(ConstBatch(input, count, rows, cols), MutableBatch(output, count, rows, cols), options);
  EXPECT_EQ(output, expected);
  EXPECT_GE(calls, 1);
}

TEST_P(SVDLowRankEngine, ProgressCallbackCanAbortAndTheNextRunWorks)
{
  Random                   random;
  const std::size_t        count = 6, rows = 10, cols = 12;
  const std::vector<float> input = NormalValues<float>(count * rows * cols, random);
  std::vector<float>       output(input.size());
  auto                     options = Options(svdlr::RankPolicy::Fixed(2));
  options.maxMatricesPerBatch = 2;
  options.progress = [](std::size_t, std::size_t) { return false; };
  EXPECT_EQ(FailureOf(ConstBatch(input, count, rows, cols), MutableBatch(output, count, rows, cols), options).Code(),
            svdlr::ErrorCode::Aborted);
  options.progress = {};
  svdlr::Reconstruct(ConstBatch(input, count, rows, cols), MutableBatch(output, count, rows, cols), options);
  EXPECT_TRUE(AllFinite(output));
}

std::string
BackendName(const ::testing::TestParamInfo<svdlr::Backend> & info)
{
  return info.param == svdlr::Backend::CUDA ? "CUDA" : "CPU";
}

#ifdef SVDLR_BACKEND_CONTRACT_CUDA
INSTANTIATE_TEST_SUITE_P(Cuda, SVDLowRankEngine, ::testing::Values(svdlr::Backend::CUDA), BackendName);
#else
INSTANTIATE_TEST_SUITE_P(Cpu, SVDLowRankEngine, ::testing::Values(svdlr::Backend::CPU), BackendName);
#endif

} // namespace
