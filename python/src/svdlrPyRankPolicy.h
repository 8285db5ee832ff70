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
#ifndef svdlrPyRankPolicy_h
#define svdlrPyRankPolicy_h

// The rank policy from the keywords reconstruction and denoising share: policy (a name of svdlr/RankPolicy.h),
// rank, energy_fraction and noise_sigma. And the module's policy names and labels for the Python layer, so that
// Python spells none of them itself.

#include "svdlr/RankPolicy.h"

#include <nanobind/nanobind.h>

#include <cstdint>
#include <optional>
#include <string>

namespace svdlr
{
namespace python
{

/** What the caller was given. `policyKeyword` is the keyword `policy` came under, for messages: "policy", or
 * "noise_rank", reconstruction's deprecated alias, which names the noise policies only. */
struct PolicyKeywords
{
  std::optional<std::string>  policy;
  const char *                policyKeyword{ "policy" };
  std::optional<std::int64_t> rank;
  std::optional<double>       energyFraction;
  std::optional<double>       noiseSigma; // Gavish-Donoho's known σ (reconstruction: the denoiser's is a map)
};

/** The policy the keywords ask for. Without `policy`, the parameter given picks it (rank: "fixed",
 * energy_fraction: "energy", noise_sigma: "gd"), else `defaultPolicy`. Raises ValueError for an unknown name, a
 * parameter of another policy, or a missing one; the engine's own rules (PolicyProblem) are the caller's. */
RankPolicy
RankPolicyFrom(const PolicyKeywords & keywords, const char * defaultPolicy);

/** POLICIES and NOISE_RANKS (the names, in svdlr/RankPolicy.h's order), and output_tag() and
 * policy_description(), which label a run from the same keywords. */
void
DefineRankPolicy(nanobind::module_ & module);

} // namespace python
} // namespace svdlr

#endif
