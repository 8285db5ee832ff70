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
// The interleaved QL eigenvalue solver of the local denoiser against LAPACK's dsterf, on tridiagonal matrices
// that stress it: random, graded like a patch's Gram matrix, split by zero off-diagonals, and with repeated
// eigenvalues; several matrices of different kinds in one call.
#include "shared/svdlrLapack.h"
#include "svdlrTestMatrices.h"
#include "denoise/svdlrPatchKernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace
{
using svdlr::test::Random;

struct Tridiagonal
{
  std::vector<double> d, e;
};

Tridiagonal
RandomTridiagonal(int n, Random & random)
{
  Tridiagonal t{ std::vector<double>(n), std::vector<double>(n, 0.0) };
  for (int i = 0; i < n; ++i)
  {
    t.d[i] = random.Normal();
    t.e[i] = i + 1 < n ? random.Normal() : 0.0;
  }
  return t;
}

/** The tridiagonal form of XᵀX for X = a few strong components plus noise: eigenvalues over 6 decades. */
Tridiagonal
GramTridiagonal(int n, Random & random)
{
  const int           m = 2 * n;
  std::vector<double> x(static_cast<std::size_t>(m) * n), gram(static_cast<std::size_t>(n) * n), tau(n),
    work(64 * static_cast<std::size_t>(n));
  for (int t = 0; t < n; ++t)
  {
    for (int i = 0; i < m; ++i)
    {
      x[i + static_cast<std::size_t>(t) * m] = random.Normal() + (t < 4 ? 300.0 * std::sin(0.3 * (i + 1) * (t + 1)) : 0.0);
    }
  }
  svdlr::detail::lapack::syrkLower('T', n, m, x.data(), m, gram.data());
  Tridiagonal result{ std::vector<double>(n), std::vector<double>(n, 0.0) };
  svdlr::detail::lapack::sytrdLower(n, gram.data(), result.d.data(), result.e.data(), tau.data(), work.data(),
                                    static_cast<int>(work.size()));
  return result;
}

std::vector<double>
SterfEigenvalues(Tridiagonal t)
{
  EXPECT_EQ(svdlr::detail::lapack::sterf(static_cast<int>(t.d.size()), t.d.data(), t.e.data()), 0);
  return t.d;
}

void
ExpectMatchesSterf(std::vector<Tridiagonal> matrices)
{
  const int                 n = static_cast<int>(matrices[0].d.size());
  std::vector<Tridiagonal>  work = matrices;
  std::vector<double *>     d, e;
  for (auto & t : work)
  {
    d.push_back(t.d.data());
    e.push_back(t.e.data());
  }
  ASSERT_TRUE(svdlr::detail::TridiagonalEigenvalues(n, d.data(), e.data(), static_cast<int>(work.size())));
  for (std::size_t k = 0; k < matrices.size(); ++k)
  {
    const std::vector<double> expected = SterfEigenvalues(matrices[k]);
    const double              scale = std::max(std::fabs(expected.front()), std::fabs(expected.back()));
    for (int i = 0; i < n; ++i)
    {
      EXPECT_NEAR(work[k].d[i], expected[i], 64 * std::numeric_limits<double>::epsilon() * scale)
        << "matrix " << k << " eigenvalue " << i;
    }
  }
}

TEST(SVDLowRankTridiagonalEigenvalues, FourRandomMatricesMatchSterf)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  ExpectMatchesSterf({ RandomTridiagonal(65, random), RandomTridiagonal(65, random), RandomTridiagonal(65, random),
                       RandomTridiagonal(65, random) });
}

TEST(SVDLowRankTridiagonalEigenvalues, GramMatricesOfPatchesMatchSterf)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  for (const int n : { 2, 3, 27, 30, 65, 96 })
  {
    SCOPED_TRACE("order " + std::to_string(n));
    ExpectMatchesSterf({ GramTridiagonal(n, random), GramTridiagonal(n, random), GramTridiagonal(n, random) });
  }
}

TEST(SVDLowRankTridiagonalEigenvalues, SplitAndRepeatedEigenvaluesMatchSterf)
{
  Random      random;
  SCOPED_TRACE(random.SeedTrace());
  Tridiagonal split = RandomTridiagonal(40, random);
  split.e[7] = split.e[20] = split.e[21] = 0.0; // blocks of one voxel and more
  Tridiagonal repeated{ std::vector<double>(40, 2.5), std::vector<double>(40, 0.0) };
  for (int i = 0; i < 39; i += 2)
  {
    repeated.e[i] = 1e-3 * random.Normal(); // pairs around 2.5
  }
  Tridiagonal diagonal{ std::vector<double>(40), std::vector<double>(40, 0.0) };
  for (double & value : diagonal.d)
  {
    value = random.Uniform(-1.0, 1.0);
  }
  ExpectMatchesSterf({ split, repeated, diagonal });
}

TEST(SVDLowRankTridiagonalEigenvalues, EveryCountUpToABatchMatchesSterf)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  std::vector<Tridiagonal> matrices;
  for (int count = 1; count <= svdlr::detail::kTridiagonalBatch; ++count)
  {
    SCOPED_TRACE("count " + std::to_string(count));
    matrices.push_back(count % 2 ? GramTridiagonal(65, random) : RandomTridiagonal(65, random));
    ExpectMatchesSterf(matrices);
  }
}

TEST(SVDLowRankTridiagonalEigenvalues, EachMatrixGetsTheSameEigenvaluesAloneAsInAFullBatch)
{
  // Each matrix's sweeps run in a lane of their own (in vector lanes where the CPU has AVX): its neighbours, and
  // how many there are, must not change a bit of its result.
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  std::vector<Tridiagonal> batch;
  for (int k = 0; k < svdlr::detail::kTridiagonalBatch; ++k)
  {
    batch.push_back(k % 3 ? GramTridiagonal(65, random) : RandomTridiagonal(65, random));
  }
  const std::vector<Tridiagonal> original = batch;
  std::vector<double *>          d, e;
  for (auto & t : batch)
  {
    d.push_back(t.d.data());
    e.push_back(t.e.data());
  }
  ASSERT_TRUE(svdlr::detail::TridiagonalEigenvalues(65, d.data(), e.data(), static_cast<int>(batch.size())));
  for (std::size_t k = 0; k < batch.size(); ++k)
  {
    Tridiagonal alone = original[k];
    double *    da = alone.d.data();
    double *    ea = alone.e.data();
    ASSERT_TRUE(svdlr::detail::TridiagonalEigenvalues(65, &da, &ea, 1));
    EXPECT_EQ(alone.d, batch[k].d) << "matrix " << k;
  }
}

TEST(SVDLowRankTridiagonalEigenvalues, OneMatrixAloneMatchesSterf)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  ExpectMatchesSterf({ GramTridiagonal(65, random) });
}

} // namespace
