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
// The engine's names and request rules (svdlr/Names.h), and ToString (svdlr/Engine.h) from the same table.
#include "svdlr/Names.h"

#include <cmath>
#include <sstream>

namespace svdlr
{
namespace
{

// Each value with its lower-case name (command lines, Python) and its display name (ToString, reports).
template <typename TEnum, std::size_t N>
struct NameTable
{
  TEnum        values[N];
  const char * names[N];
  const char * displayNames[N];

  const char *
  Find(TEnum value, const char * const (&column)[N]) const
  {
    for (std::size_t i = 0; i < N; ++i)
    {
      if (values[i] == value)
      {
        return column[i];
      }
    }
    return "unknown";
  }
  bool
  Parse(const std::string & name, TEnum & value) const
  {
    for (std::size_t i = 0; i < N; ++i)
    {
      if (name == names[i])
      {
        value = values[i];
        return true;
      }
    }
    return false;
  }
  std::string
  List() const
  {
    std::string list;
    for (std::size_t i = 0; i < N; ++i)
    {
      list += (i == 0 ? "" : (i + 1 == N ? " or " : ", ")) + std::string(names[i]);
    }
    return list;
  }
};

constexpr NameTable<Backend, 3> kBackends{ { Backend::Auto, Backend::CPU, Backend::CUDA },
                                          { "auto", "cpu", "cuda" },
                                          { "Auto", "CPU", "CUDA" } };
constexpr NameTable<Solver, 3>  kSolvers{ { Solver::Auto, Solver::Exact, Solver::Subspace },
                                         { "auto", "exact", "subspace" },
                                         { "Auto", "Exact", "Subspace" } };

struct NoiseRankEntry
{
  const char *             name;
  const char *             description;
  RankPolicy::Kind         kind;
  MarchenkoPasturEstimator estimator;
};

constexpr NoiseRankEntry kNoiseRanks[] = {
  { "gd", "Gavish-Donoho", RankPolicy::Kind::GavishDonoho, MarchenkoPasturEstimator::Veraart2016 },
  { "mp", "Marchenko-Pastur (Veraart 2016)", RankPolicy::Kind::MarchenkoPastur, MarchenkoPasturEstimator::Veraart2016 },
  { "mp-cg",
    "Marchenko-Pastur (Cordero-Grande 2019)",
    RankPolicy::Kind::MarchenkoPastur,
    MarchenkoPasturEstimator::CorderoGrande2019 },
};

const NoiseRankEntry *
FindNoiseRank(const RankPolicy & policy)
{
  for (const NoiseRankEntry & entry : kNoiseRanks)
  {
    if (entry.kind == policy.kind &&
        (entry.kind == RankPolicy::Kind::GavishDonoho || entry.estimator == policy.estimator))
    {
      return &entry;
    }
  }
  return nullptr;
}

} // namespace

const char *
NoiseRankName(const RankPolicy & policy)
{
  const NoiseRankEntry * entry = FindNoiseRank(policy);
  return entry != nullptr ? entry->name : "";
}

const char *
NoiseRankDescription(const RankPolicy & policy)
{
  const NoiseRankEntry * entry = FindNoiseRank(policy);
  return entry != nullptr ? entry->description : "";
}

bool
ParseNoiseRank(const std::string & name, RankPolicy & policy)
{
  for (const NoiseRankEntry & entry : kNoiseRanks)
  {
    if (name == entry.name)
    {
      policy = entry.kind == RankPolicy::Kind::GavishDonoho ? RankPolicy::GavishDonoho()
                                                            : RankPolicy::MarchenkoPastur(entry.estimator);
      return true;
    }
  }
  return false;
}

std::string
NoiseRankNames()
{
  std::string list;
  const std::size_t count = sizeof(kNoiseRanks) / sizeof(kNoiseRanks[0]);
  for (std::size_t i = 0; i < count; ++i)
  {
    list += (i == 0 ? "" : (i + 1 == count ? " or " : ", ")) + std::string(kNoiseRanks[i].name);
  }
  return list;
}

const char *
ToString(Backend backend)
{
  return kBackends.Find(backend, kBackends.displayNames);
}

const char *
ToString(Solver solver)
{
  return kSolvers.Find(solver, kSolvers.displayNames);
}

const char *
Name(Backend backend)
{
  return kBackends.Find(backend, kBackends.names);
}

const char *
Name(Solver solver)
{
  return kSolvers.Find(solver, kSolvers.names);
}

bool
ParseName(const std::string & name, Backend & value)
{
  return kBackends.Parse(name, value);
}

bool
ParseName(const std::string & name, Solver & value)
{
  return kSolvers.Parse(name, value);
}

std::string
BackendNames()
{
  return kBackends.List();
}

std::string
SolverNames()
{
  return kSolvers.List();
}

std::string
PolicyProblem(const RankPolicy & policy, Solver solver)
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
  else if (policy.kind == RankPolicy::Kind::GavishDonoho &&
           !(std::isfinite(policy.noiseSigma) && policy.noiseSigma >= 0.0))
  {
    problem << "noise sigma must be finite and >= 0 (0: estimate it), got " << policy.noiseSigma;
  }
  else if (policy.kind == RankPolicy::Kind::MarchenkoPastur &&
           policy.estimator != MarchenkoPasturEstimator::Veraart2016 &&
           policy.estimator != MarchenkoPasturEstimator::CorderoGrande2019)
  {
    problem << "unknown Marchenko-Pastur estimator " << static_cast<int>(policy.estimator);
  }
  else if (policy.kind != RankPolicy::Kind::FixedRank && policy.kind != RankPolicy::Kind::EnergyFraction &&
           policy.kind != RankPolicy::Kind::GavishDonoho && policy.kind != RankPolicy::Kind::MarchenkoPastur)
  {
    problem << "unknown rank policy " << static_cast<int>(policy.kind);
  }
  else if (solver == Solver::Subspace && policy.kind != RankPolicy::Kind::FixedRank)
  {
    problem << "the subspace solver needs a fixed rank, since only a fixed rank can be chosen from the leading "
               "singular values; use the exact or auto solver";
  }
  return problem.str();
}

} // namespace svdlr
