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
#include "denoise/svdlrPatchKernels.h"

#include <algorithm>
#include <cmath>
#include <limits>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#  include <immintrin.h>
#  define SVDLR_QL_VECTOR_LANES 1 // the sweeps in AVX lanes where the CPU has AVX (the engine is built for x86-64)
#else
#  define SVDLR_QL_VECTOR_LANES 0
#endif

namespace svdlr
{
namespace detail
{

namespace
{

/** One matrix's state between sweeps: eigenvalues below `low` are found; the current sweep runs over
 * [low, high] from high - 1 down to low. */
struct Sweep
{
  int    low{ 0 };
  int    high{ 0 };
  int    iterations{ 0 };
  int    length{ 0 }; // 0: no sweep (done)
  bool   underflow{ false };
  double g{ 0.0 }, s{ 1.0 }, c{ 1.0 }, p{ 0.0 };
};

constexpr double kEpsilon = std::numeric_limits<double>::epsilon();

/** The end of the unreduced block that starts at l: the first m in [l, n - 1) whose e[m] is negligible beside its
 * diagonal neighbours, or n - 1. */
int
BlockEnd(int l, int n, const double * d, const double * e)
{
  int m = l;
  for (; m < n - 1; ++m)
  {
    if (std::fabs(e[m]) <= kEpsilon * (std::fabs(d[m]) + std::fabs(d[m + 1])))
    {
      break;
    }
  }
  return m;
}

#if SVDLR_QL_VECTOR_LANES
/** BlockEnd four elements at a time: the same comparisons, so the same m. A sweep starts with this search, as long
 * as the sweep itself: scalar, it took a third of the eigenvalues' time once the sweeps ran in vector lanes. */
__attribute__((target("avx"))) int
BlockEndAvx(int l, int n, const double * d, const double * e)
{
  const __m256d magnitude = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffff));
  const __m256d epsilon = _mm256_set1_pd(kEpsilon);
  int           m = l;
  for (; m + 4 <= n - 1; m += 4)
  {
    const __m256d off = _mm256_and_pd(_mm256_loadu_pd(e + m), magnitude);
    const __m256d bound = _mm256_mul_pd(
      epsilon, _mm256_add_pd(_mm256_and_pd(_mm256_loadu_pd(d + m), magnitude),
                             _mm256_and_pd(_mm256_loadu_pd(d + m + 1), magnitude)));
    const int negligible = _mm256_movemask_pd(_mm256_cmp_pd(off, bound, _CMP_LE_OQ));
    if (negligible != 0)
    {
      return m + __builtin_ctz(static_cast<unsigned>(negligible));
    }
  }
  return BlockEnd(m, n, d, e);
}
#endif

/** Finds the next unreduced block of matrix (d, e) from sweep.low (its end by `blockEnd`) and sets up its shifted
 * sweep; length 0 when every eigenvalue is found. Returns false past the iteration limit. */
bool
StartSweep(int n, const double * d, const double * e, Sweep & sweep,
           int (*blockEnd)(int, int, const double *, const double *))
{
  sweep.length = 0;
  sweep.underflow = false;
  while (sweep.low < n)
  {
    const int l = sweep.low;
    const int m = blockEnd(l, n, d, e);
    if (m == l)
    {
      ++sweep.low; // d[l] is an eigenvalue
      sweep.iterations = 0;
      continue;
    }
    if (++sweep.iterations > 60)
    {
      return false;
    }
    // Wilkinson's shift from the leading 2 x 2 block, folded into the first rotation as in the QL algorithm.
    const double g = (d[l + 1] - d[l]) / (2.0 * e[l]);
    const double r = std::sqrt(g * g + 1.0);
    sweep.g = d[m] - d[l] + e[l] / (g + std::copysign(r, g));
    sweep.s = 1.0;
    sweep.c = 1.0;
    sweep.p = 0.0;
    sweep.high = m;
    sweep.length = m - l;
    return true;
  }
  return true;
}

/** Step `step` of the sweep `w` of one matrix (dk, ek): rotation i = high - 1 - step. */
inline void
SweepStep(Sweep & w, double * dk, double * ek, int step)
{
  if (step >= w.length || w.underflow)
  {
    return;
  }
  const int    i = w.high - 1 - step;
  const double f = w.s * ek[i];
  const double b = w.c * ek[i];
  double       r = std::sqrt(f * f + w.g * w.g);
  ek[i + 1] = r;
  if (r == 0.0)
  {
    // Both vanished: the block splits here; finish this sweep early, as the QL algorithm does.
    dk[i + 1] -= w.p;
    ek[w.high] = 0.0;
    w.underflow = true;
    return;
  }
  w.s = f / r;
  w.c = w.g / r;
  const double g = dk[i + 1] - w.p;
  r = (dk[i] - g) * w.s + 2.0 * w.c * b;
  w.p = w.s * r;
  dk[i + 1] = g + w.p;
  w.g = w.c * r - b;
}

#if SVDLR_QL_VECTOR_LANES

/** The running rotation (s, c), shift p and g of four sweeps, one per lane. */
struct Lanes
{
  __m256d s, c, p, g;
};

/** SweepStep for four matrices at once (w, d, e: those four), their arithmetic in the lanes of `v`: the same
 * operations in the same order, so each lane rounds as SweepStep does. Idle lanes read and write `idle`. */
__attribute__((target("avx"), always_inline)) inline void
SweepStepFour(Lanes & v, Sweep * w, double * const * d, double * const * e, int step, double (*idle)[2])
{
  double * ei[4];
  double * di[4];
  bool     on[4];
  for (int k = 0; k < 4; ++k)
  {
    on[k] = step < w[k].length && !w[k].underflow;
    const int i = w[k].high - 1 - step;
    ei[k] = on[k] ? e[k] + i : idle[k];
    di[k] = on[k] ? d[k] + i : idle[k];
  }
  const __m256d ev = _mm256_set_pd(ei[3][0], ei[2][0], ei[1][0], ei[0][0]);
  const __m256d di0 = _mm256_set_pd(di[3][0], di[2][0], di[1][0], di[0][0]);
  const __m256d di1 = _mm256_set_pd(di[3][1], di[2][1], di[1][1], di[0][1]);
  const __m256d f = _mm256_mul_pd(v.s, ev);
  const __m256d b = _mm256_mul_pd(v.c, ev);
  const __m256d r = _mm256_sqrt_pd(_mm256_add_pd(_mm256_mul_pd(f, f), _mm256_mul_pd(v.g, v.g)));
  const __m256d s = _mm256_div_pd(f, r);
  const __m256d c = _mm256_div_pd(v.g, r);
  const __m256d g = _mm256_sub_pd(di1, v.p);
  const __m256d r2 = _mm256_add_pd(_mm256_mul_pd(_mm256_sub_pd(di0, g), s),
                                   _mm256_mul_pd(_mm256_mul_pd(_mm256_set1_pd(2.0), c), b));
  const __m256d p = _mm256_mul_pd(s, r2);
  alignas(32) double rs[4], next[4], previousP[4];
  _mm256_store_pd(rs, r);
  _mm256_store_pd(next, _mm256_add_pd(g, p));
  _mm256_store_pd(previousP, v.p);
  bool everyLaneStepped = on[0] && on[1] && on[2] && on[3];
  for (int k = 0; k < 4; ++k)
  {
    if (!on[k])
    {
      continue;
    }
    ei[k][1] = rs[k];
    if (rs[k] == 0.0) // as in SweepStep: the block splits, the sweep ends, the lane keeps its state
    {
      di[k][1] -= previousP[k];
      e[k][w[k].high] = 0.0;
      w[k].underflow = true;
      everyLaneStepped = false;
      continue;
    }
    di[k][1] = next[k];
  }
  const Lanes stepped{ s, c, p, _mm256_sub_pd(_mm256_mul_pd(c, r2), b) };
  if (everyLaneStepped)
  {
    v = stepped;
    return;
  }
  const auto    stepMask = [&](int k) { return on[k] && !w[k].underflow ? -1.0 : 0.0; }; // blendv reads the sign
  const __m256d mask = _mm256_set_pd(stepMask(3), stepMask(2), stepMask(1), stepMask(0));
  v.s = _mm256_blendv_pd(v.s, stepped.s, mask);
  v.c = _mm256_blendv_pd(v.c, stepped.c, mask);
  v.p = _mm256_blendv_pd(v.p, stepped.p, mask);
  v.g = _mm256_blendv_pd(v.g, stepped.g, mask);
}

/** `longest` steps of the sweeps of 4 * Groups matrices, four to a vector; the vectors' chains overlap. */
template <int Groups>
__attribute__((target("avx"))) void
SweepStepsInLanes(Sweep * w, double * const * d, double * const * e, int longest)
{
  Lanes v[Groups];
  for (int q = 0; q < Groups; ++q)
  {
    const Sweep * x = w + 4 * q;
    v[q] = { _mm256_set_pd(x[3].s, x[2].s, x[1].s, x[0].s), _mm256_set_pd(x[3].c, x[2].c, x[1].c, x[0].c),
             _mm256_set_pd(x[3].p, x[2].p, x[1].p, x[0].p), _mm256_set_pd(x[3].g, x[2].g, x[1].g, x[0].g) };
  }
  double idle[4 * Groups][2] = {};
  for (int step = 0; step < longest; ++step)
  {
    for (int q = 0; q < Groups; ++q)
    {
      SweepStepFour(v[q], w + 4 * q, d + 4 * q, e + 4 * q, step, idle + 4 * q);
    }
  }
  for (int q = 0; q < Groups; ++q)
  {
    alignas(32) double s[4], c[4], p[4], g[4];
    _mm256_store_pd(s, v[q].s);
    _mm256_store_pd(c, v[q].c);
    _mm256_store_pd(p, v[q].p);
    _mm256_store_pd(g, v[q].g);
    for (int k = 0; k < 4; ++k)
    {
      w[4 * q + k].s = s[k];
      w[4 * q + k].c = c[k];
      w[4 * q + k].p = p[k];
      w[4 * q + k].g = g[k];
    }
  }
}

bool
CpuHasAvx()
{
  static const bool avx = __builtin_cpu_supports("avx");
  return avx;
}

#endif

} // namespace

bool
TridiagonalEigenvalues(int n, double * const * d, double * const * e, int count)
{
  static_assert(kTridiagonalBatch == 8, "the vector lanes take two groups of four");
  count = std::min(count, kTridiagonalBatch);
  // Matrices past `count` stay idle (length 0): the vector lanes take a whole group of four.
  Sweep    sweeps[kTridiagonalBatch];
  double * dk[kTridiagonalBatch];
  double * ek[kTridiagonalBatch];
  for (int k = 0; k < kTridiagonalBatch; ++k)
  {
    dk[k] = k < count ? d[k] : nullptr;
    ek[k] = k < count ? e[k] : nullptr;
  }
  for (int k = 0; k < count; ++k)
  {
    ek[k][n - 1] = 0.0;
  }
#if SVDLR_QL_VECTOR_LANES
  const bool lanes = CpuHasAvx();
  const auto blockEnd = lanes ? BlockEndAvx : BlockEnd;
#else
  const auto blockEnd = BlockEnd;
#endif
  for (;;)
  {
    int longest = 0;
    for (int k = 0; k < count; ++k)
    {
      if (!StartSweep(n, dk[k], ek[k], sweeps[k], blockEnd))
      {
        return false;
      }
      longest = std::max(longest, sweeps[k].length);
    }
    if (longest == 0)
    {
      break;
    }
#if SVDLR_QL_VECTOR_LANES
    if (lanes)
    {
      count > 4 ? SweepStepsInLanes<2>(sweeps, dk, ek, longest) : SweepStepsInLanes<1>(sweeps, dk, ek, longest);
    }
    else
#endif
    {
      for (int step = 0; step < longest; ++step)
      {
        for (int k = 0; k < count; ++k)
        {
          SweepStep(sweeps[k], dk[k], ek[k], step);
        }
      }
    }
    for (int k = 0; k < count; ++k)
    {
      Sweep & w = sweeps[k];
      if (w.length > 0 && !w.underflow)
      {
        dk[k][w.low] -= w.p;
        ek[k][w.low] = w.g;
        ek[k][w.high] = 0.0;
      }
    }
  }
  for (int k = 0; k < count; ++k)
  {
    std::sort(dk[k], dk[k] + n);
  }
  return true;
}

} // namespace detail
} // namespace svdlr
