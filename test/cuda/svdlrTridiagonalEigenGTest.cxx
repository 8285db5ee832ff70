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
// The scalar heart of the small-matrix eigen-solver (src/cuda/svdlrTridiagonalEigen.cuh: bisection for the
// eigenvalues of a tridiagonal matrix, inverse iteration for its eigenvectors), run on the CPU: the same code the
// GPU runs one thread per eigenvalue or matrix. These tests need no GPU and run everywhere. Reference: LAPACK's dsyevd on the
// dense tridiagonal matrix.
#include "cuda/svdlrTridiagonalEigen.cuh"
#include "shared/svdlrLapack.h"
#include "svdlrTestMatrices.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace
{
using svdlr::detail::Interleaved;
using svdlr::detail::TridiagonalLU;
using svdlr::test::Random;

struct Tridiagonal
{
  std::vector<double> d;
  std::vector<double> e; // e[i] couples i and i + 1; size n (the last one unused)
};

std::vector<double>
ReferenceEigenvalues(const Tridiagonal & t)
{
  const int           n = static_cast<int>(t.d.size());
  std::vector<double> dense(static_cast<std::size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i)
  {
    dense[i + n * i] = t.d[i];
    if (i + 1 < n)
    {
      dense[i + 1 + n * i] = t.e[i];
      dense[i + n * (i + 1)] = t.e[i];
    }
  }
  std::vector<double> w(n);
  int                 lwork = -1, liwork = -1, info = 0;
  double              workSize = 0;
  int                 iworkSize = 0;
  dsyevd_("N", "L", &n, dense.data(), &n, w.data(), &workSize, &lwork, &iworkSize, &liwork, &info, 1, 1);
  lwork = static_cast<int>(workSize);
  liwork = std::max(iworkSize, 1);
  std::vector<double> work(lwork);
  std::vector<int>    iwork(liwork);
  dsyevd_("N", "L", &n, dense.data(), &n, w.data(), work.data(), &lwork, iwork.data(), &liwork, &info, 1, 1);
  EXPECT_EQ(info, 0);
  return w;
}

double
OneNorm(const Tridiagonal & t)
{
  const std::size_t n = t.d.size();
  double            norm = 0.0;
  for (std::size_t i = 0; i < n; ++i)
  {
    norm = std::max(norm, std::abs(t.d[i]) + (i > 0 ? std::abs(t.e[i - 1]) : 0.0) + (i + 1 < n ? std::abs(t.e[i]) : 0.0));
  }
  return norm;
}

/** Bisection eigenvalues against LAPACK, then inverse iteration for the k largest: residual and orthogonality. */
void
ExpectSolved(const Tridiagonal & t, int k, double bound)
{
  const int                 n = static_cast<int>(t.d.size());
  const double              norm = std::max(OneNorm(t), 1e-300);
  const std::vector<double> reference = ReferenceEigenvalues(t);
  std::vector<double>       values(n);
  // Bisection, one eigenvalue at a time (the GPU's thread per eigenvalue).
  {
    std::vector<double> magnitude(n), squared(n);
    for (int i = 0; i < n; ++i)
    {
      magnitude[i] = std::abs(t.e[i]);
      squared[i] = t.e[i] * t.e[i];
    }
    const Interleaved<double> d{ const_cast<double *>(t.d.data()), 1 }, absE{ magnitude.data(), 1 },
      e2{ squared.data(), 1 };
    const svdlr::detail::SturmBounds bounds = svdlr::detail::GershgorinBounds(d, absE, e2, n);
    for (int i = 0; i < n; ++i)
    {
      values[i] = svdlr::detail::BisectEigenvalue(d, e2, n, i, bounds);
      EXPECT_NEAR(values[i], reference[i], bound * norm) << "eigenvalue " << i << " of " << n;
    }
  }

  std::vector<double> a(n), u(n), u2(n), m(n), z(static_cast<std::size_t>(n) * k), work(n);
  std::vector<int>    swapped(n);
  std::vector<double> d = t.d, e = t.e;
  const TridiagonalLU lu{ { a.data(), 1 }, { u.data(), 1 }, { u2.data(), 1 }, { m.data(), 1 }, { swapped.data(), 1 } };
  svdlr::detail::TridiagonalEigenvectors(
    { d.data(), 1 }, { e.data(), 1 }, { values.data(), 1 }, n, k, lu, { z.data(), 1 }, { work.data(), 1 });
  double worstResidual = 0.0, worstOrthogonality = 0.0;
  for (int c = 0; c < k; ++c)
  {
    const double * x = z.data() + static_cast<std::size_t>(c) * n;
    const double   lambda = values[n - 1 - c];
    double         residual = 0.0;
    for (int i = 0; i < n; ++i)
    {
      const double tx = t.d[i] * x[i] + (i > 0 ? t.e[i - 1] * x[i - 1] : 0.0) + (i + 1 < n ? t.e[i] * x[i + 1] : 0.0);
      residual += (tx - lambda * x[i]) * (tx - lambda * x[i]);
    }
    worstResidual = std::max(worstResidual, std::sqrt(residual) / norm);
    for (int o = 0; o <= c; ++o)
    {
      double dot = 0.0;
      for (int i = 0; i < n; ++i)
      {
        dot += x[i] * z[static_cast<std::size_t>(o) * n + i];
      }
      worstOrthogonality = std::max(worstOrthogonality, std::abs(dot - (o == c ? 1.0 : 0.0)));
    }
  }
  EXPECT_LE(worstResidual, bound) << "n = " << n;
  EXPECT_LE(worstOrthogonality, 1000 * bound) << "n = " << n;
}

TEST(TridiagonalEigen, RandomMatricesOfEverySize)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  for (const int n : { 1, 2, 3, 5, 8, 32, 65, 128, 256 })
  {
    Tridiagonal t{ std::vector<double>(n), std::vector<double>(n, 0.0) };
    for (int i = 0; i < n; ++i)
    {
      t.d[i] = random.Normal();
      t.e[i] = i + 1 < n ? random.Normal() : 0.0;
    }
    ExpectSolved(t, n, 1e-12);
  }
}

TEST(TridiagonalEigen, WilkinsonMatrixWithItsNearlyEqualPairs)
{
  // W21+: diagonal |10 - i|, off-diagonal 1; its largest eigenvalues come in pairs equal to ~1e-14.
  const int   n = 21;
  Tridiagonal t{ std::vector<double>(n), std::vector<double>(n, 1.0) };
  for (int i = 0; i < n; ++i)
  {
    t.d[i] = std::abs(10.0 - i);
  }
  t.e[n - 1] = 0.0;
  ExpectSolved(t, n, 1e-12);
}

TEST(TridiagonalEigen, SplitMatricesAndRepeatedEigenvalues)
{
  // Zero off-diagonals split T into blocks with the same eigenvalues; the identity repeats one eigenvalue n times.
  const int   n = 30;
  Tridiagonal split{ std::vector<double>(n), std::vector<double>(n) };
  for (int i = 0; i < n; ++i)
  {
    split.d[i] = 2.0 + (i % 3);
    split.e[i] = (i % 3 == 2 || i + 1 == n) ? 0.0 : 0.5;
  }
  ExpectSolved(split, n, 1e-12);
  Tridiagonal identity{ std::vector<double>(n, 1.0), std::vector<double>(n, 0.0) };
  ExpectSolved(identity, 10, 1e-12);
}

TEST(TridiagonalEigen, ZeroMatrixGivesZerosAndUnitVectors)
{
  const int   n = 12;
  Tridiagonal zero{ std::vector<double>(n, 0.0), std::vector<double>(n, 0.0) };
  ExpectSolved(zero, 4, 1e-12);
}

TEST(TridiagonalEigen, GradedEntriesOverManyOrdersOfMagnitude)
{
  // As from the Gram matrix of a patch with a strong signal over weak noise.
  Random      random;
  const int   n = 65;
  Tridiagonal t{ std::vector<double>(n), std::vector<double>(n, 0.0) };
  for (int i = 0; i < n; ++i)
  {
    t.d[i] = std::pow(10.0, -8.0 * i / (n - 1)) * (1.0 + 0.1 * random.Normal());
    t.e[i] = i + 1 < n ? 0.3 * std::pow(10.0, -8.0 * (i + 0.5) / (n - 1)) * random.Normal() : 0.0;
  }
  ExpectSolved(t, 10, 1e-12);
}

} // namespace
