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
#ifndef svdlr_NoiseThreshold_h
#define svdlr_NoiseThreshold_h

// Ranks and thresholds chosen from the noise, for one rows x cols matrix Y = X + E whose noise E has i.i.d.
// entries of standard deviation σ. Shared by the slice engine (both backends) and the local denoiser (host and
// device code): no exceptions, no std:: containers, only <cmath> functions that nvcc also offers on the device.
// Every function takes the eigenvalues of the smaller Gram matrix (YᵀY or YYᵀ), ascending, count = min(rows, cols):
// the squared singular values, as both backends' eigen-solvers produce them: a pointer to float or double, or any
// view with operator[](int) (svdlrChooseRank.h's spectra). Arithmetic is in double whatever the element type.
//
// Notation: n = max(rows, cols), β = min(rows, cols) / n. For pure noise the singular values fill the
// Marchenko-Pastur bulk, whose upper edge is σ(√rows + √cols) = σ√n(1 + √β).

#include "shared/svdlrHostDevice.h"

#include "svdlr/Engine.h"

#include <cmath>

namespace svdlr
{
namespace detail
{

/** What a noise policy decided for one matrix: the number of signal components kept, and σ per entry. */
struct NoiseRank
{
  int    rank;
  double sigma;
};

/** β = min(rows, cols) / max(rows, cols), in (0, 1]. */
SVDLR_HOST_DEVICE inline double
NoiseAspectRatio(int rows, int cols)
{
  return rows < cols ? double(rows) / double(cols) : double(cols) / double(rows);
}

/** The largest singular value of a pure-noise matrix (asymptotically): σ(√rows + √cols). */
SVDLR_HOST_DEVICE inline double
MarchenkoPasturUpperEdge(double sigma, int rows, int cols)
{
  return sigma * (sqrt(double(rows)) + sqrt(double(cols)));
}

/** NORDIC's threshold (Moeller et al. 2021): the expected largest singular value of a rows x cols matrix of noise
 * σ, which NORDIC estimates by drawing random matrices and which is here its analytic value, the same edge
 * σ(√rows + √cols): Gordon's bound on that expectation (Davidson & Szarek 2001, Thm II.13). The finite-size mean
 * lies a little below it (Johnstone 2001 centres the largest eigenvalue at (√(n-1) + √p)² with Tracy-Widom
 * spread (√(n-1) + √p)(1/√(n-1) + 1/√p)^(1/3), mean -1.21 of it: about 2.4 % less for a 125 x 40 patch); at that
 * mean half of the pure-noise patches would keep a component, at the edge about one in seven does. */
SVDLR_HOST_DEVICE inline double
NordicThreshold(double sigma, int rows, int cols)
{
  return MarchenkoPasturUpperEdge(sigma, rows, cols);
}

/** Gavish & Donoho (2014), eq. (11): the optimal hard threshold for known σ is λ*(β)·√n·σ with
 *   λ*(β) = sqrt(2(β + 1) + 8β / ((β + 1) + sqrt(β² + 14β + 1))). */
SVDLR_HOST_DEVICE inline double
GavishDonohoLambda(double beta)
{
  return sqrt(2.0 * (beta + 1.0) + 8.0 * beta / ((beta + 1.0) + sqrt(beta * beta + 14.0 * beta + 1.0)));
}

SVDLR_HOST_DEVICE inline double
GavishDonohoThreshold(double sigma, int rows, int cols)
{
  const int larger = rows > cols ? rows : cols;
  return GavishDonohoLambda(NoiseAspectRatio(rows, cols)) * sqrt(double(larger)) * sigma;
}

/** The Marchenko-Pastur density of ratio β (that of the eigenvalues t of YYᵀ / n for unit σ) written in the angle φ
 * of u = √t = 1 - √β cos φ: sin²φ · sqrt((u + 1 + √β)(u + 1 - √β)) / (π u), on [0, π]. This change of variable
 * removes both square-root end points of the density; the 1/t pole near t = 0 when β -> 1 becomes a peak of
 * width about √(2(1 - √β)) at φ = 0. */
SVDLR_HOST_DEVICE inline double
MarchenkoPasturAngleDensity(double phi, double rootBeta)
{
  constexpr double pi = 3.14159265358979323846;
  const double     u = 1.0 - rootBeta * cos(phi);
  const double     s = sin(phi);
  // At φ = 0 with β = 1, u = 0 and so is sin²φ: the density's limit there is 0.
  return u > 0.0 ? s * s * sqrt((u + 1.0 + rootBeta) * (u + 1.0 - rootBeta)) / (pi * u) : 0.0;
}

/** Mass of the Marchenko-Pastur distribution of ratio β below (1 - √β cos θ)²: the integral of
 * MarchenkoPasturAngleDensity over [0, θ], by composite Simpson's rule in s where φ = θ s², which puts the nodes
 * densely where the peak of β near 1 lies. */
SVDLR_HOST_DEVICE inline double
MarchenkoPasturMassBelowAngle(double theta, double beta)
{
  constexpr int intervals = 512; // even
  const double  rootBeta = sqrt(beta);
  const double  step = 1.0 / intervals;
  double        sum = 0.0;
  for (int i = 1; i <= intervals; ++i) // the term at s = 0 is 0
  {
    const double s = i * step;
    const double value = MarchenkoPasturAngleDensity(theta * s * s, rootBeta) * 2.0 * theta * s;
    sum += (i == intervals ? 1.0 : ((i % 2) ? 4.0 : 2.0)) * value;
  }
  return sum * step / 3.0;
}

/** Median μ_β of the Marchenko-Pastur distribution of ratio β in (0, 1] (Gavish & Donoho 2014, section III.D),
 * by a Newton iteration on the angle θ of MarchenkoPasturMassBelowAngle, kept inside a shrinking bracket. */
SVDLR_HOST_DEVICE inline double
MarchenkoPasturMedian(double beta)
{
  constexpr double pi = 3.14159265358979323846;
  const double     rootBeta = sqrt(beta);
  double           low = 0.0;
  double           high = pi;
  double           theta = 0.5 * pi;
  for (int iteration = 0; iteration < 60; ++iteration)
  {
    const double excess = MarchenkoPasturMassBelowAngle(theta, beta) - 0.5;
    if (excess > 0.0)
    {
      high = theta;
    }
    else
    {
      low = theta;
    }
    const double slope = MarchenkoPasturAngleDensity(theta, rootBeta);
    double       next = slope > 0.0 ? theta - excess / slope : 0.5 * (low + high);
    if (!(next > low && next < high))
    {
      next = 0.5 * (low + high);
    }
    const bool done = fabs(next - theta) < 1e-14 || high - low < 1e-14;
    theta = next;
    if (done)
    {
      break;
    }
  }
  const double u = 1.0 - rootBeta * cos(theta);
  return u * u;
}

/** Singular values above `threshold`, counted from the eigenvalues; `sigma` is passed through. */
template <typename TEigenvalues>
SVDLR_HOST_DEVICE NoiseRank
RankAboveThreshold(const TEigenvalues & eigenvaluesAscending, int count, double threshold, double sigma)
{
  const double squared = threshold > 0.0 ? threshold * threshold : 0.0;
  int          rank = 0;
  for (int i = count - 1; i >= 0 && double(eigenvaluesAscending[i]) > squared; --i)
  {
    ++rank;
  }
  return { rank, sigma };
}

/** Eigenvalues of a Gram matrix at or below this fraction of the largest are zeros blurred by rounding (the Gram
 * matrix and its eigenvalues are computed in double from float data, whose own precision is about 1e-7 of a
 * singular value, 1e-14 of an eigenvalue). */
SVDLR_HOST_DEVICE constexpr double
NoiseFreeEigenvalueFraction()
{
  return 1e-12;
}

/** A matrix without noise (a series constant over time, an exactly low-rank patch): the components above
 * rounding (NoiseFreeEigenvalueFraction() of the largest eigenvalue) are kept and σ is 0. Without this the noise
 * rules keep every component (MP finds no noise bulk) or a σ made of rounding, and a rank that says nothing. */
template <typename TEigenvalues>
SVDLR_HOST_DEVICE NoiseRank
NoiseFreeRank(const TEigenvalues & eigenvaluesAscending, int count)
{
  const double largest = count > 0 ? double(eigenvaluesAscending[count - 1]) : 0.0;
  const double zero = (largest > 0.0 ? largest : 0.0) * NoiseFreeEigenvalueFraction();
  return RankAboveThreshold(eigenvaluesAscending, count, sqrt(zero), 0.0);
}

/** Gavish & Donoho (2014) with the median μ_β given (MarchenkoPasturMedian(β)), for callers that decide many
 * matrices of one shape. Known σ (> 0): threshold λ*(β)·√n·σ. Unknown σ (<= 0): σ = y_med / sqrt(n·μ_β) from the
 * median singular value y_med, and the threshold is the same formula with that σ, i.e. ω(β)·y_med. */
template <typename TEigenvalues>
SVDLR_HOST_DEVICE NoiseRank
GavishDonohoRank(const TEigenvalues & eigenvaluesAscending, int count, int rows, int cols, double knownSigma,
                 double marchenkoPasturMedian)
{
  if (count <= 0)
  {
    return { 0, knownSigma > 0.0 ? knownSigma : 0.0 };
  }
  double sigma = knownSigma;
  if (!(knownSigma > 0.0))
  {
    const auto singular = [&](int i) {
      const double value = double(eigenvaluesAscending[i]);
      return value > 0.0 ? sqrt(value) : 0.0;
    };
    const double median =
      (count % 2) ? singular(count / 2) : 0.5 * (singular(count / 2 - 1) + singular(count / 2));
    if (median * median <= double(eigenvaluesAscending[count - 1]) * NoiseFreeEigenvalueFraction())
    {
      return NoiseFreeRank(eigenvaluesAscending, count); // the median singular value is rounding: no noise
    }
    const int larger = rows > cols ? rows : cols;
    sigma = median / sqrt(double(larger) * marchenkoPasturMedian);
  }
  return RankAboveThreshold(eigenvaluesAscending, count, GavishDonohoThreshold(sigma, rows, cols), sigma);
}

template <typename TEigenvalues>
SVDLR_HOST_DEVICE NoiseRank
GavishDonohoRank(const TEigenvalues & eigenvaluesAscending, int count, int rows, int cols, double knownSigma)
{
  const double median = knownSigma > 0.0 ? 0.0 : MarchenkoPasturMedian(NoiseAspectRatio(rows, cols));
  return GavishDonohoRank(eigenvaluesAscending, count, rows, cols, knownSigma, median);
}

/** MP-PCA (Veraart et al. 2016), with MRtrix3 dwidenoise's definitions so that σ matches its noise map. With n the
 * larger dimension and λ_i = max(eigenvalue_i, 0) / n ascending, the k smallest are taken as noise when their mean
 * exceeds the width of the Marchenko-Pastur bulk they would span, (λ_(k-1) - λ_0) / (4 sqrt(γ_k)), and σ² is that
 * mean for the largest such k; rank = count - k. γ_k = k / n (Veraart2016) or k / (n - (count - k))
 * (CorderoGrande2019: the larger dimension less the count - k signal components). A zero matrix gets rank 0, σ 0. */
template <typename TEigenvalues>
SVDLR_HOST_DEVICE NoiseRank
MarchenkoPasturRank(const TEigenvalues & eigenvaluesAscending, int count, int rows, int cols,
                    MarchenkoPasturEstimator estimator)
{
  if (count <= 0 || !(double(eigenvaluesAscending[count - 1]) > 0.0))
  {
    return { 0, 0.0 };
  }
  const double larger = rows > cols ? double(rows) : double(cols);
  const auto   scaled = [&](int i) {
    const double value = double(eigenvaluesAscending[i]);
    return (value > 0.0 ? value : 0.0) / larger;
  };
  const double smallest = scaled(0);
  double       sum = 0.0;
  double       sigma2 = 0.0;
  int          noise = 0;
  for (int k = 1; k <= count; ++k)
  {
    const double lambda = scaled(k - 1);
    sum += lambda;
    const double dimension =
      estimator == MarchenkoPasturEstimator::CorderoGrande2019 ? larger - double(count - k) : larger;
    const double gamma = double(k) / dimension;
    const double mean = sum / double(k);
    const double width = (lambda - smallest) / (4.0 * sqrt(gamma));
    if (width < mean)
    {
      sigma2 = mean;
      noise = k;
    }
  }
  if (sigma2 * larger <= double(eigenvaluesAscending[count - 1]) * NoiseFreeEigenvalueFraction())
  {
    return NoiseFreeRank(eigenvaluesAscending, count); // no noise bulk, or one made of rounding
  }
  return { count - noise, sqrt(sigma2) };
}

/** σ refit over the noise once the rank is chosen (NoiseEstimator::ResidualRefit): the energy left outside the
 * `rank` kept components, the count - rank smallest eigenvalues, over the degrees of freedom a rank-r fit of a
 * rows x cols matrix leaves, (rows - rank)(cols - rank) = rows·cols - r(rows + cols - r) (a rank-r matrix has
 * r(rows + cols - r) free parameters: a linear model's residual variance). For Y = X + E with rank(X) = r and the
 * subspaces found, the residual is E projected on a (rows - r) x (cols - r) space, whose expected energy is
 * σ²(rows - r)(cols - r). The Marchenko-Pastur mean divides the same energy by (count - r)·max(rows, cols) and so
 * comes out low by the factor sqrt((n - r) / n), n = max(rows, cols): 1.6 % for a 125 x 65 patch that keeps 4.
 * Returns `fallback` where nothing is left to refit (rank >= count) or the residual is not positive. */
template <typename TEigenvalues>
SVDLR_HOST_DEVICE double
ResidualNoiseSigma(const TEigenvalues & eigenvaluesAscending, int count, int rows, int cols, int rank, double fallback)
{
  if (rank < 0 || rank >= count || rank >= rows || rank >= cols)
  {
    return fallback;
  }
  double residual = 0.0;
  for (int i = 0; i < count - rank; ++i)
  {
    const double value = double(eigenvaluesAscending[i]);
    residual += value > 0.0 ? value : 0.0;
  }
  const double freedom = double(rows - rank) * double(cols - rank);
  return residual > 0.0 ? sqrt(residual / freedom) : fallback;
}

/** Gavish & Donoho (2017), the shrinker optimal in Frobenius loss: in units of σ√n a singular value y >= 1 + √β
 * becomes sqrt((y² - β - 1)² - 4β) / y, and those inside the bulk become 0. σ <= 0 leaves y unchanged. */
SVDLR_HOST_DEVICE inline double
OptimalFrobeniusShrinkage(double singularValue, double sigma, int rows, int cols)
{
  if (!(sigma > 0.0))
  {
    return singularValue;
  }
  const int    larger = rows > cols ? rows : cols;
  const double beta = NoiseAspectRatio(rows, cols);
  const double unit = sigma * sqrt(double(larger));
  const double y = singularValue / unit;
  if (y < 1.0 + sqrt(beta))
  {
    return 0.0;
  }
  const double spread = y * y - beta - 1.0;
  const double radicand = spread * spread - 4.0 * beta;
  return radicand > 0.0 ? unit * sqrt(radicand) / y : 0.0;
}

} // namespace detail
} // namespace svdlr

#endif
