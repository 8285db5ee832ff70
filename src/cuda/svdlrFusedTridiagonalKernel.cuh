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
#ifndef svdlr_FusedTridiagonalKernel_cuh
#define svdlr_FusedTridiagonalKernel_cuh

// Stage 1 of the small eigen-solver (svdlrSmallEigenSolver.cu), TridiagonalKernel::SharedFused: the rank-2 update
// of step j and the product A v of step j + 1 in one pass over the trailing matrix, so that each element is loaded
// and stored once a step instead of being loaded twice (the product, then the update) with v and p reloaded beside
// it; two barriers a step instead of three. Included by svdlrSmallEigenSolver.cu only.

#include "svdlrWarpReflector.cuh"

#include <cstddef>
#include <cstdint>

namespace svdlr
{
namespace detail
{

/** x[l / 32] of lane l % 32, in every lane (l the same in every lane: a warp-uniform register choice, then a shuffle).
 * The choice is a chain of selp instructions in inline PTX: written in C++, the compiler turns it into x[l / 32],
 * which puts x in local memory. */
template <int kRows>
__device__ __forceinline__ double
FromOwningLane(const double (&x)[kRows], int l)
{
  const int r = l >> 5;
  double    pick = x[0];
#pragma unroll
  for (int q = 1; q < kRows; ++q)
  {
    asm("{\n\t.reg .pred p;\n\tsetp.eq.s32 p, %2, %3;\n\tselp.f64 %0, %1, %0, p;\n\t}"
        : "+d"(pick)
        : "d"(x[q]), "r"(r), "r"(q));
  }
  return __shfl_sync(0xffffffffu, pick, l & 31);
}

/** One block per matrix, the whole matrix (both triangles) in shared memory, leading dimension n; each warp owns a
 * set of columns and each lane the rows lane + 32 r (r < kRows, n <= 32 kRows), so that every warp holds all of
 * v and w = p - K v for the rows in registers. Step j (reflector H_j = I - tau_j v_j v_j^T, as LAPACK's dsytd2):
 *  1. every warp sums the warps' partial products into p = tau_j A22 v_j for its rows, reduces K = tau_j/2 p.v and
 *     forms w (no barrier: each warp does it for itself);
 *  2. warp 0 updates column j + 1 (A -= v w^T + w v^T) and forms reflector j + 1 from it; barrier;
 *  3. every warp updates its columns l >= j + 2 and, from each updated element, adds A(i, l) v_{j+1}(l) to its
 *     partial product for step j + 1; the partial products go to shared memory; barrier.
 * Rows j + 1 of columns past j + 1 (the upper triangle's copy of column j + 1) are left stale: nothing reads them
 * again. v is double-buffered by the parity of j, so that warp 0 can form the next reflector while the others still
 * read the current one. Outputs as HouseholderTridiagonalKernel's. */
template <int kRows, int kThreads>
__global__ void
__launch_bounds__(kThreads)
  FusedTridiagonalKernel(double * matrices, int n, std::int64_t count, double * diagonal, double * offDiagonal,
                         double * tau)
{
  static_assert(kThreads % 32 == 0 && kThreads >= 64, "whole warps, at least two");
  constexpr int      kWarps = kThreads / 32;
  extern __shared__ double shared[];
  double *           a = shared;                       // (n, n)
  double *           reflectors = a + n * n;           // (2, n): v_j of even and odd j, by absolute row
  double *           partial = reflectors + 2 * n;     // (kWarps, n): each warp's share of A22 v
  double *           taus = partial + kWarps * n;      // (2): tau_j by the parity of j
  const std::int64_t b = blockIdx.x;
  const int          tid = threadIdx.x;
  const int          lane = tid % 32;
  const int          warp = tid / 32;
  double *           global = matrices + b * static_cast<std::int64_t>(n) * n;

  for (int col = warp; col < n; col += kWarps)
  {
    for (int row = lane; row < n; row += 32)
    {
      a[row + n * col] = global[row + static_cast<std::int64_t>(n) * col];
    }
  }
  __syncthreads();

  // Warp 0: the reflector that zeroes column s below row s + 1; v(s + 2 ..) stays in the column (stage 4 reads it).
  const auto formReflector = [&](int s) {
    const Reflector h = WarpReflector([&](int i) { return a[s + 1 + i + n * s]; }, n - s - 1, lane);
    double *        v = reflectors + (s % 2) * n;
    for (int i = s + 2 + lane; i < n; i += 32)
    {
      const double x = a[i + n * s] * h.scale;
      a[i + n * s] = x;
      v[i] = x;
    }
    if (lane == 0)
    {
      taus[s % 2] = h.tau;
      offDiagonal[s * count + b] = h.beta;
      tau[s * count + b] = h.tau;
    }
  };
  // v_s(l) for l >= s + 1.
  const auto reflectorAt = [&](int s, int l) { return l == s + 1 ? 1.0 : reflectors[(s % 2) * n + l]; };

  if (n >= 3)
  {
    if (warp == 0)
    {
      formReflector(0);
    }
    __syncthreads();
    double acc[kRows] = {};
    for (int l = 1 + warp; l < n; l += kWarps)
    {
      const double vl = reflectorAt(0, l);
#pragma unroll
      for (int r = 0; r < kRows; ++r)
      {
        const int i = lane + 32 * r;
        if (i >= 1 && i < n)
        {
          acc[r] += a[i + n * l] * vl;
        }
      }
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r)
    {
      const int i = lane + 32 * r;
      if (i >= 1 && i < n)
      {
        partial[warp * n + i] = acc[r];
      }
    }
    __syncthreads();
  }

  for (int j = 0; j < n - 2; ++j)
  {
    // 1. p, K and w for this warp's rows (rows <= j hold zeros).
    const double t = taus[j % 2];
    double       v[kRows];
    double       w[kRows];
    double       dot = 0.0;
#pragma unroll
    for (int r = 0; r < kRows; ++r)
    {
      const int i = lane + 32 * r;
      v[r] = 0.0;
      w[r] = 0.0;
      if (i > j && i < n)
      {
        double sum = 0.0;
#pragma unroll
        for (int q = 0; q < kWarps; ++q)
        {
          sum += partial[q * n + i];
        }
        v[r] = reflectorAt(j, i);
        w[r] = t * sum;
        dot += w[r] * v[r];
      }
    }
    const double k = 0.5 * t * WarpSum(dot);
#pragma unroll
    for (int r = 0; r < kRows; ++r)
    {
      w[r] -= k * v[r];
    }

    // 2. Column j + 1 (v_j(j + 1) = 1), then the next reflector from it.
    const bool next = j + 1 < n - 2;
    if (warp == 0)
    {
      const int    l = j + 1;
      const double wl = FromOwningLane(w, l);
#pragma unroll
      for (int r = 0; r < kRows; ++r)
      {
        const int i = lane + 32 * r;
        if (i >= l && i < n)
        {
          a[i + n * l] -= v[r] * wl + w[r];
        }
      }
      __syncwarp();
      if (next)
      {
        formReflector(j + 1);
      }
    }
    __syncthreads();

    // 3. The rest of the trailing matrix, and the next step's product from the updated elements.
    double acc[kRows] = {};
    // Two columns an iteration: their loads and shuffles in flight together.
#pragma unroll 2
    for (int l = j + 2 + warp; l < n; l += kWarps)
    {
      const double vl = FromOwningLane(v, l);
      const double wl = FromOwningLane(w, l);
      const double nextVl = next ? reflectorAt(j + 1, l) : 0.0;
      double *     column = a + n * l;
#pragma unroll
      for (int r = 0; r < kRows; ++r)
      {
        const int i = lane + 32 * r;
        if (i >= j + 2 && i < n)
        {
          const double x = column[i] - (v[r] * wl + w[r] * vl);
          column[i] = x;
          acc[r] += x * nextVl;
        }
      }
    }
    if (next)
    {
#pragma unroll
      for (int r = 0; r < kRows; ++r)
      {
        const int i = lane + 32 * r;
        if (i >= j + 2 && i < n)
        {
          partial[warp * n + i] = acc[r];
        }
      }
    }
    __syncthreads();
  }

  for (int i = tid; i < n; i += kThreads)
  {
    diagonal[i * count + b] = a[i + n * i];
    if (i >= n - 2)
    {
      offDiagonal[i * count + b] = i == n - 2 ? a[n - 1 + n * (n - 2)] : 0.0;
      tau[i * count + b] = 0.0;
    }
  }
  for (int col = warp; col < n - 2; col += kWarps)
  {
    for (int row = col + 2 + lane; row < n; row += 32)
    {
      global[row + static_cast<std::int64_t>(n) * col] = a[row + n * col];
    }
  }
}

/** The shared memory FusedTridiagonalKernel takes for side n with kWarps warps. */
constexpr std::size_t
FusedTridiagonalSharedBytes(int n, int warps)
{
  return (static_cast<std::size_t>(n) * n + static_cast<std::size_t>(2 + warps) * n + 2) * sizeof(double);
}

} // namespace detail
} // namespace svdlr

#endif
