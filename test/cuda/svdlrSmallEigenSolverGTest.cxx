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
// Our batched small-matrix eigen-solver (src/cuda/svdlrSmallEigenSolver.h) against cuSOLVER's XsyevBatched and
// against the spectrum each matrix was built with: random symmetric matrices Q diag(λ) Qᵀ with widely spread,
// clustered and repeated eigenvalues, sizes 8 to 256 (both the shared-memory and the global-memory path of the
// tridiagonalisation). Every test skips, saying why, on a machine without a usable CUDA device.
#include "svdlrCudaTestFixture.h"

#include "svdlrSmallEigenTestHooks.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace
{
using namespace svdlr::test;
using svdlr::detail::testing::EigenResult;

/** `count` column-major symmetric n x n matrices Q diag(spectrum(b)) Qᵀ, Q random orthogonal per matrix. */
std::vector<double>
SymmetricMatrices(std::size_t n, std::size_t count, const std::function<std::vector<double>(std::size_t)> & spectrum,
                  Random & random)
{
  std::vector<double> matrices(count * n * n, 0.0);
  for (std::size_t b = 0; b < count; ++b)
  {
    const Matrix              q = RandomOrthonormalColumns(n, n, random);
    const std::vector<double> lambda = spectrum(b);
    double *                  a = matrices.data() + b * n * n;
    for (std::size_t l = 0; l < n; ++l)
    {
      for (std::size_t c = 0; c < n; ++c)
      {
        const double qc = q(c, l) * lambda[l];
        for (std::size_t r = 0; r < n; ++r)
        {
          a[r + n * c] += q(r, l) * qc;
        }
      }
    }
    // Exactly symmetric, as a Gram matrix is.
    for (std::size_t c = 0; c < n; ++c)
    {
      for (std::size_t r = c + 1; r < n; ++r)
      {
        a[c + n * r] = a[r + n * c];
      }
    }
  }
  return matrices;
}

double
FrobeniusNorm(const double * a, std::size_t n)
{
  double sum = 0.0;
  for (std::size_t i = 0; i < n * n; ++i)
  {
    sum += a[i] * a[i];
  }
  return std::sqrt(sum);
}

/** Checks our result on every matrix: eigenvalues against cuSOLVER's and the built spectrum, and each computed
 * vector's residual ||A v - λ v|| and orthogonality to the other computed vectors, all relative to ||A||_F. */
void
ExpectAccurate(const std::vector<double> & matrices, std::size_t n, std::size_t count, std::size_t maxVectors,
               const std::vector<int> & vectorCounts, const EigenResult & ours, const EigenResult & reference,
               const std::function<std::vector<double>(std::size_t)> & spectrum, double bound)
{
  double worstValue = 0.0, worstResidual = 0.0, worstOrthogonality = 0.0, worstSpectrum = 0.0;
  for (std::size_t b = 0; b < count; ++b)
  {
    ASSERT_EQ(ours.info[b], 0) << "matrix " << b;
    ASSERT_EQ(reference.info[b], 0) << "matrix " << b;
    const double * a = matrices.data() + b * n * n;
    const double   norm = FrobeniusNorm(a, n);
    std::vector<double> built = spectrum(b);
    std::sort(built.begin(), built.end());
    for (std::size_t i = 0; i < n; ++i)
    {
      const double value = ours.eigenvalues[b * n + i];
      ASSERT_TRUE(std::isfinite(value)) << "matrix " << b << " eigenvalue " << i;
      worstValue = std::max(worstValue, std::abs(value - reference.eigenvalues[b * n + i]) / norm);
      worstSpectrum = std::max(worstSpectrum, std::abs(value - built[i]) / norm);
    }
    const std::size_t k = vectorCounts.empty() ? maxVectors : static_cast<std::size_t>(vectorCounts[b]);
    const double *    v = ours.vectors.data() + b * n * maxVectors;
    for (std::size_t c = 0; c < k; ++c)
    {
      const double * x = v + c * n;
      const double   lambda = ours.eigenvalues[b * n + (n - 1 - c)];
      double         residual = 0.0;
      for (std::size_t r = 0; r < n; ++r)
      {
        double ax = 0.0;
        for (std::size_t l = 0; l < n; ++l)
        {
          ax += a[r + n * l] * x[l];
        }
        residual += (ax - lambda * x[r]) * (ax - lambda * x[r]);
      }
      worstResidual = std::max(worstResidual, std::sqrt(residual) / norm);
      for (std::size_t o = 0; o <= c; ++o)
      {
        double dot = 0.0;
        for (std::size_t r = 0; r < n; ++r)
        {
          dot += x[r] * v[o * n + r];
        }
        worstOrthogonality = std::max(worstOrthogonality, std::abs(dot - (o == c ? 1.0 : 0.0)));
      }
    }
  }
  EXPECT_LE(worstValue, bound) << "eigenvalues against cuSOLVER, relative to ||A||_F";
  EXPECT_LE(worstSpectrum, bound) << "eigenvalues against the spectrum the matrices were built with";
  EXPECT_LE(worstResidual, bound) << "||A v - λ v|| / ||A||_F";
  // Vectors of different clusters are orthogonal to eps ||A|| / gap, with gaps down to 1e-3 ||A|| (dstein's
  // scheme); those of one cluster are orthogonalised explicitly.
  EXPECT_LE(worstOrthogonality, 1000 * bound) << "|vᵢ·vⱼ - δᵢⱼ|";
  std::cout << "  n = " << n << ": eigenvalues " << worstValue << ", residual " << worstResidual
            << ", orthogonality " << worstOrthogonality << " (ours " << ours.milliseconds << " ms, cuSOLVER "
            << reference.milliseconds << " ms for " << count << " matrices)\n";
}

/** Where an eigenvalue is separated from the others by at least `gap` (relative to the largest), our vector and
 * cuSOLVER's span the same line: |vᵀ v_ref| = 1 to within bound. */
void
ExpectSameIsolatedVectors(std::size_t n, std::size_t count, std::size_t maxVectors, const EigenResult & ours,
                          const EigenResult & reference, double gap, double bound)
{
  double worst = 0.0;
  for (std::size_t b = 0; b < count; ++b)
  {
    const double * values = reference.eigenvalues.data() + b * n;
    const double   scale = std::max(std::abs(values[0]), std::abs(values[n - 1]));
    for (std::size_t c = 0; c < maxVectors; ++c)
    {
      const std::size_t i = n - 1 - c;
      const double      below = i > 0 ? values[i] - values[i - 1] : INFINITY;
      const double      above = i + 1 < n ? values[i + 1] - values[i] : INFINITY;
      if (std::min(below, above) < gap * scale)
      {
        continue;
      }
      double dot = 0.0;
      for (std::size_t r = 0; r < n; ++r)
      {
        dot += ours.vectors[(b * n + c) * n + r] * reference.vectors[(b * n + c) * n + r];
      }
      worst = std::max(worst, 1.0 - std::abs(dot));
    }
  }
  EXPECT_LE(worst, bound) << "1 - |vᵀ v_cuSOLVER| on isolated eigenvalues";
}

class SmallEigenSolverCuda : public SVDLowRankEngineCuda
{
protected:
  void
  RunAndCompare(std::size_t n, std::size_t count, const std::function<std::vector<double>(std::size_t)> & spectrum,
                double bound = 1e-11)
  {
    Random random;
    SCOPED_TRACE(random.SeedTrace() + ", n = " + std::to_string(n));
    const std::vector<double> matrices = SymmetricMatrices(n, count, spectrum, random);
    const EigenResult         reference = svdlr::detail::testing::RunCusolverEigenSolver(
      matrices, static_cast<std::int64_t>(n), static_cast<std::int64_t>(count), 0);
    const EigenResult ours = svdlr::detail::testing::RunSmallEigenSolver(
      matrices, static_cast<std::int64_t>(n), static_cast<std::int64_t>(count), static_cast<std::int64_t>(n), {}, 0);
    ExpectAccurate(matrices, n, count, n, {}, ours, reference, spectrum, bound);
    ExpectSameIsolatedVectors(n, count, n, ours, reference, 1e-3, 1e-10);
  }
};

// Every stage-1 kernel's shapes on the H100: the fused kernel's lanes hold 1 (8, 31), 2 (33), 3 (65), 4 (100), 5
// (150) and 6 (165) rows of the whole matrix, then 6 rows of the packed lower triangle (170; 7 at n = 200 below);
// past n = 223 the packed three-barrier kernel (230), and past n = 237 the global kernel (256).
const std::vector<std::size_t> kSides{ 8, 31, 33, 65, 100, 150, 165, 170, 230, 256 };

std::size_t
CountFor(std::size_t n)
{
  return n <= 65 ? 96 : (n <= 170 ? 24 : 6);
}

TEST_F(SmallEigenSolverCuda, MatchesCusolverOnWidelySpreadEigenvalues)
{
  for (const std::size_t n : kSides)
  {
    // Magnitudes from 1e-9 to 1, both signs, so that the solver is not only tried on Gram matrices.
    const auto spectrum = [n](std::size_t b) {
      std::vector<double> lambda(n);
      for (std::size_t i = 0; i < n; ++i)
      {
        const double exponent = -9.0 * static_cast<double>(i) / static_cast<double>(n - 1);
        lambda[i] = std::pow(10.0, exponent) * ((i + b) % 3 == 0 ? -1.0 : 1.0);
      }
      return lambda;
    };
    RunAndCompare(n, CountFor(n), spectrum);
  }
}

TEST_F(SmallEigenSolverCuda, MatchesCusolverOnClusteredAndRepeatedEigenvalues)
{
  for (const std::size_t n : kSides)
  {
    // Clusters of 4 eigenvalues 1e-11 apart around 1, 0.5, 0.25, ...; every third cluster exactly repeated.
    const auto spectrum = [n](std::size_t) {
      std::vector<double> lambda(n);
      for (std::size_t i = 0; i < n; ++i)
      {
        const std::size_t cluster = i / 4;
        const double      centre = std::pow(0.5, static_cast<double>(cluster % 20));
        lambda[i] = centre + (cluster % 3 == 0 ? 0.0 : 1e-11 * static_cast<double>(i % 4));
      }
      return lambda;
    };
    RunAndCompare(n, CountFor(n), spectrum);
  }
}

TEST_F(SmallEigenSolverCuda, MarchenkoPasturLikeGramSpectraGiveTheLeadingVectors)
{
  // The denoiser's case: a few signal eigenvalues above a bulk of noise eigenvalues, and only the leading vectors
  // asked for, a different number per matrix (0 included).
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::size_t n = 65, count = 300, maxVectors = 12;
  const auto        spectrum = [n](std::size_t b) {
    std::vector<double> lambda(n);
    for (std::size_t i = 0; i < n; ++i)
    {
      lambda[i] = i < b % 9 ? 1000.0 / static_cast<double>(i + 1) : 1.0 + 3.0 * static_cast<double>(i) / n;
    }
    return lambda;
  };
  const std::vector<double> matrices = SymmetricMatrices(n, count, spectrum, random);
  std::vector<int>          counts(count);
  for (std::size_t b = 0; b < count; ++b)
  {
    counts[b] = static_cast<int>(b % (maxVectors + 1));
  }
  const EigenResult reference = svdlr::detail::testing::RunCusolverEigenSolver(matrices, n, count, 0);
  const EigenResult ours = svdlr::detail::testing::RunSmallEigenSolver(matrices, n, count, maxVectors, counts, 0);
  ExpectAccurate(matrices, n, count, maxVectors, counts, ours, reference, spectrum, 1e-11);
  // The columns not asked for keep their poison.
  for (std::size_t b = 0; b < count; ++b)
  {
    for (std::size_t c = static_cast<std::size_t>(counts[b]); c < maxVectors; ++c)
    {
      ASSERT_TRUE(std::isnan(ours.vectors[(b * maxVectors + c) * n])) << "matrix " << b << " column " << c;
    }
  }
}

TEST_F(SmallEigenSolverCuda, MatricesTooLargeForSharedMemoryAreReducedInGlobalMemory)
{
  // n = 200: the tridiagonalisation works on the packed lower triangle in shared memory, or, on a GPU with less
  // shared memory, on the matrix in place in global memory (a few matrices, a few vectors: small enough for
  // compute-sanitizer).
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::size_t n = 200, count = 3, maxVectors = 4;
  const auto        spectrum = [n](std::size_t b) {
    std::vector<double> lambda(n);
    for (std::size_t i = 0; i < n; ++i)
    {
      lambda[i] = std::pow(0.9, static_cast<double>(i)) + 0.01 * static_cast<double>(b);
    }
    return lambda;
  };
  const std::vector<double> matrices = SymmetricMatrices(n, count, spectrum, random);
  const EigenResult         reference = svdlr::detail::testing::RunCusolverEigenSolver(matrices, n, count, 0);
  const EigenResult         ours = svdlr::detail::testing::RunSmallEigenSolver(matrices, n, count, maxVectors, {}, 0);
  ExpectAccurate(matrices, n, count, maxVectors, {}, ours, reference, spectrum, 1e-11);
}

TEST_F(SmallEigenSolverCuda, ZeroAndRankOneMatricesGiveExactEigenvaluesAndUnitVectors)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::size_t n = 40, count = 4;
  std::vector<double> matrices(count * n * n, 0.0);
  // Matrices 1 and 3: u uᵀ with a random u; 0 and 2: zero (an all-zero patch outside the head).
  std::vector<double> squaredNorms(count, 0.0);
  for (std::size_t b = 1; b < count; b += 2)
  {
    std::vector<double> u(n);
    for (double & x : u)
    {
      x = random.Normal();
      squaredNorms[b] += x * x;
    }
    for (std::size_t c = 0; c < n; ++c)
    {
      for (std::size_t r = 0; r < n; ++r)
      {
        matrices[b * n * n + r + n * c] = u[r] * u[c];
      }
    }
  }
  const EigenResult ours = svdlr::detail::testing::RunSmallEigenSolver(matrices, n, count, 3, {}, 0);
  for (std::size_t b = 0; b < count; ++b)
  {
    ASSERT_EQ(ours.info[b], 0);
    EXPECT_NEAR(ours.eigenvalues[b * n + n - 1], squaredNorms[b], 1e-12 * (1.0 + squaredNorms[b]));
    for (std::size_t i = 0; i + 1 < n; ++i)
    {
      EXPECT_LE(std::abs(ours.eigenvalues[b * n + i]), 1e-12 * (1.0 + squaredNorms[b]));
    }
    for (std::size_t c = 0; c < 3; ++c)
    {
      double length = 0.0;
      for (std::size_t r = 0; r < n; ++r)
      {
        const double x = ours.vectors[(b * 3 + c) * n + r];
        ASSERT_TRUE(std::isfinite(x));
        length += x * x;
      }
      EXPECT_NEAR(length, 1.0, 1e-12);
    }
  }
}

} // namespace
