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
#include "denoise/svdlrTridiagonalEigenvalues.h"

#include <algorithm>
#include <cmath>
#include <limits>

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

/** Finds the next unreduced block of matrix (d, e) from sweep.low and sets up its shifted sweep; length 0 when
 * every eigenvalue is found. Returns false past the iteration limit. */
bool
StartSweep(int n, const double * d, const double * e, Sweep & sweep)
{
  constexpr double epsilon = std::numeric_limits<double>::epsilon();
  sweep.length = 0;
  sweep.underflow = false;
  while (sweep.low < n)
  {
    const int l = sweep.low;
    int       m = l;
    for (; m < n - 1; ++m)
    {
      if (std::fabs(e[m]) <= epsilon * (std::fabs(d[m]) + std::fabs(d[m + 1])))
      {
        break;
      }
    }
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

} // namespace

bool
TridiagonalEigenvalues(int n, double * const * d, double * const * e, int count)
{
  Sweep sweeps[kTridiagonalBatch];
  count = std::min(count, kTridiagonalBatch);
  for (int k = 0; k < count; ++k)
  {
    e[k][n - 1] = 0.0;
  }
  for (;;)
  {
    int longest = 0;
    for (int k = 0; k < count; ++k)
    {
      if (!StartSweep(n, d[k], e[k], sweeps[k]))
      {
        return false;
      }
      longest = std::max(longest, sweeps[k].length);
    }
    if (longest == 0)
    {
      break;
    }
    // Step `step` of every matrix's sweep: rotation i = high - 1 - step. Scalar code on purpose: the matrices'
    // chains are independent, so the core runs them side by side.
    for (int step = 0; step < longest; ++step)
    {
      for (int k = 0; k < count; ++k)
      {
        Sweep & w = sweeps[k];
        if (step >= w.length || w.underflow)
        {
          continue;
        }
        double *     dk = d[k];
        double *     ek = e[k];
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
          continue;
        }
        w.s = f / r;
        w.c = w.g / r;
        const double g = dk[i + 1] - w.p;
        r = (dk[i] - g) * w.s + 2.0 * w.c * b;
        w.p = w.s * r;
        dk[i + 1] = g + w.p;
        w.g = w.c * r - b;
      }
    }
    for (int k = 0; k < count; ++k)
    {
      Sweep & w = sweeps[k];
      if (w.length > 0 && !w.underflow)
      {
        d[k][w.low] -= w.p;
        e[k][w.low] = w.g;
        e[k][w.high] = 0.0;
      }
    }
  }
  for (int k = 0; k < count; ++k)
  {
    std::sort(d[k], d[k] + n);
  }
  return true;
}

} // namespace detail
} // namespace svdlr
