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
// The groups of volumes that the local denoiser demeans (svdlr/VolumeGroups.h): the shell rule and the groups
// each Demean choice stands for.
#include "svdlr/VolumeGroups.h"

#include "svdlr/Engine.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace svdlr
{

namespace
{

[[noreturn]] void
ThrowInvalid(const std::string & message)
{
  throw Error(ErrorCode::InvalidArgument, "svdlr: " + message);
}

} // namespace

std::vector<std::uint32_t>
ShellGroups(const std::vector<double> & bvalues, double tolerance)
{
  if (bvalues.empty())
  {
    ThrowInvalid("shells need b-values, got none");
  }
  if (!(tolerance > 0.0 && std::isfinite(tolerance)))
  {
    ThrowInvalid("the shell tolerance must be finite and > 0, got " + std::to_string(tolerance));
  }
  for (std::size_t v = 0; v < bvalues.size(); ++v)
  {
    if (!(std::isfinite(bvalues[v]) && bvalues[v] >= 0.0))
    {
      ThrowInvalid("b-value " + std::to_string(v) + " is " + std::to_string(bvalues[v]) +
                   ": b-values must be finite and >= 0");
    }
  }
  std::vector<std::size_t> order(bvalues.size());
  std::iota(order.begin(), order.end(), std::size_t{ 0 });
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return bvalues[a] < bvalues[b]; });
  // A chain of b-values each within the tolerance of the one before is one shell, as MRtrix3 clusters them.
  std::vector<std::uint32_t> groups(bvalues.size(), 0);
  std::uint32_t              shell = 0;
  for (std::size_t i = 1; i < order.size(); ++i)
  {
    if (bvalues[order[i]] - bvalues[order[i - 1]] > tolerance)
    {
      ++shell;
    }
    groups[order[i]] = shell;
  }
  return groups;
}

std::vector<std::uint32_t>
DemeanGroups(Demean demean, std::size_t volumes, std::size_t echoes, const std::vector<double> & bvalues)
{
  switch (demean)
  {
    case Demean::None:
      return {};
    case Demean::All:
      return std::vector<std::uint32_t>(volumes, 0);
    case Demean::Shells:
      if (bvalues.size() != volumes)
      {
        ThrowInvalid("demeaning by shells needs one b-value per volume: " + std::to_string(bvalues.size()) +
                     " b-values for " + std::to_string(volumes) + " volumes");
      }
      return ShellGroups(bvalues);
    case Demean::Echoes:
    {
      if (echoes < 2 || volumes % echoes != 0)
      {
        ThrowInvalid("demeaning by echoes needs a series of 2 or more echoes of equal length, got " +
                     std::to_string(echoes) + " echo(es) for " + std::to_string(volumes) + " volumes");
      }
      std::vector<std::uint32_t> groups(volumes);
      const std::size_t          perEcho = volumes / echoes;
      for (std::size_t v = 0; v < volumes; ++v)
      {
        groups[v] = static_cast<std::uint32_t>(v / perEcho);
      }
      return groups;
    }
  }
  ThrowInvalid("unknown demeaning " + std::to_string(static_cast<int>(demean)));
}

std::size_t
GroupCount(const std::vector<std::uint32_t> & groups)
{
  return groups.empty() ? 0 : static_cast<std::size_t>(*std::max_element(groups.begin(), groups.end())) + 1;
}

} // namespace svdlr
