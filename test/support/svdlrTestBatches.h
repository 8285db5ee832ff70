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
#ifndef svdlrTestBatches_h
#define svdlrTestBatches_h

// Small helpers shared by the engine's GoogleTest suites: batch views over vectors, options for one
// backend, and the error a request must fail with.

#include "svdlr/Engine.h"
#include "svdlrTestMatrices.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace svdlr
{
namespace test
{

template <typename T>
MatrixBatch<const T>
ConstBatch(const std::vector<T> & data, std::size_t count, std::size_t rows, std::size_t cols)
{
  return { data.data(), count, rows, cols, rows * cols };
}

template <typename T>
MatrixBatch<T>
MutableBatch(std::vector<T> & data, std::size_t count, std::size_t rows, std::size_t cols)
{
  return { data.data(), count, rows, cols, rows * cols };
}

inline Options
OptionsFor(RankPolicy policy, Backend backend)
{
  Options options;
  options.policy = policy;
  options.backend = backend;
  return options;
}

inline bool
AllFinite(const std::vector<float> & values)
{
  return std::all_of(values.begin(), values.end(), [](float v) { return std::isfinite(v); });
}

/** Runs a request that must fail and returns its error (a test failure if it does not fail). */
template <typename T>
Error
FailureOf(const MatrixBatch<const T> & input, const MatrixBatch<T> & output, const Options & options)
{
  try
  {
    Reconstruct(input, output, options);
  }
  catch (const Error & error)
  {
    return error;
  }
  ADD_FAILURE() << "expected svdlr::Error";
  return Error(ErrorCode::InvalidArgument, "none");
}

/** The exact solver reports all min(rows, cols) singular values; the subspace solver the leading w of its
 * block, more than the kept rank unless the block is the whole space. */
inline void
ExpectSingularValueCount(const Report & report, std::size_t matrix, std::size_t kept, std::size_t all)
{
  const std::size_t reported = report.singularValues[matrix].size();
  if (report.solver == Solver::Exact)
  {
    EXPECT_EQ(reported, all) << "matrix " << matrix;
  }
  else
  {
    EXPECT_GE(reported, kept) << "matrix " << matrix;
    EXPECT_LE(reported, all) << "matrix " << matrix;
  }
}

/** Reconstructs `count` fresh matrices with a spectral gap after k on `backend` and checks each against the
 * float64 truncated SVD (relative error <= bound), and the singular values the report gives: as many as
 * the solver computes, descending, the first and the k-th within `valueTolerance` of the reference. */
template <typename T>
void
ExpectMatchesReferenceWithGap(Backend     backend,
                              std::size_t count,
                              std::size_t rows,
                              std::size_t cols,
                              std::size_t k,
                              double      bound,
                              double      valueTolerance)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  std::vector<Matrix> matrices;
  for (std::size_t i = 0; i < count; ++i)
  {
    matrices.push_back(RoundedTo<T>(MatrixWithSpectrum(rows, cols, SpectrumWithGap(rows, cols, k), random)));
  }
  const std::vector<T> input = Pack<T>(matrices);
  std::vector<T>       output(input.size(), std::numeric_limits<T>::quiet_NaN());

  const Report report = Reconstruct(ConstBatch(input, count, rows, cols), MutableBatch(output, count, rows, cols),
                                    OptionsFor(RankPolicy::Fixed(k), backend));
  ASSERT_EQ(report.backend, backend);
  for (std::size_t i = 0; i < count; ++i)
  {
    const ReferenceSvd reference(matrices[i]);
    const std::size_t  kept = std::min({ k, rows, cols });
    EXPECT_EQ(report.ranks[i], kept);
    EXPECT_LE(RelativeError(output, i * rows * cols, reference.Truncated(k)), bound) << "matrix " << i;
    ExpectSingularValueCount(report, i, kept, std::min(rows, cols));
    EXPECT_TRUE(std::is_sorted(report.singularValues[i].rbegin(), report.singularValues[i].rend()));
    EXPECT_NEAR(report.singularValues[i][0], reference.SingularValues()[0], valueTolerance);
    EXPECT_NEAR(report.singularValues[i][kept - 1], reference.SingularValues()[kept - 1], valueTolerance);
  }
}

} // namespace test
} // namespace svdlr

#endif
