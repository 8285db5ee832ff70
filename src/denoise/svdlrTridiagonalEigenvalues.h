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
#ifndef svdlr_TridiagonalEigenvalues_h
#define svdlr_TridiagonalEigenvalues_h

#include <cstddef>

namespace svdlr
{
namespace detail
{

/** The most tridiagonal matrices TridiagonalEigenvalues takes at once: two vectors of four lanes. */
constexpr int kTridiagonalBatch = 8;

/** How many patches the CPU denoiser decomposes together when their Gram matrices are of order `order`: a full batch
 * up to order 128, four past it, where eight patches' buffers per worker would double a long series' host memory for
 * a step that takes a small share of its time (the reduction grows as order³, the sweeps as order²). */
constexpr int
TridiagonalBatchFor(std::size_t order)
{
  return order <= 128 ? kTridiagonalBatch : 4;
}

/** Every eigenvalue of `count` (<= kTridiagonalBatch) symmetric tridiagonal matrices of order n, by the implicit QL
 * algorithm with Wilkinson shifts, interleaved. Matrix k has diagonal d[k] (n) and subdiagonal e[k] (n - 1 values,
 * room for n); on success d[k] holds its eigenvalues in ascending order (e[k] is destroyed) and the result is true.
 * False (some matrix needed more than 60 sweeps for one eigenvalue, which round-off can cause only in pathological
 * cases) leaves d and e undefined: decompose those matrices another way.
 *
 * Why: the QL sweep is a chain of dependent divisions and square roots, so one matrix leaves the core idle most of
 * the time (LAPACK's dsterf takes about 60 us for order 65, as long as the reduction to tridiagonal form). The
 * sweeps of independent matrices run side by side: on a CPU with AVX, one matrix per lane of one or two 4 x double
 * vectors, whose chains the core overlaps. At order 65 on an EPYC core a matrix takes 23 us four at a time and 16.6
 * us eight at a time, against 30 us for four interleaved in scalar code (27 us for eight). The vector lanes do the
 * scalar code's operations in its order (no fused multiply-add), so the eigenvalues are the same to the bit with or
 * without AVX; their accuracy is dsterf's: each within a few ulps of the largest. */
bool
TridiagonalEigenvalues(int n, double * const * d, double * const * e, int count);

} // namespace detail
} // namespace svdlr

#endif
