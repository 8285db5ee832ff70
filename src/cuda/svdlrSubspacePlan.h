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
#ifndef svdlr_SubspacePlan_h
#define svdlr_SubspacePlan_h

// Which solver the CUDA pipeline runs for a request, and with what block: plain host logic, kept apart so
// that it can be read and tested without a GPU.
//
// The subspace solver works on a block of w = k + p vectors (p: oversampling). Its cost is a few products
// of the n x n Gram matrix with the block (bound by reading the Gram matrix, so nearly independent of w
// up to w ~ 100 on the H100) plus work on w x w matrices. Its block is capped at kMaxSubspaceWidth, where
// the w x w float64 matrix of the Cholesky kernel still fits one block's shared memory (227 KB on sm_90).

#include "svdlr/Names.h"
#include "svdlrCudaExport.h"
#include "svdlr/Engine.h"

#include <cstddef>
#include <cstdint>

namespace svdlr
{
namespace detail
{

constexpr std::int64_t kMaxSubspaceWidth = static_cast<std::int64_t>(::svdlr::kMaxSubspaceWidth); // svdlr/Names.h

// The subspace solver's w x w kernels run one block per matrix, so a run of a few small matrices leaves
// the GPU idle while their ~13 sequential steps go by: measured on the H100 for one 256 x 256 slice at
// rank 100 (W4), the exact solver takes 2.7 ms and the subspace solver 4.6-8.6 ms. From 16 matrices on, or
// for sides from 512 on (where the exact n x n eigen-solve grows as n^3), the subspace solver wins.
constexpr std::size_t  kMinSubspaceBatch = 16;
constexpr std::int64_t kMinSubspaceSide = 512;

/** The subspace solver's block and iteration count; width 0 means the exact solver. */
struct SubspacePlan
{
  std::int64_t width{ 0 };      // w: vectors in the block, k < w <= min(n, kMaxSubspaceWidth)
  int          iterations{ 0 }; // products with the Gram matrix before the Rayleigh-Ritz step

  bool
  Used() const
  {
    return width > 0;
  }
};

/** The plan for `options` on rows x cols matrices of float64 (`float64Input`) or float32 data, with
 * k = min(rank, n) and the default block w = min(n, max(2k, k + 16), kMaxSubspaceWidth):
 *  - Solver::Exact: the exact plan;
 *  - Solver::Auto: the subspace plan for float32 data and a fixed rank when k < w < n and the run has
 *    at least kMinSubspaceBatch matrices or n >= kMinSubspaceSide; otherwise exact (float64 data keeps
 *    the exact solver, whose accuracy its caller asked for);
 *  - Solver::Subspace: the subspace plan; Error(InvalidArgument) when the policy is not a fixed rank or
 *    k >= kMaxSubspaceWidth (no room left for oversampling). */
SVDLR_CUDA_EXPORT SubspacePlan
PlanSubspace(const Options & options, std::int64_t rows, std::int64_t cols, std::size_t count, bool float64Input);

} // namespace detail
} // namespace svdlr

#endif
