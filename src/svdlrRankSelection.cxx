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

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

namespace svdlr
{
namespace detail
{

std::size_t
SelectRank(const RankPolicy & policy, const double * singularValuesDescending, std::size_t count)
{
  if (policy.kind == RankPolicy::Kind::FixedRank)
  {
    return std::min(policy.rank, count);
  }

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
  const double target = policy.energyFraction * total * (1.0 - 8.0 * std::numeric_limits<double>::epsilon());
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
