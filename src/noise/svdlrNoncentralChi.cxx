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
// The non-central chi model's tables (svdlr/MagnitudeNoise.h).
#include "svdlr/MagnitudeNoise.h"

#include "noise/svdlrMagnitudeTransform.h"
#include "shared/svdlrParallel.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace svdlr
{
namespace
{

// The signal grid: fine where the floor bends the mean (nu < 8), coarse where M is nearly Gaussian. Linear
// interpolation between nodes then errs by at most about 1e-4 sigma.
constexpr double kFineStep = 0.025;
constexpr double kFineEnd = 8.0;
constexpr double kCoarseStep = 0.1;
// The quadrature: nodes every kNodeStep over +-kNodeReach standard deviations of each Gaussian factor. Both
// integrands are smooth and Gaussian-weighted, where the trapezoidal rule converges fast.
constexpr double kNodeStep = 0.125;
constexpr double kNodeReach = 8.5;

struct WeightedNodes
{
  std::vector<double> at, weight; // weights sum to 1
};

/** x ~ N(0, 1). */
WeightedNodes
GaussianNodes()
{
  WeightedNodes nodes;
  for (double x = -kNodeReach; x <= kNodeReach + 1e-9; x += kNodeStep)
  {
    nodes.at.push_back(x);
    nodes.weight.push_back(std::exp(-0.5 * x * x));
  }
  return nodes;
}

/** r = the norm of 2N - 1 independent N(0, 1): density proportional to r^(2N - 2) exp(-r^2 / 2) on r >= 0. For N = 1
 * the density is even in r, so the node at 0 takes half weight (the trapezoidal rule on the whole line). */
WeightedNodes
ChiNodes(unsigned coils)
{
  WeightedNodes nodes;
  const double  mode = std::sqrt(2.0 * coils - 2.0);
  const double  first = std::max(0.0, std::floor((mode - kNodeReach) / kNodeStep) * kNodeStep);
  const double  power = 2.0 * coils - 2.0;
  for (double r = first; r <= mode + kNodeReach + 1e-9; r += kNodeStep)
  {
    // log-weight relative to the mode, so that many coils do not overflow.
    const double logWeight = (r > 0.0 ? power * std::log(r / std::max(mode, 1.0)) : (power > 0 ? -1e300 : 0.0)) -
                             0.5 * (r * r - mode * mode);
    nodes.at.push_back(r);
    nodes.weight.push_back(std::exp(logWeight) * (r == 0.0 ? 0.5 : 1.0));
  }
  return nodes;
}

void
Normalise(WeightedNodes & nodes)
{
  double sum = 0.0;
  for (double w : nodes.weight)
  {
    sum += w;
  }
  for (double & w : nodes.weight)
  {
    w /= sum;
  }
}

/** E[h(M) | nu] and E[h(M)^2 | nu] with M = sqrt((nu + x)^2 + r^2), in one sweep over the nodes. */
template <typename TFunction>
std::pair<double, double>
Moments(const TFunction & h, double signal, const WeightedNodes & gaussian, const WeightedNodes & chi)
{
  double first = 0.0, second = 0.0;
  for (std::size_t i = 0; i < gaussian.at.size(); ++i)
  {
    const double a = signal + gaussian.at[i];
    double       innerFirst = 0.0, innerSecond = 0.0;
    for (std::size_t j = 0; j < chi.at.size(); ++j)
    {
      const double value = h(std::sqrt(a * a + chi.at[j] * chi.at[j]));
      innerFirst += chi.weight[j] * value;
      innerSecond += chi.weight[j] * value * value;
    }
    first += gaussian.weight[i] * innerFirst;
    second += gaussian.weight[i] * innerSecond;
  }
  return { first, second };
}

/** Piecewise-linear y(x) on increasing xs, for xs.front() <= x <= xs.back(). */
double
Interpolate(const std::vector<double> & xs, const std::vector<double> & ys, double x)
{
  const auto   upper = std::upper_bound(xs.begin(), xs.end(), x);
  const size_t i = std::min<std::size_t>(std::max<std::ptrdiff_t>(upper - xs.begin(), 1), xs.size() - 1);
  const double t = (x - xs[i - 1]) / (xs[i] - xs[i - 1]);
  return ys[i - 1] + t * (ys[i] - ys[i - 1]);
}

} // namespace

NoncentralChiModel::NoncentralChiModel(unsigned coils, unsigned iterations)
  : m_Coils(coils)
{
  if (coils == 0 || coils > kMaximumCoils)
  {
    throw Error(ErrorCode::InvalidArgument, "svdlr: the noise model takes 1 to " + std::to_string(kMaximumCoils) +
                                              " coils, got " + std::to_string(coils));
  }
  for (double nu = 0.0; nu < kFineEnd - 1e-9; nu += kFineStep)
  {
    m_Signal.push_back(nu);
  }
  for (double nu = kFineEnd; nu <= kNoncentralChiTableEnd + 1e-9; nu += kCoarseStep)
  {
    m_Signal.push_back(nu);
  }
  WeightedNodes gaussian = GaussianNodes(), chi = ChiNodes(coils);
  Normalise(gaussian);
  Normalise(chi);
  const std::size_t   count = m_Signal.size();
  const double        meanSquareNoise = 2.0 * coils; // E[M^2] = nu^2 + 2N (sigma = 1)
  std::vector<double> spread(count);
  m_Mean.resize(count);
  m_MagnitudeVariance.resize(count);
  // Each signal node's moments are independent: computed in parallel, each written by one task.
  detail::PoolParallelFor(0, count, [&](std::size_t i) {
    m_Mean[i] = Moments([](double m) { return m; }, m_Signal[i], gaussian, chi).first;
    m_MagnitudeVariance[i] = std::max(m_Signal[i] * m_Signal[i] + meanSquareNoise - m_Mean[i] * m_Mean[i], 1e-12);
    spread[i] = std::sqrt(m_MagnitudeVariance[i]);
  });

  // The first-order stabiliser: g(E[M | nu]) = g(floor) + the integral of dm / sd along the mean; below the floor
  // g(m) = m / sd(0). Tabulated on a uniform magnitude grid that covers the signal table.
  std::vector<double> atMean(count);
  atMean[0] = m_Mean[0] / spread[0];
  for (std::size_t i = 1; i < count; ++i)
  {
    atMean[i] = atMean[i - 1] + (m_Mean[i] - m_Mean[i - 1]) * 0.5 * (1.0 / spread[i - 1] + 1.0 / spread[i]);
  }
  const std::size_t nodes = static_cast<std::size_t>(std::ceil(m_Mean.back() / kStabiliserMagnitudeStep)) + 1;
  m_Stabilised.resize(nodes);
  // Var[M | nu] against E[M | nu] on the same uniform grid, for a lookup without a search (CorrectSigmaForNoiseFloor
  // takes it once per voxel, volume and pass); below the floor it is the variance at nu = 0.
  m_VarianceAtMean.resize(nodes);
  for (std::size_t j = 0; j < nodes; ++j)
  {
    const double m = j * kStabiliserMagnitudeStep;
    m_VarianceAtMean[j] = m <= m_Mean.front() ? m_MagnitudeVariance.front() : Interpolate(m_Mean, m_MagnitudeVariance, m);
  }
  for (std::size_t j = 0; j < nodes; ++j)
  {
    const double m = j * kStabiliserMagnitudeStep;
    m_Stabilised[j] = m <= m_Mean.front()  ? m / spread[0]
                      : m >= m_Mean.back() ? atMean.back() + (m - m_Mean.back())
                                           : Interpolate(m_Mean, atMean, m);
  }
  m_EndSlope = 1.0;
  m_ExpectedStabilised.resize(count);
  m_Variance.resize(count);
  const auto tabulateMoments = [&] {
    // The tables taken once a pass (each refinement rewrites the stabiliser and its end slope), and the stabiliser
    // inlined: through Stabilise(), which takes the tables anew, a third of the construction went to that call.
    const NoncentralChiTables tables = Tables();
    const auto                g = [&tables](double m) { return chi::Stabilise(tables, m); };
    detail::PoolParallelFor(0, count, [&](std::size_t i) {
      const auto [mean, square] = Moments(g, m_Signal[i], gaussian, chi);
      m_ExpectedStabilised[i] = mean;
      m_Variance[i] = std::max(square - mean * mean, 1e-12);
    });
  };
  tabulateMoments();
  // Foi's refinement: g <- h(g), h' = 1 / sd[g(M)] along E[g(M)], h linear below E[g(M) | 0] (so h(0) = 0), each
  // pass taking out the variance the previous one left.
  for (unsigned pass = 0; pass < iterations; ++pass)
  {
    std::vector<double> h(count);
    h[0] = m_ExpectedStabilised[0] / std::sqrt(m_Variance[0]);
    for (std::size_t i = 1; i < count; ++i)
    {
      h[i] = h[i - 1] + (m_ExpectedStabilised[i] - m_ExpectedStabilised[i - 1]) * 0.5 *
                          (1.0 / std::sqrt(m_Variance[i - 1]) + 1.0 / std::sqrt(m_Variance[i]));
    }
    const double lowSlope = 1.0 / std::sqrt(m_Variance.front()), highSlope = 1.0 / std::sqrt(m_Variance.back());
    for (double & value : m_Stabilised)
    {
      value = value <= m_ExpectedStabilised.front() ? value * lowSlope
              : value >= m_ExpectedStabilised.back()
                ? h.back() + (value - m_ExpectedStabilised.back()) * highSlope
                : Interpolate(m_ExpectedStabilised, h, value);
    }
    m_EndSlope *= highSlope;
    tabulateMoments();
  }
  // Buckets four times as many as table entries: where the floor flattens the table (low signal) one still holds
  // only a few entries, which ExpectedUpperBound's window covers.
  const double span = m_ExpectedStabilised.back() - m_ExpectedStabilised.front();
  m_ExpectedStart.resize(4 * count + 1);
  m_BucketsPerUnit = static_cast<double>(m_ExpectedStart.size()) / span;
  for (std::size_t b = 0, i = 0; b < m_ExpectedStart.size(); ++b)
  {
    const double edge = m_ExpectedStabilised.front() + static_cast<double>(b) / m_BucketsPerUnit;
    while (i < count && m_ExpectedStabilised[i] <= edge)
    {
      ++i;
    }
    m_ExpectedStart[b] = i;
  }
}

const NoncentralChiModel &
NoncentralChiModel::ForCoils(unsigned coils)
{
  static std::mutex                                              guard;
  static std::map<unsigned, std::unique_ptr<NoncentralChiModel>> models;
  std::lock_guard<std::mutex>                                    lock(guard);
  auto &                                                         model = models[coils];
  if (!model)
  {
    model = std::make_unique<NoncentralChiModel>(coils, kStabiliserIterations);
  }
  return *model;
}

NoncentralChiTables
NoncentralChiModel::Tables() const
{
  NoncentralChiTables tables;
  tables.stabilised = m_Stabilised.data();
  tables.stabilisedCount = m_Stabilised.size();
  tables.endSlope = m_EndSlope;
  tables.signal = m_Signal.data();
  tables.mean = m_Mean.data();
  tables.expected = m_ExpectedStabilised.data();
  tables.count = m_Signal.size();
  tables.expectedStart = m_ExpectedStart.data();
  tables.bucketCount = m_ExpectedStart.size();
  tables.bucketsPerUnit = m_BucketsPerUnit;
  tables.degreesOfFreedom = 2.0 * m_Coils - 1.0;
  return tables;
}

double
NoncentralChiModel::MeanMagnitude(double signal) const
{
  return chi::MeanMagnitude(Tables(), signal);
}

double
NoncentralChiModel::SignalFromMeanMagnitude(double mean) const
{
  if (mean <= m_Mean.front())
  {
    return 0.0;
  }
  return mean > m_Mean.back() ? chi::SignalBeyondTable(Tables(), mean) : Interpolate(m_Mean, m_Signal, mean);
}

double
NoncentralChiModel::Stabilise(double magnitude) const
{
  return chi::Stabilise(Tables(), magnitude);
}

double
NoncentralChiModel::InverseStabilise(double value) const
{
  const double last = (m_Stabilised.size() - 1) * kStabiliserMagnitudeStep;
  if (value <= 0.0)
  {
    return value * kStabiliserMagnitudeStep / m_Stabilised[1];
  }
  if (value >= m_Stabilised.back())
  {
    return last + (value - m_Stabilised.back()) / m_EndSlope;
  }
  const auto        upper = std::upper_bound(m_Stabilised.begin(), m_Stabilised.end(), value);
  const std::size_t j = static_cast<std::size_t>(upper - m_Stabilised.begin());
  return kStabiliserMagnitudeStep * ((j - 1) + (value - m_Stabilised[j - 1]) / (m_Stabilised[j] - m_Stabilised[j - 1]));
}

double
NoncentralChiModel::ExpectedStabilised(double signal) const
{
  signal = std::max(signal, 0.0);
  if (signal > kNoncentralChiTableEnd)
  {
    return m_ExpectedStabilised.back() + (chi::MeanBeyondTable(Tables(), signal) - m_Mean.back()) * m_EndSlope;
  }
  return Interpolate(m_Signal, m_ExpectedStabilised, signal);
}

double
NoncentralChiModel::SignalFromExpectedStabilised(double value) const
{
  return chi::SignalFromExpectedStabilised(Tables(), value);
}

double
NoncentralChiModel::StabilisedVariance(double signal) const
{
  return Interpolate(m_Signal, m_Variance, std::clamp(signal, 0.0, kNoncentralChiTableEnd));
}

double
NoncentralChiModel::MagnitudeVarianceAtMean(double mean) const
{
  const double position = std::max(mean, 0.0) / kStabiliserMagnitudeStep;
  if (position >= static_cast<double>(m_VarianceAtMean.size() - 1))
  {
    return MagnitudeVariance(SignalFromMeanMagnitude(mean));
  }
  const auto j = static_cast<std::size_t>(position);
  return m_VarianceAtMean[j] + (position - j) * (m_VarianceAtMean[j + 1] - m_VarianceAtMean[j]);
}

double
NoncentralChiModel::MagnitudeVariance(double signal) const
{
  return signal >= kNoncentralChiTableEnd ? 1.0 : Interpolate(m_Signal, m_MagnitudeVariance, std::max(signal, 0.0));
}

} // namespace svdlr
