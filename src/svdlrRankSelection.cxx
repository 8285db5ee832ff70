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
#include "svdlrRankSelection.h"

#include "svdlrNoiseThreshold.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

namespace svdlr
{
namespace detail
{

namespace
{

std::size_t
EnergyRank(double fraction, const double * singularValuesDescending, std::size_t count)
{
  double total = 0.0;
  for (std::size_t i = 0; i < count; ++i)
  {
    total += singularValuesDescending[i] * singularValuesDescending[i];
  }
  if (total <= 0.0)
  {
    return 0;
  }
  // Compare against the target with a relative slack of a few ulps, so that f = 1 selects the
  // numerical rank instead of all values when the tail is round-off.
  const double target = fraction * total * (1.0 - 8.0 * std::numeric_limits<double>::epsilon());
  double       kept = 0.0;
  for (std::size_t k = 0; k < count; ++k)
  {
    kept += singularValuesDescending[k] * singularValuesDescending[k];
    if (kept >= target)
    {
      return k + 1;
    }
  }
  return count;
}

// The Marchenko-Pastur median depends only on the shape, and a batch has one shape: each worker thread keeps the
// last one it computed (a few thousand trigonometric evaluations each).
double
CachedMarchenkoPasturMedian(double beta)
{
  thread_local double cachedBeta = -1.0;
  thread_local double cachedMedian = 0.0;
  if (beta != cachedBeta)
  {
    cachedMedian = MarchenkoPasturMedian(beta);
    cachedBeta = beta;
  }
  return cachedMedian;
}

} // namespace

RankChoice
SelectRank(const RankPolicy & policy, const double * singularValuesDescending, std::size_t count, std::size_t rows,
           std::size_t cols)
{
  constexpr double notModelled = std::numeric_limits<double>::quiet_NaN();
  switch (policy.kind)
  {
    case RankPolicy::Kind::FixedRank:
      return { std::min(policy.rank, count), notModelled };
    case RankPolicy::Kind::EnergyFraction:
      return { EnergyRank(policy.energyFraction, singularValuesDescending, count), notModelled };
    case RankPolicy::Kind::GavishDonoho:
    case RankPolicy::Kind::MarchenkoPastur:
      break;
  }

  // The noise thresholds read Gram eigenvalues in ascending order; both backends pass singular values, so that
  // both decide from the same numbers.
  std::vector<double> eigenvalues(count);
  std::transform(std::reverse_iterator<const double *>(singularValuesDescending + count),
                 std::reverse_iterator<const double *>(singularValuesDescending),
                 eigenvalues.begin(),
                 [](double value) { return value * value; });
  const int  n = static_cast<int>(count);
  const int  r = static_cast<int>(rows);
  const int  c = static_cast<int>(cols);
  NoiseRank  decided{};
  if (policy.kind == RankPolicy::Kind::GavishDonoho)
  {
    const double median = policy.noiseSigma > 0.0 ? 0.0 : CachedMarchenkoPasturMedian(NoiseAspectRatio(r, c));
    decided = GavishDonohoRank(eigenvalues.data(), n, r, c, policy.noiseSigma, median);
  }
  else
  {
    decided = MarchenkoPasturRank(eigenvalues.data(), n, r, c, policy.estimator);
  }
  return { static_cast<std::size_t>(decided.rank), decided.sigma };
}

void
SingularValuesFromGramEigenvalues(const double * ascending, std::size_t count, std::vector<double> & singularValues)
{
  singularValues.resize(count);
  std::transform(std::reverse_iterator<const double *>(ascending + count),
                 std::reverse_iterator<const double *>(ascending),
                 singularValues.begin(),
                 [](double eigenvalue) { return std::sqrt(std::max(eigenvalue, 0.0)); });
}

} // namespace detail
} // namespace svdlr
