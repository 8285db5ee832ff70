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

// On x86-64 with GCC, the loops below are also compiled for AVX2 and FMA (x86-64-v3) and the loader picks that
// version where the CPU has them: the engine itself is built for the baseline x86-64, where these loops run at
// half the width.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__)
#  define SVDLR_WIDE_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#  define SVDLR_WIDE_VECTOR_CLONES
#endif

namespace svdlr
{
namespace detail
{

SVDLR_WIDE_VECTOR_CLONES double
Dot(int n, const double * a, const double * b)
{
  // Four partial sums, added in a fixed order.
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  int    i = 0;
  for (; i + 4 <= n; i += 4)
  {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < n; ++i)
  {
    s0 += a[i] * b[i];
  }
  return (s0 + s1) + (s2 + s3);
}

SVDLR_WIDE_VECTOR_CLONES void
AddOuterProductsLower(int n, int count, const double * weights, const double * vectors, std::ptrdiff_t stride,
                      double * g)
{
  // Register tiles where the CPU has AVX2 and FMA (svdlrPatchKernels.h), for all but the last n % 4 columns. Then
  // column by column of G, so that the column stays in L1 while the vectors add to it, four at a time so that each
  // element of G is loaded and stored once per four products.
  for (int j = AddOuterProductsLowerInTiles(n, count, weights, vectors, stride, g); j < n; ++j)
  {
    double * column = g + static_cast<std::ptrdiff_t>(j) * n;
    int      r = 0;
    for (; r + 4 <= count; r += 4)
    {
      const double * v0 = vectors + r * stride;
      const double * v1 = v0 + stride;
      const double * v2 = v1 + stride;
      const double * v3 = v2 + stride;
      const double   s0 = weights[r] * v0[j], s1 = weights[r + 1] * v1[j], s2 = weights[r + 2] * v2[j],
                   s3 = weights[r + 3] * v3[j];
      for (int i = j; i < n; ++i)
      {
        column[i] += (s0 * v0[i] + s1 * v1[i]) + (s2 * v2[i] + s3 * v3[i]);
      }
    }
    for (; r < count; ++r)
    {
      const double * v = vectors + r * stride;
      const double   scale = weights[r] * v[j];
      for (int i = j; i < n; ++i)
      {
        column[i] += scale * v[i];
      }
    }
  }
}

namespace
{

/** Turns x (length k >= 1; x[0] is alpha) into a reflector's vector as LAPACK's dlarfg does: on return x[0] = 1, x[1:]
 * scaled, and `t` and `beta` set (t = 0: x is already reduced and left as it was). False when the norm over- or
 * underflows. */
inline bool
MakeReflector(int k, double * x, double & t, double & beta)
{
  constexpr double safeMinimum = std::numeric_limits<double>::min() / std::numeric_limits<double>::epsilon();
  const double     alpha = x[0];
  double           tailNorm2 = 0.0;
  for (int r = 1; r < k; ++r)
  {
    tailNorm2 += x[r] * x[r];
  }
  if (tailNorm2 == 0.0)
  {
    t = 0.0;
    beta = alpha;
    return true;
  }
  beta = -std::copysign(std::sqrt(alpha * alpha + tailNorm2), alpha);
  if (!std::isfinite(beta) || std::fabs(beta) < safeMinimum || tailNorm2 < safeMinimum)
  {
    return false;
  }
  t = (beta - alpha) / beta;
  const double scale = 1.0 / (alpha - beta);
  for (int r = 1; r < k; ++r)
  {
    x[r] *= scale;
  }
  x[0] = 1.0;
  return true;
}

/** Columns j to j + 3 of A22 (order k, leading dimension n) get the rank-2 update A22 -= v wᵀ + w vᵀ, and each
 * updated value adds to the next step's product wNext = A22(1:, 1:) vNext (vNext null: no next product). Four
 * columns share each load and store of v, w and wNext, which is what bounds this loop; the operations on each
 * value are those of the one-column loop in its order, so the result does not depend on the grouping. */
SVDLR_WIDE_VECTOR_CLONES void
UpdateFourColumns(int k, int n, int j, const double * __restrict v, const double * __restrict w,
                  const double * vNext, double * a22, double * __restrict wNext)
{
  const double   v0 = v[j], v1 = v[j + 1], v2 = v[j + 2], v3 = v[j + 3];
  const double   w0 = w[j], w1 = w[j + 1], w2 = w[j + 2], w3 = w[j + 3];
  const double   s0 = vNext ? vNext[j - 1] : 0.0, s1 = vNext ? vNext[j] : 0.0, s2 = vNext ? vNext[j + 1] : 0.0,
               s3 = vNext ? vNext[j + 2] : 0.0;
  double * __restrict c0 = a22 + static_cast<std::ptrdiff_t>(j) * n;
  double * __restrict c1 = c0 + n;
  double * __restrict c2 = c1 + n;
  double * __restrict c3 = c2 + n;
  c0[0] -= v[0] * w0 + w[0] * v0;
  c1[0] -= v[0] * w1 + w[0] * v1;
  c2[0] -= v[0] * w2 + w[0] * v2;
  c3[0] -= v[0] * w3 + w[0] * v3;
  for (int r = 1; r < k; ++r)
  {
    const double vr = v[r], wr = w[r];
    const double u0 = c0[r] - (vr * w0 + wr * v0);
    const double u1 = c1[r] - (vr * w1 + wr * v1);
    const double u2 = c2[r] - (vr * w2 + wr * v2);
    const double u3 = c3[r] - (vr * w3 + wr * v3);
    c0[r] = u0;
    c1[r] = u1;
    c2[r] = u2;
    c3[r] = u3;
    wNext[r - 1] = (((wNext[r - 1] + s0 * u0) + s1 * u1) + s2 * u2) + s3 * u3;
  }
}

} // namespace

SVDLR_WIDE_VECTOR_CLONES bool
TridiagonalizeSymmetric(int n, double * a, double * d, double * e, double * tau, double * work)
{
  // Both triangles are kept up to date (twice the flops of the rank-2 update on one triangle), so that A v is a sum
  // of columns and every inner loop is a contiguous multiply-add that vectorises without reordering sums. The
  // rank-2 update of step i and the product A22 v of step i + 1 share one pass over the trailing block: once its
  // first column is updated, step i + 1's reflector is known, and each further column adds to that product as soon
  // as it is updated.
  double * w = work;         // A22 v of the current step (n)
  double * wNext = work + n; // A22 v of the next step, accumulated during the update
  bool     haveProduct = false;
  for (int i = 0; i + 1 < n; ++i)
  {
    const int k = n - i - 1; // order of the trailing block A22 = A(i+1:, i+1:)
    double *  v = a + (i + 1) + static_cast<std::ptrdiff_t>(i) * n;
    double *  a22 = a + (i + 1) + static_cast<std::ptrdiff_t>(i + 1) * n;
    d[i] = a[i + static_cast<std::ptrdiff_t>(i) * n];
    double t = tau[i], beta = e[i]; // set below, or by the previous step's pass
    if (!haveProduct)
    {
      if (!MakeReflector(k, v, t, beta))
      {
        return false;
      }
      if (t != 0.0)
      {
        std::fill(w, w + k, 0.0);
        for (int j = 0; j < k; ++j)
        {
          const double   vj = v[j];
          const double * column = a22 + static_cast<std::ptrdiff_t>(j) * n;
          for (int r = 0; r < k; ++r)
          {
            w[r] += vj * column[r];
          }
        }
      }
    }
    haveProduct = false;
    tau[i] = t;
    e[i] = beta;
    if (t == 0.0)
    {
      continue; // H_i = I: A22 unchanged
    }

    // w = t A22 v - (t²/2)(vᵀ A22 v) v, then A22 -= v wᵀ + w vᵀ.
    for (int r = 0; r < k; ++r)
    {
      w[r] *= t;
    }
    const double correction = -0.5 * t * Dot(k, w, v);
    for (int r = 0; r < k; ++r)
    {
      w[r] += correction * v[r];
    }
    const double v0 = v[0], w0 = w[0];
    for (int r = 0; r < k; ++r) // column 0 of A22 first: it holds the next reflector
    {
      a22[r] -= v[r] * w0 + w[r] * v0;
    }
    double   tNext = 0.0, betaNext = 0.0;
    double * vNext = a22 + 1; // column i + 1 below row i + 1
    if (k >= 2)
    {
      if (!MakeReflector(k - 1, vNext, tNext, betaNext))
      {
        return false;
      }
      tau[i + 1] = tNext;
      e[i + 1] = betaNext;
      haveProduct = tNext != 0.0;
      std::fill(wNext, wNext + (k - 1), 0.0);
    }
    int j = 1;
    for (; j + 4 <= k; j += 4)
    {
      UpdateFourColumns(k, n, j, v, w, haveProduct ? vNext : nullptr, a22, wNext);
    }
    for (; j < k; ++j)
    {
      const double vj = v[j], wj = w[j];
      const double s = haveProduct ? vNext[j - 1] : 0.0;
      double *     column = a22 + static_cast<std::ptrdiff_t>(j) * n;
      column[0] -= v[0] * wj + w[0] * vj;
      for (int r = 1; r < k; ++r)
      {
        const double updated = column[r] - (v[r] * wj + w[r] * vj);
        column[r] = updated;
        wNext[r - 1] += s * updated;
      }
    }
    v[0] = beta;
    std::swap(w, wNext);
  }
  d[n - 1] = a[(n - 1) + static_cast<std::ptrdiff_t>(n - 1) * n];
  return true;
}

SVDLR_WIDE_VECTOR_CLONES void
ApplyTridiagonalQ(int n, int columns, const double * a, const double * tau, double * c, int ldc)
{
  // Q C = H_0 (H_1 (... (H_(n-2) C))): the last reflector first.
  for (int i = n - 2; i >= 0; --i)
  {
    if (tau[i] == 0.0)
    {
      continue;
    }
    const int      k = n - i - 1;
    const double * v = a + (i + 1) + static_cast<std::ptrdiff_t>(i) * n; // v[0] stands for 1
    for (int col = 0; col < columns; ++col)
    {
      double *     x = c + static_cast<std::ptrdiff_t>(col) * ldc + (i + 1);
      const double s = tau[i] * (x[0] + Dot(k - 1, v + 1, x + 1));
      x[0] -= s;
      for (int r = 1; r < k; ++r)
      {
        x[r] -= s * v[r];
      }
    }
  }
}

SVDLR_WIDE_VECTOR_CLONES void
MultiplyByColumns(int m, int n, int k, const double * a, int lda, const double * b, std::ptrdiff_t rowStride,
                  std::ptrdiff_t columnStride, double * c)
{
  for (int t = 0; t < n; ++t)
  {
    double * out = c + static_cast<std::ptrdiff_t>(t) * m;
    std::fill(out, out + m, 0.0);
    for (int l = 0; l < k; ++l)
    {
      const double   scale = b[l * rowStride + t * columnStride];
      const double * column = a + static_cast<std::ptrdiff_t>(l) * lda;
      for (int i = 0; i < m; ++i)
      {
        out[i] += scale * column[i];
      }
    }
  }
}

} // namespace detail
} // namespace svdlr
