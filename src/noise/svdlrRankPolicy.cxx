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
// The rank policy's names, validity and labels (svdlr/RankPolicy.h), from one table.
#include "svdlr/RankPolicy.h"

#include <cmath>
#include <sstream>

namespace svdlr
{
namespace
{

struct PolicyEntry
{
  RankPolicy::Kind         kind;
  MarchenkoPasturEstimator estimator; // MarchenkoPastur only
  const char *             name;      // command lines, Python
  const char *             method;    // summaries; "" for the policies that do not model noise
  const char *             tag;       // output file names, before the parameters
  const char *             result;    // DerivationDescription: what replaced each slice, after "its"
};

constexpr PolicyEntry kPolicies[] = {
  { RankPolicy::Kind::FixedRank, MarchenkoPasturEstimator::Veraart2016, "fixed", "", "svd-rank", "" },
  { RankPolicy::Kind::EnergyFraction, MarchenkoPasturEstimator::Veraart2016, "energy", "", "svd-energy", "" },
  { RankPolicy::Kind::GavishDonoho,
    MarchenkoPasturEstimator::Veraart2016,
    "gd",
    "Gavish-Donoho",
    "svd-gd",
    "truncated SVD reconstruction above the Gavish-Donoho threshold" },
  { RankPolicy::Kind::MarchenkoPastur,
    MarchenkoPasturEstimator::Veraart2016,
    "mp",
    "Marchenko-Pastur (Veraart 2016)",
    "svd-mp",
    "truncated SVD reconstruction above the Marchenko-Pastur noise bulk (Veraart 2016)" },
  { RankPolicy::Kind::MarchenkoPastur,
    MarchenkoPasturEstimator::CorderoGrande2019,
    "mp-cg",
    "Marchenko-Pastur (Cordero-Grande 2019)",
    "svd-mp-cordero2019",
    "truncated SVD reconstruction above the Marchenko-Pastur noise bulk (Cordero-Grande 2019)" },
  { RankPolicy::Kind::Nordic,
    MarchenkoPasturEstimator::Veraart2016,
    "nordic",
    "NORDIC threshold (Moeller 2021), sigma given",
    "svd-nordic",
    "truncated SVD reconstruction above NORDIC's noise threshold sigma (sqrt(m) + sqrt(n))" },
};

bool
ChoosesFromNoise(const PolicyEntry & entry)
{
  return entry.method[0] != '\0';
}

const PolicyEntry *
Find(const RankPolicy & policy)
{
  for (const PolicyEntry & entry : kPolicies)
  {
    if (entry.kind == policy.kind &&
        (entry.kind != RankPolicy::Kind::MarchenkoPastur || entry.estimator == policy.estimator))
    {
      return &entry;
    }
  }
  return nullptr;
}

bool
Parse(const std::string & name, bool noiseOnly, RankPolicy & policy)
{
  for (const PolicyEntry & entry : kPolicies)
  {
    if (name == entry.name && (!noiseOnly || ChoosesFromNoise(entry)))
    {
      policy = RankPolicy{}; // the default parameters: rank kDefaultRank, energy fraction 1, σ unknown
      policy.kind = entry.kind;
      policy.estimator = entry.estimator;
      return true;
    }
  }
  return false;
}

std::string
Names(bool noiseOnly)
{
  const std::vector<std::string> names = PolicyNameList(noiseOnly);
  std::string                    list;
  for (std::size_t i = 0; i < names.size(); ++i)
  {
    list += (i == 0 ? "" : (i + 1 == names.size() ? " or " : ", ")) + names[i];
  }
  return list;
}

bool
HasKnownSigma(const RankPolicy & policy)
{
  return (policy.kind == RankPolicy::Kind::GavishDonoho || policy.kind == RankPolicy::Kind::Nordic) &&
         policy.noiseSigma > 0.0;
}

} // namespace

const char *
PolicyName(const RankPolicy & policy)
{
  const PolicyEntry * entry = Find(policy);
  return entry != nullptr ? entry->name : "unknown";
}

bool
ParsePolicyName(const std::string & name, RankPolicy & policy)
{
  return Parse(name, false, policy);
}

std::string
PolicyNames()
{
  return Names(false);
}

std::vector<std::string>
PolicyNameList(bool noiseOnly)
{
  std::vector<std::string> names;
  for (const PolicyEntry & entry : kPolicies)
  {
    if (!noiseOnly || ChoosesFromNoise(entry))
    {
      names.emplace_back(entry.name);
    }
  }
  return names;
}

const char *
NoiseRankName(const RankPolicy & policy)
{
  const PolicyEntry * entry = Find(policy);
  return entry != nullptr && ChoosesFromNoise(*entry) ? entry->name : "";
}

const char *
NoiseRankDescription(const RankPolicy & policy)
{
  const PolicyEntry * entry = Find(policy);
  return entry != nullptr ? entry->method : "";
}

bool
ParseNoiseRank(const std::string & name, RankPolicy & policy)
{
  return Parse(name, true, policy);
}

std::string
NoiseRankNames()
{
  return Names(true);
}

std::string
OutputTag(const RankPolicy & policy)
{
  const PolicyEntry * entry = Find(policy);
  std::ostringstream  tag; // default stream formatting: 0.95, 12.5, 1e-05, as Python's :g
  tag << (entry != nullptr ? entry->tag : "svd-unknown");
  if (policy.kind == RankPolicy::Kind::FixedRank)
  {
    tag << policy.rank;
  }
  else if (policy.kind == RankPolicy::Kind::EnergyFraction)
  {
    tag << policy.energyFraction;
  }
  else if (HasKnownSigma(policy))
  {
    tag << "-sigma" << policy.noiseSigma;
  }
  return tag.str();
}

std::string
PolicyDescription(const RankPolicy & policy)
{
  std::ostringstream text;
  if (policy.kind == RankPolicy::Kind::FixedRank)
  {
    text << "SVD rank " << policy.rank;
  }
  else if (policy.kind == RankPolicy::Kind::EnergyFraction)
  {
    text << "SVD energy " << policy.energyFraction;
  }
  else
  {
    text << "SVD noise rank " << PolicyName(policy);
    if (HasKnownSigma(policy))
    {
      text << " sigma " << policy.noiseSigma;
    }
  }
  return text.str();
}

std::string
SliceDerivationDescription(const RankPolicy & policy)
{
  const PolicyEntry * entry = Find(policy);
  std::ostringstream  text;
  text << "Each slice replaced by its ";
  if (policy.kind == RankPolicy::Kind::FixedRank)
  {
    text << "rank-" << policy.rank << " truncated SVD reconstruction";
  }
  else if (policy.kind == RankPolicy::Kind::EnergyFraction)
  {
    text << "truncated SVD reconstruction keeping " << policy.energyFraction << " of its energy";
  }
  else
  {
    text << (entry != nullptr ? entry->result : "truncated SVD reconstruction");
  }
  if (HasKnownSigma(policy))
  {
    text << " (sigma " << policy.noiseSigma << ")";
  }
  else if (policy.kind == RankPolicy::Kind::GavishDonoho)
  {
    text << " (sigma estimated per slice)";
  }
  return text.str();
}

bool
NeedsGivenSigma(const RankPolicy & policy)
{
  return policy.kind == RankPolicy::Kind::Nordic;
}

std::string
RankPolicyProblem(const RankPolicy & policy)
{
  std::ostringstream problem;
  if (policy.kind == RankPolicy::Kind::FixedRank && policy.rank < kMinimumRank)
  {
    problem << "rank must be at least " << kMinimumRank << ", got " << policy.rank;
  }
  else if (policy.kind == RankPolicy::Kind::EnergyFraction &&
           !(policy.energyFraction > 0.0 && policy.energyFraction <= 1.0)) // also rejects NaN
  {
    problem << "energy fraction must be in (0, 1], got " << policy.energyFraction;
  }
  else if ((policy.kind == RankPolicy::Kind::GavishDonoho || policy.kind == RankPolicy::Kind::Nordic) &&
           !(std::isfinite(policy.noiseSigma) && policy.noiseSigma >= 0.0))
  {
    problem << "noise sigma must be finite and >= 0 (0: "
            << (NeedsGivenSigma(policy) ? "given per voxel" : "estimate it") << "), got " << policy.noiseSigma;
  }
  else if (policy.kind == RankPolicy::Kind::MarchenkoPastur &&
           policy.estimator != MarchenkoPasturEstimator::Veraart2016 &&
           policy.estimator != MarchenkoPasturEstimator::CorderoGrande2019)
  {
    problem << "unknown Marchenko-Pastur estimator " << static_cast<int>(policy.estimator);
  }
  else if (Find(policy) == nullptr)
  {
    problem << "unknown rank policy " << static_cast<int>(policy.kind);
  }
  return problem.str();
}

} // namespace svdlr
