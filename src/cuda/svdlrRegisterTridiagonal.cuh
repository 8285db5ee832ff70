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
#ifndef svdlr_RegisterTridiagonal_cuh
#define svdlr_RegisterTridiagonal_cuh

// Stage 1 of the small eigen-solver (svdlrSmallEigenSolver.cu) for 3 <= n <= kColumns + 1, the matrix in
// registers. The shared-memory kernels spend most of their time on shared-memory traffic (each element of the
// trailing matrix is loaded twice and stored once per Householder step, and v and w are reloaded per element) and
// on the barriers of one-warp phases. Here each column of the trailing matrix A(1:n, 1:n) stays in the registers of
// two threads for the whole reduction, so a step moves only v, w and one column through shared memory, and has two barriers.

#include "svdlrWarpReflector.cuh"

#include <cstdint>

namespace svdlr
{
namespace detail
{

/** A = Q T Q^T by n - 2 Householder reflections, the same ones as the shared-memory kernel's (LAPACK's dsytd2 and
 * dlarfg, both triangles kept), with the same outputs: T's diagonal and off-diagonal and the reflectors' tau,
 * interleaved (element i of matrix b at [i * count + b]), and v_j below row j + 1 in column j of the matrix.
 * One block of kColumns * kSplit threads per matrix, n - 1 <= kColumns. In the trailing matrix's indices (row and
 * column r of A at r - 1), column c is held by the kSplit adjacent threads c * kSplit + h, thread h holding rows
 * k = h + kSplit i in `mine[i]` (interleaved, so the rows still active stay spread over the threads). Every loop
 * over i is unrolled with the bounds as predicates, so `mine` is never indexed at run time and stays in registers.
 * Step j:
 *   1. every warp forms the reflector v from the shared `column` (rows j + 1 .. n - 1 of column j) by the same
 *      operations in the same order, so each warp holds the same v, in its own shared array, without a barrier;
 *   2. the threads of column c >= j compute p_c = tau (A22 v)_c, and the block sums p.v; barrier;
 *   3. each warp forms w = p - (tau/2)(p.v) v, the threads of column c >= j apply A22 -= v w^T + w v^T to it, and
 *      those of column j, now final, publish it for step j + 1 in `column`; barrier. */
template <int kColumns, int kSplit>
__global__ void
__launch_bounds__(kColumns * kSplit, 3) // three blocks an SM: 168 registers at (64, 2), no spills (205 unbounded)
  RegisterTridiagonalKernel(double * matrices, int n, std::int64_t count, double * diagonal, double * offDiagonal,
                            double * tau)
{
  constexpr int kThreads = kColumns * kSplit;
  constexpr int kRows = kColumns / kSplit; // rows per thread
  static_assert(kThreads % 32 == 0 && kColumns % kSplit == 0 && 32 % kSplit == 0, "whole warps, whole columns");
  constexpr int      kWarps = kThreads / 32;
  __shared__ double  column[kColumns];            // the next reflector's column: row r of A at [r - 1]
  __shared__ double  product[kColumns];           // p at [c]
  __shared__ double  warpDot[kWarps];             // each warp's share of p.v
  __shared__ double2 reflector[kWarps][kColumns]; // each warp's own {v, w} at [k]
  const std::int64_t b = blockIdx.x;
  const int          t = threadIdx.x;
  const int          lane = t % 32;
  const int          warp = t / 32;
  const int          c = t / kSplit; // this thread's column
  const int          h = t % kSplit; // and its share of the rows
  const int          s = n - 1;      // the trailing matrix's side
  const bool         holdsColumn = c < s;
  double *           global = matrices + b * static_cast<std::int64_t>(n) * n;

  // Column c + 1 read as row c + 1 (A is symmetric), so that the lanes of a warp read runs of addresses.
  double mine[kRows];
#pragma unroll
  for (int i = 0; i < kRows; ++i)
  {
    const int k = h + kSplit * i;
    mine[i] = holdsColumn && k < s ? global[(c + 1) + static_cast<std::int64_t>(n) * (k + 1)] : 0.0;
  }
  if (t < s)
  {
    column[t] = global[t + 1];
  }
  if (t == 0)
  {
    diagonal[b] = global[0];
  }
  __syncthreads();

  double2 * vw = reflector[warp];
  for (int j = 0; j < n - 2; ++j)
  {
    // 1. The reflector that zeroes rows j + 2 .. n - 1 of column j (dlarfg), as the shared-memory kernel forms it.
    const Reflector house = WarpReflector([&](int i) { return column[j + i]; }, s - j, lane);
    for (int k = j + lane; k < s; k += 32)
    {
      const double v = k == j ? 1.0 : column[k] * house.scale;
      vw[k] = make_double2(v, 0.0);
      if (warp == 0 && k > j)
      {
        global[(k + 1) + static_cast<std::int64_t>(n) * j] = v; // stage 4 reads v_j here
      }
    }
    if (t == 0)
    {
      offDiagonal[j * count + b] = house.beta;
      tau[j * count + b] = house.tau;
    }
    __syncwarp();

    // 2. p_c = tau (A22 v)_c, summed over the column's kSplit threads; then p.v, each column counted once.
    const bool active = c >= j && holdsColumn;
    double     sum = 0.0;
    if (active)
    {
      double partialSums[2] = { 0.0, 0.0 }; // two chains of dependent additions, half as long
#pragma unroll
      for (int i = 0; i < kRows; ++i)
      {
        const int k = h + kSplit * i;
        if (k >= j && k < s)
        {
          partialSums[i % 2] += mine[i] * vw[k].x;
        }
      }
      sum = partialSums[0] + partialSums[1];
    }
#pragma unroll
    for (int offset = kSplit / 2; offset > 0; offset /= 2)
    {
      sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    }
    const double p = house.tau * sum;
    const double vc = active ? vw[c].x : 0.0;
    if (active && h == 0)
    {
      product[c] = p;
    }
    const double dot = WarpSum(h == 0 ? p * vc : 0.0);
    if (lane == 0)
    {
      warpDot[warp] = dot;
    }
    __syncthreads();

    // 3. w = p - K v with K = tau/2 p.v, then the rank-2 update of this thread's rows of its column.
    double pv = 0.0;
#pragma unroll
    for (int other = 0; other < kWarps; ++other)
    {
      pv += warpDot[other];
    }
    const double halfTauPv = 0.5 * house.tau * pv;
    for (int k = j + lane; k < s; k += 32)
    {
      vw[k].y = product[k] - halfTauPv * vw[k].x;
    }
    __syncwarp();
    if (active)
    {
      const double wc = p - halfTauPv * vc;
#pragma unroll
      for (int i = 0; i < kRows; ++i)
      {
        const int k = h + kSplit * i;
        if (k >= j && k < s)
        {
          const double2 q = vw[k];
          mine[i] -= q.x * wc + q.y * vc;
        }
      }
    }
    if (c == j)
    {
      // Column j + 1 is final: its diagonal is T's, and the rows below it make the next reflector.
#pragma unroll
      for (int i = 0; i < kRows; ++i)
      {
        const int k = h + kSplit * i;
        if (k == j)
        {
          diagonal[(j + 1) * count + b] = mine[i];
        }
        else if (k > j && k < s)
        {
          column[k] = mine[i];
        }
      }
    }
    __syncthreads();
  }

  // The last diagonal element and off-diagonal element, which no reflection follows.
  if (c == s - 1)
  {
#pragma unroll
    for (int i = 0; i < kRows; ++i)
    {
      if (h + kSplit * i == s - 1)
      {
        diagonal[(n - 1) * count + b] = mine[i];
      }
    }
  }
  if (t == 0)
  {
    offDiagonal[(n - 2) * count + b] = column[s - 1];
    offDiagonal[(n - 1) * count + b] = 0.0;
    tau[(n - 2) * count + b] = 0.0;
    tau[(n - 1) * count + b] = 0.0;
  }
}

} // namespace detail
} // namespace svdlr

#endif
