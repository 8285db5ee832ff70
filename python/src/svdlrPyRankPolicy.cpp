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
#include "svdlrPyErrors.h"
#include "svdlrPyRankPolicy.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cmath>

namespace nb = nanobind;
using namespace nb::literals;

namespace svdlr
{
namespace python
{
RankPolicy
RankPolicyFrom(const PolicyKeywords & keywords, const char * defaultPolicy)
{
  const std::string name = keywords.policy           ? *keywords.policy
                           : keywords.rank           ? "fixed"
                           : keywords.energyFraction ? "energy"
                           : keywords.noiseSigma     ? "gd"
                                                     : defaultPolicy;
  const std::string keyword = keywords.policyKeyword;
  const bool        noiseOnly = keyword == "noise_rank";
  RankPolicy        policy;
  if (!(noiseOnly ? ParseNoiseRank(name, policy) : ParsePolicyName(name, policy)))
  {
    ThrowValueError(keyword + " must be " + (noiseOnly ? NoiseRankNames() : PolicyNames()) + ", got \"" + name +
                    "\"");
  }
  const std::string fixed = PolicyName(RankPolicy::Fixed(kMinimumRank));
  const std::string energy = PolicyName(RankPolicy::Energy(1.0));
  if (keywords.rank && policy.kind != RankPolicy::Kind::FixedRank)
  {
    ThrowValueError("rank goes with " + keyword + " \"" + fixed + "\"; " + keyword + " \"" + name +
                    "\" chooses the rank itself");
  }
  if (keywords.energyFraction && policy.kind != RankPolicy::Kind::EnergyFraction)
  {
    ThrowValueError("energy_fraction goes with " + keyword + " \"" + energy + "\", not with " + keyword + " \"" +
                    name + "\"");
  }
  if (keywords.noiseSigma && policy.kind != RankPolicy::Kind::GavishDonoho && !NeedsGivenSigma(policy))
  {
    ThrowValueError("noise_sigma sets Gavish-Donoho's sigma (or NORDIC's): it does not go with " + keyword + "=\"" +
                    name + "\"");
  }
  if (policy.kind == RankPolicy::Kind::FixedRank)
  {
    if (!keywords.rank)
    {
      ThrowValueError(keyword + " \"" + name + "\" needs rank");
    }
    if (*keywords.rank < static_cast<std::int64_t>(kMinimumRank)) // the engine's rank is unsigned
    {
      ThrowValueError("rank must be at least " + std::to_string(kMinimumRank) + ", got " +
                      std::to_string(*keywords.rank));
    }
    policy.rank = static_cast<std::size_t>(*keywords.rank);
  }
  if (policy.kind == RankPolicy::Kind::EnergyFraction)
  {
    if (!keywords.energyFraction)
    {
      ThrowValueError(keyword + " \"" + name + "\" needs energy_fraction");
    }
    policy.energyFraction = *keywords.energyFraction;
  }
  if (keywords.noiseSigma)
  {
    if (!(*keywords.noiseSigma > 0.0 && std::isfinite(*keywords.noiseSigma)))
    {
      ThrowValueError("noise_sigma must be a finite number > 0 (leave it out to estimate sigma), got " +
                      std::to_string(*keywords.noiseSigma));
    }
    policy.noiseSigma = *keywords.noiseSigma;
  }
  return policy;
}

void
DefineRankPolicy(nb::module_ & module)
{
  module.attr("POLICIES") = nb::tuple(nb::cast(PolicyNameList()));
  module.attr("NOISE_RANKS") = nb::tuple(nb::cast(PolicyNameList(true)));
  // Each label of svdlr/RankPolicy.h, from the same keywords as reconstruct() and denoise_local_low_rank().
  const auto defineLabel = [&module](const char * name, std::string (*label)(const RankPolicy &), const char * doc) {
    module.def(
      name,
      [label](std::optional<std::string> policy, std::optional<std::int64_t> rank,
              std::optional<double> energyFraction, std::optional<double> noiseSigma) {
        return label(RankPolicyFrom({ std::move(policy), "policy", rank, energyFraction, noiseSigma }, "fixed"));
      },
      nb::kw_only(),
      "policy"_a = nb::none(),
      "rank"_a = nb::none(),
      "energy_fraction"_a = nb::none(),
      "noise_sigma"_a = nb::none(),
      doc);
  };
  defineLabel("output_tag",
              &OutputTag,
              "The tag an output's file name carries for the policy these keywords choose (svd-rank20, svd-mp...): "
              "svdlr::OutputTag, the command-line tools' too.");
  defineLabel("policy_description",
              &PolicyDescription,
              "The one-line description of that policy (\"SVD rank 20\", \"SVD noise rank mp-cg\"...): "
              "svdlr::PolicyDescription, as in the tools' DICOM SeriesDescription.");
}

} // namespace python
} // namespace svdlr
