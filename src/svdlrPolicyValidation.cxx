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
#include "svdlrPolicyValidation.h"

#include "svdlr/Names.h"

#include <cmath>
#include <sstream>
#include <string>

namespace svdlr
{
namespace detail
{

namespace
{

[[noreturn]] void
ThrowInvalid(const std::string & message)
{
  throw Error(ErrorCode::InvalidArgument, "svdlr: " + message);
}

} // namespace

void
ValidateRankPolicy(const RankPolicy & policy)
{
  const std::string problem = PolicyProblem(policy, Solver::Exact); // the rules every layer shares (svdlr/Names.h)
  if (!problem.empty())
  {
    ThrowInvalid(problem);
  }
  if (policy.kind == RankPolicy::Kind::GavishDonoho && !(std::isfinite(policy.noiseSigma) && policy.noiseSigma >= 0.0))
  {
    std::ostringstream msg;
    msg << "Gavish-Donoho noise sigma must be finite and >= 0 (0: estimate it), got " << policy.noiseSigma;
    ThrowInvalid(msg.str());
  }
  if (policy.kind == RankPolicy::Kind::MarchenkoPastur &&
      policy.estimator != MarchenkoPasturEstimator::Veraart2016 &&
      policy.estimator != MarchenkoPasturEstimator::CorderoGrande2019)
  {
    ThrowInvalid("unknown Marchenko-Pastur estimator " + std::to_string(static_cast<int>(policy.estimator)));
  }
  if (policy.kind != RankPolicy::Kind::FixedRank && policy.kind != RankPolicy::Kind::EnergyFraction &&
      policy.kind != RankPolicy::Kind::GavishDonoho && policy.kind != RankPolicy::Kind::MarchenkoPastur)
  {
    ThrowInvalid("unknown rank policy " + std::to_string(static_cast<int>(policy.kind)));
  }
}

} // namespace detail
} // namespace svdlr
