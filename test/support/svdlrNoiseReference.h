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
#ifndef svdlrNoiseReference_h
#define svdlrNoiseReference_h

// Test matrices for the noise rank policies (low rank plus Gaussian noise of known σ) and a float64 reference of
// those policies written independently of src/noise/svdlrNoiseThreshold.h: it works on singular values in descending
// order, counts signal components instead of noise ones, and finds the Marchenko-Pastur median by bisection on the
// distribution's closed-form CDF instead of a quadrature. Slow and plain on purpose.

#include "svdlr/Engine.h"
#include "svdlrTestMatrices.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace svdlr
{
namespace test
{

/** Every rank policy that models noise: Gavish-Donoho with σ estimated and with `knownSigma` given, and
 * Marchenko-Pastur with each estimator. */
inline std::vector<RankPolicy>
NoisePolicies(double knownSigma)
{
  return { RankPolicy::GavishDonoho(),
           RankPolicy::GavishDonoho(knownSigma),
           RankPolicy::MarchenkoPastur(MarchenkoPasturEstimator::Veraart2016),
           RankPolicy::MarchenkoPastur(MarchenkoPasturEstimator::CorderoGrande2019) };
}

/** X + σZ: X = U diag(s) Vᵀ of rank `signal.size()` with random singular vectors, Z standard Gaussian. */
inline Matrix
LowRankPlusNoise(std::size_t rows, std::size_t cols, const std::vector<double> & signal, double sigma, Random & random)
{
  Matrix a = MatrixWithSpectrum(rows, cols, signal, random);
  for (double & v : a.values)
  {
    v += sigma * random.Normal();
  }
  return a;
}

/** k signal singular values spread evenly over [low, high] times the noise edge σ(√rows + √cols). */
inline std::vector<double>
SignalAboveEdge(std::size_t rows, std::size_t cols, std::size_t k, double sigma, double low, double high)
{
  const double        edge = sigma * (std::sqrt(double(rows)) + std::sqrt(double(cols)));
  std::vector<double> s(k);
  for (std::size_t i = 0; i < k; ++i)
  {
    s[i] = edge * (high - (high - low) * double(i) / double(k > 1 ? k - 1 : 1));
  }
  return s;
}

struct ReferenceNoiseChoice
{
  std::size_t rank{ 0 };
  double      sigma{ 0.0 };
};

/** Distribution function of the Marchenko-Pastur law of ratio β <= 1 (support [a, b], a = (1-√β)², b = (1+√β)²,
 * density sqrt((b - t)(t - a)) / (2πβt)), from the closed-form antiderivative of sqrt((b - t)(t - a)) / t:
 *   sqrt((b - t)(t - a)) + (a + b)/2 asin((2t - a - b)/(b - a)) - sqrt(ab) asin(((a + b)t - 2ab)/(t(b - a))). */
inline double
ReferenceMarchenkoPasturCdf(double t, double beta)
{
  const double pi = std::acos(-1.0);
  const double a = (1.0 - std::sqrt(beta)) * (1.0 - std::sqrt(beta));
  const double b = (1.0 + std::sqrt(beta)) * (1.0 + std::sqrt(beta));
  const auto   clamp = [](double x) { return std::max(-1.0, std::min(1.0, x)); };
  const auto   antiderivative = [&](double x) {
    return std::sqrt(std::max((b - x) * (x - a), 0.0)) + 0.5 * (a + b) * std::asin(clamp((2.0 * x - a - b) / (b - a))) -
           std::sqrt(a * b) * std::asin(clamp(((a + b) * x - 2.0 * a * b) / (x * (b - a))));
  };
  // At t = a both arcsines are -π/2, so the antiderivative there is -π(a + b)/4 + π sqrt(ab)/2.
  const double atLowerEdge = -0.25 * pi * (a + b) + 0.5 * pi * std::sqrt(a * b);
  return (antiderivative(t) - atLowerEdge) / (2.0 * pi * beta);
}

inline double
ReferenceMarchenkoPasturMedian(double beta)
{
  double low = (1.0 - std::sqrt(beta)) * (1.0 - std::sqrt(beta));
  double high = (1.0 + std::sqrt(beta)) * (1.0 + std::sqrt(beta));
  for (int i = 0; i < 200; ++i)
  {
    const double middle = 0.5 * (low + high);
    (ReferenceMarchenkoPasturCdf(middle, beta) < 0.5 ? low : high) = middle;
  }
  return 0.5 * (low + high);
}

/** Gavish & Donoho (2014): threshold λ*(β)·√n·σ, σ given or y_med / sqrt(n·μ_β). */
inline ReferenceNoiseChoice
ReferenceGavishDonoho(const std::vector<double> & singularDescending, std::size_t rows, std::size_t cols,
                      double knownSigma)
{
  const double n = double(std::max(rows, cols));
  const double beta = double(std::min(rows, cols)) / n;
  double       sigma = knownSigma;
  if (knownSigma <= 0.0)
  {
    std::vector<double> sorted(singularDescending);
    std::sort(sorted.begin(), sorted.end());
    const std::size_t count = sorted.size();
    const double      median =
      count % 2 == 1 ? sorted[count / 2] : 0.5 * (sorted[count / 2 - 1] + sorted[count / 2]);
    sigma = median / std::sqrt(n * ReferenceMarchenkoPasturMedian(beta));
  }
  const double lambda =
    std::sqrt(2.0 * (beta + 1.0) + 8.0 * beta / (beta + 1.0 + std::sqrt(beta * beta + 14.0 * beta + 1.0)));
  const double threshold = lambda * std::sqrt(n) * sigma;
  ReferenceNoiseChoice choice;
  choice.sigma = sigma;
  choice.rank = static_cast<std::size_t>(
    std::count_if(singularDescending.begin(), singularDescending.end(), [&](double y) { return y > threshold; }));
  return choice;
}

/** MP-PCA as dwidenoise defines it, read as: the fewest signal components p such that the remaining r - p
 * eigenvalues (of the Gram matrix divided by n = max(rows, cols)) have a mean above the Marchenko-Pastur width
 * (largest - smallest) / (4 sqrt(γ)), γ = (r - p) / n (Veraart2016) or (r - p) / (n - p) (CorderoGrande2019);
 * σ = sqrt(that mean). A zero matrix gets rank 0 and σ 0. */
inline ReferenceNoiseChoice
ReferenceMarchenkoPastur(const std::vector<double> & singularDescending, std::size_t rows, std::size_t cols,
                         MarchenkoPasturEstimator estimator)
{
  const std::size_t r = singularDescending.size();
  const double      n = double(std::max(rows, cols));
  if (r == 0 || singularDescending.front() <= 0.0)
  {
    return {};
  }
  for (std::size_t p = 0; p < r; ++p)
  {
    double sum = 0.0;
    for (std::size_t i = p; i < r; ++i)
    {
      sum += singularDescending[i] * singularDescending[i] / n;
    }
    const double noise = double(r - p);
    const double mean = sum / noise;
    const double gamma = noise / (estimator == MarchenkoPasturEstimator::Veraart2016 ? n : n - double(p));
    const double largest = singularDescending[p] * singularDescending[p] / n;
    const double smallest = singularDescending[r - 1] * singularDescending[r - 1] / n;
    if ((largest - smallest) / (4.0 * std::sqrt(gamma)) < mean)
    {
      return { p, std::sqrt(mean) };
    }
  }
  return { r, 0.0 };
}

inline ReferenceNoiseChoice
ReferenceNoiseRank(const RankPolicy & policy, const std::vector<double> & singularDescending, std::size_t rows,
                   std::size_t cols)
{
  return policy.kind == RankPolicy::Kind::GavishDonoho
           ? ReferenceGavishDonoho(singularDescending, rows, cols, policy.noiseSigma)
           : ReferenceMarchenkoPastur(singularDescending, rows, cols, policy.estimator);
}

} // namespace test
} // namespace svdlr

#endif
