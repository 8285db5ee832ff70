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
#ifndef svdlr_WarpReflector_cuh
#define svdlr_WarpReflector_cuh

// What the small eigen-solver's tridiagonalisation kernels share: a warp sum, a Householder reflector formed by one
// warp, and the stores of their results.

#include <cstdint>

namespace svdlr
{
namespace detail
{

/** The sum of a double over the 32 lanes of a warp, in every lane (the same bits in each: a butterfly). */
__device__ __forceinline__ double
WarpSum(double value)
{
  for (int offset = 16; offset > 0; offset /= 2)
  {
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  }
  return value;
}

/** H = I - tau v v^T with v = (1, x(1:) * scale), which maps x = (alpha, x(1:)) to (beta, 0, ...). */
struct Reflector
{
  double beta;
  double tau;
  double scale;
};

/** LAPACK's dlarfg for the column x of `length` elements, x(i) = at(i), formed by one warp: every lane returns the
 * same bits, and so does every warp that forms it from the same x. tau = 0 (H = I) when x(1:) is zero. */
template <typename At>
__device__ __forceinline__ Reflector
WarpReflector(const At & at, int length, int lane)
{
  const double alpha = at(0);
  double       partial = 0.0;
  for (int i = 1 + lane; i < length; i += 32)
  {
    const double x = at(i);
    partial += x * x;
  }
  const double tail = WarpSum(partial);
  Reflector    h{ alpha, 0.0, 0.0 };
  if (tail > 0.0)
  {
    h.beta = -copysign(sqrt(alpha * alpha + tail), alpha);
    h.tau = (h.beta - alpha) / h.beta;
    h.scale = 1.0 / (alpha - h.beta);
  }
  return h;
}

/** The end of a stage-1 kernel, by the block's threads: T's diagonal and off-diagonal and the last two (zero) tau
 * into the interleaved outputs. at(i, l): element (i, l), i >= l, of the reduced matrix. */
template <typename At>
__device__ __forceinline__ void
StoreTridiagonal(const At & at, int n, std::int64_t count, std::int64_t b, double * diagonal, double * offDiagonal,
                 double * tau)
{
  for (int i = threadIdx.x; i < n; i += blockDim.x)
  {
    diagonal[i * count + b] = at(i, i);
    if (i >= n - 2)
    {
      offDiagonal[i * count + b] = i == n - 2 ? at(n - 1, n - 2) : 0.0;
      tau[i * count + b] = 0.0;
    }
  }
}

/** The reflectors v_j(j + 2 ..) back into column j of the caller's matrix (column-major, side n), one warp a column,
 * for stage 4. */
template <typename At>
__device__ __forceinline__ void
StoreReflectors(const At & at, int n, double * global)
{
  const int lane = threadIdx.x % 32;
  const int warps = blockDim.x / 32;
  for (int col = threadIdx.x / 32; col < n - 2; col += warps)
  {
    for (int row = col + 2 + lane; row < n; row += 32)
    {
      global[row + static_cast<std::int64_t>(n) * col] = at(row, col);
    }
  }
}

} // namespace detail
} // namespace svdlr

#endif
