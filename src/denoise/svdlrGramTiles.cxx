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

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#  include <immintrin.h>
#  define SVDLR_GRAM_TILES 1
#else
#  define SVDLR_GRAM_TILES 0
#endif

namespace svdlr
{
namespace detail
{

#if SVDLR_GRAM_TILES
namespace
{

/** G(i0 .. i0 + rows, j0 .. j0 + 4) += sum over r of w_r v_r(i) v_r(j), the lower part only: an 8 x 4 tile whose
 * 32 sums stay in 8 registers over all `count` vectors, so that each vector costs 2 loads, 4 broadcasts and 8 fused
 * multiply-adds. `rows` (1..8) below 8 at the bottom of the matrix, where the loads are masked. */
template <bool Weighted>
__attribute__((target("avx2,fma"))) inline void
AddTile(int n, int count, const double * weights, const double * vectors, std::ptrdiff_t stride, int i0, int j0,
        int rows, double * g)
{
  const __m256i lane = _mm256_set_epi64x(3, 2, 1, 0);
  const __m256i low = _mm256_cmpgt_epi64(_mm256_set1_epi64x(rows), lane);     // rows i0 .. i0 + 3 that exist
  const __m256i high = _mm256_cmpgt_epi64(_mm256_set1_epi64x(rows - 4), lane); // rows i0 + 4 .. i0 + 7
  __m256d       a0 = _mm256_setzero_pd(), a1 = a0, b0 = a0, b1 = a0, c0 = a0, c1 = a0, d0 = a0, d1 = a0;
  const double * v = vectors;
  for (int r = 0; r < count; ++r, v += stride)
  {
    __m256d x0 = _mm256_maskload_pd(v + i0, low), x1 = _mm256_maskload_pd(v + i0 + 4, high);
    if (Weighted)
    {
      const __m256d w = _mm256_broadcast_sd(weights + r);
      x0 = _mm256_mul_pd(w, x0);
      x1 = _mm256_mul_pd(w, x1);
    }
    __m256d y = _mm256_broadcast_sd(v + j0);
    a0 = _mm256_fmadd_pd(y, x0, a0);
    a1 = _mm256_fmadd_pd(y, x1, a1);
    y = _mm256_broadcast_sd(v + j0 + 1);
    b0 = _mm256_fmadd_pd(y, x0, b0);
    b1 = _mm256_fmadd_pd(y, x1, b1);
    y = _mm256_broadcast_sd(v + j0 + 2);
    c0 = _mm256_fmadd_pd(y, x0, c0);
    c1 = _mm256_fmadd_pd(y, x1, c1);
    y = _mm256_broadcast_sd(v + j0 + 3);
    d0 = _mm256_fmadd_pd(y, x0, d0);
    d1 = _mm256_fmadd_pd(y, x1, d1);
  }
  alignas(32) double sums[4][8];
  _mm256_store_pd(sums[0], a0);
  _mm256_store_pd(sums[0] + 4, a1);
  _mm256_store_pd(sums[1], b0);
  _mm256_store_pd(sums[1] + 4, b1);
  _mm256_store_pd(sums[2], c0);
  _mm256_store_pd(sums[2] + 4, c1);
  _mm256_store_pd(sums[3], d0);
  _mm256_store_pd(sums[3] + 4, d1);
  for (int jj = 0; jj < 4; ++jj)
  {
    double * column = g + static_cast<std::ptrdiff_t>(j0 + jj) * n;
    for (int ii = std::max(0, j0 + jj - i0); ii < rows; ++ii)
    {
      column[i0 + ii] += sums[jj][ii];
    }
  }
}

template <bool Weighted>
__attribute__((target("avx2,fma"))) int
AddTiles(int n, int count, const double * weights, const double * vectors, std::ptrdiff_t stride, double * g)
{
  const int columns = n / 4 * 4; // whole tiles of 4 columns; the caller adds the rest
  for (int j0 = 0; j0 < columns; j0 += 4)
  {
    for (int i0 = j0; i0 < n; i0 += 8)
    {
      AddTile<Weighted>(n, count, weights, vectors, stride, i0, j0, std::min(8, n - i0), g);
    }
  }
  return columns;
}

bool
CpuHasAvx2AndFma()
{
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

} // namespace

int
AddOuterProductsLowerInTiles(int n, int count, const double * weights, const double * vectors, std::ptrdiff_t stride,
                             double * g)
{
  if (!CpuHasAvx2AndFma())
  {
    return 0;
  }
  const bool unit = std::all_of(weights, weights + count, [](double w) { return w == 1.0; });
  return unit ? AddTiles<false>(n, count, weights, vectors, stride, g)
              : AddTiles<true>(n, count, weights, vectors, stride, g);
}

#else

int
AddOuterProductsLowerInTiles(int, int, const double *, const double *, std::ptrdiff_t, double *)
{
  return 0;
}

#endif

} // namespace detail
} // namespace svdlr
