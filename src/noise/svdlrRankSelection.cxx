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
#include "noise/svdlrRankSelection.h"

#include "noise/svdlrChooseRank.h"

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
  const int    r = static_cast<int>(rows);
  const int    c = static_cast<int>(cols);
  const double median =
    NeedsMarchenkoPasturMedian(policy, false) ? CachedMarchenkoPasturMedian(NoiseAspectRatio(r, c)) : 0.0;
  const SingularValuesDescending spectrum{ singularValuesDescending, static_cast<int>(count) };
  const NoiseRank                decided = ChooseRank(policy, spectrum, r, c, -1.0, median);
  return { static_cast<std::size_t>(decided.rank),
           ModelsNoise(policy) ? decided.sigma : std::numeric_limits<double>::quiet_NaN() };
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
