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

// Stage 1 of the small eigen-solver (svdlrSmallEigenSolver.cu) while the matrix fits in shared memory: the rank-2
// update of step j and the product A v of step j + 1 in one pass over the trailing matrix, so that each element is
// loaded and stored once a step instead of being loaded twice (the product, then the update) with v and p reloaded
// beside it; two barriers a step instead of three. Included by svdlrSmallEigenSolver.cu only.

#include <cstddef>
#include <cstdint>

namespace svdlr
{
namespace detail
{

// What the small eigen-solver's tridiagonalisation kernels share: a warp sum, a Householder reflector formed by one
// warp, and the stores of their results.

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

/** The sum over the 32 lanes of each of x[0..kCount), kCount a power of two up to 32, by recursive halving
 * (kCount - 1 + 5 - log2(kCount) shuffles instead of 5 kCount): returns the sum of x[c] in the lanes whose
 * (lane >> (5 - log2(kCount))) is c. */
template <int kCount>
__device__ __forceinline__ double
WarpSumsTransposed(double (&x)[kCount], int lane)
{
  static_assert(kCount >= 1 && kCount <= 32 && (kCount & (kCount - 1)) == 0, "a power of two up to 32");
  int count = kCount;
#pragma unroll
  for (int width = 16; width >= 1; width /= 2)
  {
    if (count > 1)
    {
      const int  half = count / 2;
      const bool upper = (lane & width) != 0;
#pragma unroll
      for (int k = 0; k < kCount / 2; ++k)
      {
        if (k < half)
        {
          const double give = upper ? x[k] : x[k + half];
          const double keep = upper ? x[k + half] : x[k];
          x[k] = keep + __shfl_xor_sync(0xffffffffu, give, width);
        }
      }
      count = half;
    }
    else
    {
      x[0] += __shfl_xor_sync(0xffffffffu, x[0], width);
    }
  }
  return x[0];
}

/** log2 of the power of two kCount. */
__host__ __device__ constexpr int
Log2(int count)
{
  return count <= 1 ? 0 : 1 + Log2(count / 2);
}

__host__ __device__ constexpr int
PowerOfTwoAtLeast(int count)
{
  return count <= 1 ? 1 : 2 * PowerOfTwoAtLeast((count + 1) / 2);
}

/** One block per matrix, the matrix in shared memory (kPacked = false: both triangles, leading dimension n;
 * kPacked = true: the lower triangle packed column by column, (i, l) at l (2n - l - 1) / 2 + i, so that n = 200
 * fits). Each warp owns a set of columns, l = first + warp + kWarps c, and each lane the rows lane + 32 r
 * (r < kRows, n <= 32 kRows), so that every warp holds all of v and w = p - K v in registers. Step j (reflector
 * H_j = I - tau_j v_j v_j^T, as LAPACK's dsytd2):
 *  1. every warp sums the warps' partial products into p = tau_j A22 v_j for its rows, reduces K = tau_j/2 p.v and
 *     forms w (no barrier: each warp does it for itself);
 *  2. warp 0 updates column j + 1 (A -= v w^T + w v^T) and forms reflector j + 1 from it; barrier;
 *  3. every warp updates its columns l >= j + 2 and, from each updated element, adds to its partial product for
 *     step j + 1: A(i, l) v_{j+1}(l) to row i, and with the lower triangle only also A(i, l) v_{j+1}(i) to row l
 *     (summed over the lanes for all of the warp's columns at once: WarpSumsTransposed); the partial products go
 *     to shared memory; barrier.
 * Rows j + 1 of columns past j + 1 (the upper triangle's copy of column j + 1) are left stale: nothing reads them
 * again. v is double-buffered by the parity of j, so that warp 0 can form the next reflector while the others still
 * read the current one. Outputs as HouseholderTridiagonalKernel's. */
template <int kRows, int kThreads, bool kPacked>
__global__ void
__launch_bounds__(kThreads)
  FusedTridiagonalKernel(double * matrices, int n, std::int64_t count, double * diagonal, double * offDiagonal,
                         double * tau)
{
  static_assert(kThreads % 32 == 0 && kThreads >= 64, "whole warps, at least two");
  constexpr int      kWarps = kThreads / 32;
  constexpr int      kColumnSlots = (32 * kRows + kWarps - 1) / kWarps; // a warp's columns at most
  constexpr int      kColumnSums = kPacked ? PowerOfTwoAtLeast(kColumnSlots) : 1;
  static_assert(kColumnSums <= 32, "one column sum a lane at least");
  extern __shared__ double shared[];
  const int          stored = kPacked ? n * (n + 1) / 2 : n * n;
  double *           a = shared;                       // the matrix
  double *           reflectors = a + stored;          // (2, n): v_j of even and odd j, by absolute row
  double *           partial = reflectors + 2 * n;     // (kWarps, n): each warp's share of A22 v
  double *           taus = partial + kWarps * n;      // (2): tau_j by the parity of j
  const std::int64_t b = blockIdx.x;
  const int          tid = threadIdx.x;
  const int          lane = tid % 32;
  const int          warp = tid / 32;
  double *           global = matrices + b * static_cast<std::int64_t>(n) * n;
  const auto         at = [=](int i, int l) -> double & { return a[kPacked ? l * (2 * n - l - 1) / 2 + i : i + n * l]; };

  for (int col = warp; col < n; col += kWarps)
  {
    for (int row = (kPacked ? col : 0) + lane; row < n; row += 32)
    {
      at(row, col) = global[row + static_cast<std::int64_t>(n) * col];
    }
  }
  __syncthreads();

  // Warp 0: the reflector that zeroes column s below row s + 1; v(s + 2 ..) stays in the column (stage 4 reads it).
  const auto formReflector = [&](int s) {
    const Reflector h = WarpReflector([&](int i) { return at(s + 1 + i, s); }, n - s - 1, lane);
    double *        v = reflectors + (s % 2) * n;
    for (int i = s + 2 + lane; i < n; i += 32)
    {
      const double x = at(i, s) * h.scale;
      at(i, s) = x;
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

  double v[kRows] = {};
  double w[kRows] = {};
  // Phase 3 (and, with v = w = 0, the first product): the rank-2 update of rows and columns >= s + 1, then, when
  // `accumulate`, this warp's share of A22 v_s into partial.
  const auto sweep = [&](int s, bool accumulate) {
    const int first = s + 1;
    double    vs[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r)
    {
      const int i = lane + 32 * r;
      vs[r] = accumulate && i >= first && i < n ? reflectorAt(s, i) : 0.0;
    }
    double rowSums[kRows] = {};
    double columnSums[kColumnSums] = {};
#pragma unroll
    for (int c = 0; c < kColumnSlots; ++c)
    {
      const int l = first + warp + kWarps * c;
      if (l >= n)
      {
        break;
      }
      const double vl = FromOwningLane(v, l);
      const double wl = FromOwningLane(w, l);
      const double vsl = accumulate ? reflectorAt(s, l) : 0.0;
#pragma unroll
      for (int r = 0; r < kRows; ++r)
      {
        const int i = lane + 32 * r;
        if (i >= (kPacked ? l : first) && i < n)
        {
          double &     element = at(i, l);
          const double x = element - (v[r] * wl + w[r] * vl);
          element = x;
          rowSums[r] += x * vsl;
          if constexpr (kPacked)
          {
            if (i > l)
            {
              columnSums[c] += x * vs[r];
            }
          }
        }
      }
    }
    if (!accumulate)
    {
      return;
    }
    double columnSum = 0.0;
    if constexpr (kPacked)
    {
      columnSum = WarpSumsTransposed(columnSums, lane);
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r)
    {
      const int i = lane + 32 * r;
      if (i >= first && i < n)
      {
        partial[warp * n + i] = rowSums[r];
      }
    }
    if constexpr (kPacked)
    {
      // The lanes whose low bits are zero hold the sum of column slot c.
      constexpr int kShift = 5 - Log2(kColumnSums);
      __syncwarp();
      const int c = lane >> kShift;
      const int l = first + warp + kWarps * c;
      if ((lane & ((1 << kShift) - 1)) == 0 && c < kColumnSlots && l < n)
      {
        partial[warp * n + l] += columnSum;
      }
    }
  };

  if (n >= 3)
  {
    if (warp == 0)
    {
      formReflector(0);
    }
    __syncthreads();
    sweep(0, true);
    __syncthreads();
  }

  for (int j = 0; j < n - 2; ++j)
  {
    // 1. p, K and w for this warp's rows (rows <= j hold zeros).
    const double t = taus[j % 2];
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
          at(i, l) -= v[r] * wl + w[r];
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
    sweep(j + 1, next);
    __syncthreads();
  }

  StoreTridiagonal(at, n, count, b, diagonal, offDiagonal, tau);
  StoreReflectors(at, n, global);
}

/** The shared memory FusedTridiagonalKernel takes for side n with `warps` warps. */
constexpr std::size_t
FusedTridiagonalSharedBytes(int n, int warps, bool packed)
{
  const std::size_t side = static_cast<std::size_t>(n);
  return ((packed ? side * (side + 1) / 2 : side * side) + (2 + static_cast<std::size_t>(warps)) * side + 2) *
         sizeof(double);
}

} // namespace detail
} // namespace svdlr

#endif
