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

#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

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

} // namespace

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
  const std::string policyProblem = RankPolicyProblem(policy);
  if (!policyProblem.empty())
  {
    return policyProblem;
  }
  if (solver == Solver::Subspace && policy.kind != RankPolicy::Kind::FixedRank)
  {
    return "the subspace solver needs a fixed rank, since only a fixed rank can be chosen from the leading "
           "singular values; use the exact or auto solver";
  }
  return "";
}

bool
ParseDeviceMemoryLimit(const std::string & text, std::size_t & bytes)
{
  if (text == kNoDeviceMemoryLimitName)
  {
    bytes = kNoDeviceMemoryLimit;
    return true;
  }
  const std::size_t parsed = ParseByteSize(text);
  if (parsed > 0)
  {
    bytes = parsed;
  }
  return parsed > 0;
}

std::size_t
ParseByteSize(const std::string & text)
{
  // The number: digits with at most one decimal point, at least one digit.
  std::size_t i = 0;
  std::size_t digits = 0;
  bool        point = false;
  for (; i < text.size(); ++i)
  {
    const char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c)))
    {
      ++digits;
    }
    else if (c == '.' && !point)
    {
      point = true;
    }
    else
    {
      break;
    }
  }
  if (digits == 0)
  {
    return 0;
  }
  const double number = std::stod(text.substr(0, i));
  // The unit: nothing, or one of K M G T, then nothing, "B" or "iB" (any case).
  std::string unit = text.substr(i);
  for (char & c : unit)
  {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  int power = 0;
  if (!unit.empty())
  {
    const std::string letters = "kmgt";
    const std::size_t at = letters.find(unit[0]);
    const std::string rest = unit.substr(1);
    if (at == std::string::npos || !(rest.empty() || rest == "b" || rest == "ib"))
    {
      return 0;
    }
    power = static_cast<int>(at) + 1;
  }
  const double bytes = std::floor(number * std::pow(1024.0, power));
  // 2^64 is exactly representable; anything at or above it does not fit.
  if (!(bytes >= 1.0) || bytes >= 18446744073709551616.0 ||
      bytes > static_cast<double>(std::numeric_limits<std::size_t>::max()))
  {
    return 0;
  }
  return static_cast<std::size_t>(bytes);
}

const char *
ByteSizeSyntax()
{
  return "a number of bytes, optionally with K, M, G or T (powers of 1024), e.g. 8G, 8GiB, 1.5G, 512M";
}

} // namespace svdlr
