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
#ifndef svdlrTestMatrices_h
#define svdlrTestMatrices_h

// Test matrices with known answers and a float64 reference truncated SVD (LAPACK dgesdd).
// Every generator draws fresh random numbers; the seed is printed so a failure can be replayed
// (set SVDLR_TEST_SEED to replay it; svdlrTestSeed.h).

#include "shared/svdlrLapack.h"
#include "svdlrTestSeed.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace svdlr
{
namespace test
{

/** A random generator whose seed is part of every failure message (through SeedTrace()). */
class Random
{
public:
  Random()
    : Random(FreshSeed())
  {}
  /** The generator of a fixture that draws its seed itself (one seed, one printed replay). */
  explicit Random(std::uint64_t seed)
    : m_Seed(seed)
    , m_Engine(seed)
  {}
  std::uint64_t
  Seed() const
  {
    return m_Seed;
  }
  std::string
  SeedTrace() const
  {
    return svdlr::test::SeedTrace(m_Seed);
  }
  double
  Normal()
  {
    return m_Normal(m_Engine);
  }
  double
  Uniform(double low, double high)
  {
    return std::uniform_real_distribution<double>(low, high)(m_Engine);
  }

private:
  std::uint64_t                    m_Seed;
  std::mt19937_64                  m_Engine;
  std::normal_distribution<double> m_Normal{ 0.0, 1.0 };
};

/** Row-major dense matrix in float64. */
struct Matrix
{
  std::size_t         rows{ 0 };
  std::size_t         cols{ 0 };
  std::vector<double> values;

  Matrix() = default;
  Matrix(std::size_t r, std::size_t c)
    : rows(r)
    , cols(c)
    , values(r * c, 0.0)
  {}
  double &
  operator()(std::size_t r, std::size_t c)
  {
    return values[r * cols + c];
  }
  double
  operator()(std::size_t r, std::size_t c) const
  {
    return values[r * cols + c];
  }
};

/** `size` standard Gaussian values in precision T. */
template <typename T>
std::vector<T>
NormalValues(std::size_t size, Random & random)
{
  std::vector<T> values(size);
  for (T & v : values)
  {
    v = static_cast<T>(random.Normal());
  }
  return values;
}

/** n x k matrix with orthonormal columns: Gaussian columns, Gram-Schmidt applied twice. */
inline Matrix
RandomOrthonormalColumns(std::size_t n, std::size_t k, Random & random)
{
  Matrix q(n, k);
  q.values = NormalValues<double>(n * k, random);
  for (std::size_t j = 0; j < k; ++j)
  {
    for (int pass = 0; pass < 2; ++pass)
    {
      for (std::size_t i = 0; i < j; ++i)
      {
        double dot = 0.0;
        for (std::size_t r = 0; r < n; ++r)
        {
          dot += q(r, i) * q(r, j);
        }
        for (std::size_t r = 0; r < n; ++r)
        {
          q(r, j) -= dot * q(r, i);
        }
      }
    }
    double norm = 0.0;
    for (std::size_t r = 0; r < n; ++r)
    {
      norm += q(r, j) * q(r, j);
    }
    norm = std::sqrt(norm);
    for (std::size_t r = 0; r < n; ++r)
    {
      q(r, j) /= norm;
    }
  }
  return q;
}

/** A = U diag(spectrum) Vᵀ with random orthonormal U (rows x p) and V (cols x p), p = spectrum.size(). */
/** A smooth body with a texture that changes with `phase` (0..1, one value per slice), plus 2% Gaussian noise: the
 * model benchmarks/run_benchmarks.py uses for W1-W4, MRI-like slices whose spectrum has no gap at small k. */
inline Matrix
MriLikeSlice(std::size_t rows, std::size_t cols, double phase, Random & random)
{
  Matrix a(rows, cols);
  for (std::size_t r = 0; r < rows; ++r)
  {
    for (std::size_t c = 0; c < cols; ++c)
    {
      const double y = static_cast<double>(r) / rows;
      const double x = static_cast<double>(c) / cols;
      const double body = std::exp(-((x - 0.5) * (x - 0.5) + (y - 0.5) * (y - 0.5)) / (0.05 + 0.1 * phase));
      const double texture = 1.0 + 0.3 * std::sin(12.0 * x * (1.0 + phase)) * std::cos(9.0 * y);
      a(r, c) = body * texture + 0.02 * random.Normal();
    }
  }
  return a;
}

inline Matrix
MatrixWithSpectrum(std::size_t rows, std::size_t cols, const std::vector<double> & spectrum, Random & random)
{
  const std::size_t p = spectrum.size();
  const Matrix      u = RandomOrthonormalColumns(rows, p, random);
  const Matrix      v = RandomOrthonormalColumns(cols, p, random);
  Matrix            a(rows, cols);
  for (std::size_t l = 0; l < p; ++l)
  {
    for (std::size_t r = 0; r < rows; ++r)
    {
      const double us = u(r, l) * spectrum[l];
      for (std::size_t c = 0; c < cols; ++c)
      {
        a(r, c) += us * v(c, l);
      }
    }
  }
  return a;
}

/** min(rows, cols) singular values decaying from 1, with a drop by `gap` after the first k. */
inline std::vector<double>
SpectrumWithGap(std::size_t rows, std::size_t cols, std::size_t k, double gap = 10.0)
{
  const std::size_t   p = std::min(rows, cols);
  std::vector<double> s(p);
  for (std::size_t i = 0; i < p; ++i)
  {
    s[i] = std::pow(0.97, static_cast<double>(i)) / (i < k ? 1.0 : gap);
  }
  return s;
}

/** Gaussian white noise. */
inline Matrix
RandomMatrix(std::size_t rows, std::size_t cols, Random & random)
{
  Matrix a(rows, cols);
  a.values = NormalValues<double>(rows * cols, random);
  return a;
}

/** The float64 SVD of a row-major matrix: singular values (descending) and the truncated reconstructions. */
class ReferenceSvd
{
public:
  explicit ReferenceSvd(const Matrix & a)
    : m_Rows(a.rows)
    , m_Cols(a.cols)
  {
    // Row-major A read column-major is Aᵀ (cols x rows); its SVD gives the same singular values.
    const int           m = static_cast<int>(a.cols), n = static_cast<int>(a.rows), p = std::min(m, n);
    std::vector<double> work(a.values);
    m_S.resize(p);
    m_U.resize(static_cast<std::size_t>(m) * p);
    m_VT.resize(static_cast<std::size_t>(p) * n);
    std::vector<int> iwork(8 * static_cast<std::size_t>(p));
    double           query = 0.0;
    detail::lapack::gesdd(m, n, work.data(), m_S.data(), m_U.data(), m_VT.data(), &query, -1, iwork.data());
    std::vector<double> lapackWork(static_cast<std::size_t>(query) + 1);
    if (detail::lapack::gesdd(m, n, work.data(), m_S.data(), m_U.data(), m_VT.data(), lapackWork.data(),
                              static_cast<int>(lapackWork.size()), iwork.data()) != 0)
    {
      throw std::runtime_error("reference dgesdd failed");
    }
  }

  const std::vector<double> &
  SingularValues() const
  {
    return m_S;
  }

  /** The best rank-k approximation A_k, row-major. */
  Matrix
  Truncated(std::size_t k) const
  {
    const std::size_t m = m_Cols, p = m_S.size();
    Matrix            ak(m_Rows, m_Cols);
    k = std::min(k, p);
    for (std::size_t l = 0; l < k; ++l)
    {
      for (std::size_t r = 0; r < m_Rows; ++r)
      {
        const double vs = m_VT[r * p + l] * m_S[l];
        for (std::size_t c = 0; c < m_Cols; ++c)
        {
          ak(r, c) += m_U[l * m + c] * vs;
        }
      }
    }
    return ak;
  }

  /** ||A - A_k||_F from the spectrum's tail. */
  double
  TailNorm(std::size_t k) const
  {
    double tail = 0.0;
    for (std::size_t i = k; i < m_S.size(); ++i)
    {
      tail += m_S[i] * m_S[i];
    }
    return std::sqrt(tail);
  }

private:
  std::size_t         m_Rows;
  std::size_t         m_Cols;
  std::vector<double> m_S;
  std::vector<double> m_U;
  std::vector<double> m_VT;
};

template <typename TA, typename TB>
double
DifferenceNorm(const std::vector<TA> & a, const std::vector<TB> & b, std::size_t offset = 0)
{
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i)
  {
    const double d = static_cast<double>(a[i]) - static_cast<double>(b[offset + i]);
    sum += d * d;
  }
  return std::sqrt(sum);
}

template <typename T>
double
Norm(const std::vector<T> & a)
{
  double sum = 0.0;
  for (const T v : a)
  {
    sum += static_cast<double>(v) * static_cast<double>(v);
  }
  return std::sqrt(sum);
}

/** ||R - A_k||_F / ||A_k||_F for one matrix whose reconstruction starts at result[offset]. */
template <typename T>
double
RelativeError(const std::vector<T> & result, std::size_t offset, const Matrix & ak)
{
  return DifferenceNorm(ak.values, result, offset) / Norm(ak.values);
}

/** ||A - R||_F / ||A - A_k||_F: 1 for the exact truncated SVD, larger for anything worse. */
template <typename T>
double
OptimalityRatio(const Matrix & a, const std::vector<T> & result, std::size_t offset, const ReferenceSvd & svd,
                std::size_t k)
{
  return DifferenceNorm(a.values, result, offset) / svd.TailNorm(k);
}

/** Copies matrices into one contiguous batch of T. */
template <typename T>
std::vector<T>
Pack(const std::vector<Matrix> & matrices)
{
  std::vector<T> packed;
  for (const Matrix & m : matrices)
  {
    packed.insert(packed.end(), m.values.begin(), m.values.end());
  }
  return packed;
}

/** Rounds a matrix to T and back, so the float64 reference sees exactly what a float32 engine sees. */
template <typename T>
Matrix
RoundedTo(const Matrix & a)
{
  Matrix rounded = a;
  for (double & v : rounded.values)
  {
    v = static_cast<double>(static_cast<T>(v));
  }
  return rounded;
}

} // namespace test
} // namespace svdlr

#endif
