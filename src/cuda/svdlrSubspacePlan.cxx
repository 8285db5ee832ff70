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
#include "svdlrCudaPipeline.h"

#include <algorithm>
#include <string>

namespace svdlr
{
namespace detail
{
namespace
{

// Oversampling: the block holds at least 16 and at least k vectors beyond the rank. Subspace iteration
// converges like (sigma_{w+1} / sigma_k)^(2 q) on the Gram matrix, so a wide block buys accuracy for few
// iterations; products with the Gram matrix cost about the same up to w ~ 100 (bound by reading it).
constexpr std::int64_t kMinOversampling = 16;

// Products with the Gram matrix before the Rayleigh-Ritz step, chosen from the sweep in docs/performance.md:
// on MRI-like data whose rank k falls in the noise plateau (W1-W3) the optimality ratio's excess shrinks by
// about 2-2.5x per iteration and needs ~10-13 to stay below 1e-4 with margin; real MRI (Colin27) meets the
// bound after 4. A batch pays little per iteration (a product with the Gram matrix and a w x w kernel).
constexpr int kDefaultIterations = 12;

} // namespace

SubspacePlan
PlanSubspace(const Options & options, std::int64_t rows, std::int64_t cols, std::size_t count, bool float64Input)
{
  const bool fixedRank = options.policy.kind == RankPolicy::Kind::FixedRank;
  if (options.solver == Solver::Exact || (options.solver == Solver::Auto && (float64Input || !fixedRank)))
  {
    return {};
  }
  const std::int64_t n = std::min(rows, cols);
  const std::int64_t k = std::min<std::int64_t>(static_cast<std::int64_t>(options.policy.rank), n);
  if (options.solver == Solver::Subspace && (!fixedRank || k >= kMaxSubspaceWidth))
  {
    throw Error(ErrorCode::InvalidArgument,
                fixedRank ? "svdlr: the subspace solver keeps ranks below " + std::to_string(kMaxSubspaceWidth) +
                              ", got " + std::to_string(k) + "; use Solver::Exact or Solver::Auto"
                          : std::string("svdlr: the subspace solver needs a fixed rank"));
  }

  SubspacePlan plan;
  plan.width = std::min({ std::max(2 * k, k + kMinOversampling), n, kMaxSubspaceWidth });
  plan.iterations = kDefaultIterations;
  if (options.solver == Solver::Auto &&
      (!(k < plan.width && plan.width < n) || (count < kMinSubspaceBatch && n < kMinSubspaceSide)))
  {
    return {}; // the block would be the whole space, or too few matrices to fill the GPU
  }
  return plan;
}

} // namespace detail
} // namespace svdlr
