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
#ifndef svdlr_TridiagonalEigen_cuh
#define svdlr_TridiagonalEigen_cuh

// The middle of the small-matrix eigen-solver (svdlrSmallEigenSolver.h): eigenvalues (one thread per eigenvalue on
// the GPU) and selected eigenvectors (ONE thread per matrix) of one symmetric tridiagonal matrix T. These steps are
// long chains of dependent scalar operations (O(n^2) in all), which a thread block would run with most of its threads
// waiting at barriers; one thread per chain instead keeps thousands of independent chains in flight, which is what
// hides their latency. Arrays are "interleaved": element i of matrix b lives at base[i * count + b], so that the 32 threads of
// a warp, working on 32 consecutive matrices, touch one contiguous 256-byte segment per access.
//
// T has diagonal d[0..n) and off-diagonal e[0..n-1), e[i] = T(i + 1, i) = T(i, i + 1).

#include <cfloat>
#include <cmath>
#include <cstdint>

// Host and device: the unit tests also run these routines on the CPU (test/cuda/svdlrTridiagonalEigenGTest.cxx).
#include "shared/svdlrHostDevice.h"

namespace svdlr
{
namespace detail
{

/** Element i of one matrix's interleaved array. */
template <typename T>
struct Interleaved
{
  T *          data;
  std::int64_t stride; // the batch's matrix count

  SVDLR_HOST_DEVICE T &
  operator[](std::int64_t i) const
  {
    return data[i * stride];
  }
};

/** The number of eigenvalues of T below x (Sturm count): the negative pivots of the LDL^T factorisation of T - x I,
 * with squared[i] = e[i]^2. A pivot smaller than pivmin in magnitude becomes -pivmin, as in LAPACK's dstebz. */
template <typename TArray>
SVDLR_HOST_DEVICE inline int
SturmCount(const TArray & d, const TArray & squared, int n, double x, double pivmin)
{
  int    below = 0;
  double pivot = 1.0;
  for (int i = 0; i < n; ++i)
  {
    pivot = d[i] - x - (i > 0 ? squared[i - 1] / pivot : 0.0);
    pivot = fabs(pivot) < pivmin ? -pivmin : pivot;
    below += pivot < 0.0 ? 1 : 0;
  }
  return below;
}

/** T's Gershgorin interval, widened as dstebz widens it, and the pivot floor of its Sturm counts; `magnitude`[i] =
 * |e[i]|, `squared`[i] = e[i]^2. */
struct SturmBounds
{
  double lower;
  double upper;
  double pivmin;
  double norm; // max(|lower|, |upper|) before the widening: ||T|| to within a factor 2
};

template <typename TArray>
SVDLR_HOST_DEVICE inline SturmBounds
GershgorinBounds(const TArray & d, const TArray & magnitude, const TArray & squared, int n)
{
  SturmBounds bounds{ DBL_MAX, -DBL_MAX, 0.0, 0.0 };
  double      largestSquared = 1.0;
  for (int i = 0; i < n; ++i)
  {
    const double radius = (i > 0 ? magnitude[i - 1] : 0.0) + (i < n - 1 ? magnitude[i] : 0.0);
    bounds.lower = fmin(bounds.lower, d[i] - radius);
    bounds.upper = fmax(bounds.upper, d[i] + radius);
    largestSquared = i < n - 1 ? fmax(largestSquared, squared[i]) : largestSquared;
  }
  bounds.pivmin = DBL_MIN * largestSquared;
  bounds.norm = fmax(fabs(bounds.lower), fabs(bounds.upper));
  const double widening = 2.1 * DBL_EPSILON * bounds.norm + 2.1 * bounds.pivmin;
  bounds.lower -= widening;
  bounds.upper += widening;
  return bounds;
}

/** Eigenvalue `index` of T (0-based, ascending) by bisection on the Sturm count, to an absolute accuracy of about
 * eps ||T||: about 52 counts of n steps each, a chain independent of every other eigenvalue's, so that one thread
 * per eigenvalue can run them side by side. */
template <typename TArray>
SVDLR_HOST_DEVICE inline double
BisectEigenvalue(const TArray & d, const TArray & squared, int n, int index, const SturmBounds & bounds)
{
  if (bounds.norm == 0.0)
  {
    return 0.0; // T = 0 (a patch of zeros): exactly, where the pivot floor would leave 1e-308
  }
  double       lower = bounds.lower;
  double       upper = bounds.upper;
  const double tolerance = DBL_EPSILON * bounds.norm + bounds.pivmin;
  for (int iteration = 0; iteration < 128; ++iteration)
  {
    const double middle = 0.5 * (lower + upper);
    if (upper - lower <= tolerance + 2.0 * DBL_EPSILON * fmax(fabs(lower), fabs(upper)) || middle <= lower ||
        middle >= upper)
    {
      break;
    }
    // count(middle) > index exactly when eigenvalue `index` lies below middle.
    if (SturmCount(d, squared, n, middle, bounds.pivmin) > index)
    {
      upper = middle;
    }
    else
    {
      lower = middle;
    }
  }
  return 0.5 * (lower + upper);
}

/** A fixed pseudo-random start value in [-1, 1) for component i of the c-th eigenvector (splitmix64 finaliser):
 * the same for every matrix and every run, so that results are reproducible. */
SVDLR_HOST_DEVICE inline double
InverseIterationStart(int i, int c)
{
  std::uint64_t z = static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(c) * 0xD1B54A32D192ED03ull + 7;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;
}

/** The work arrays of one matrix's inverse iteration: the LU factors of T - shift I with partial pivoting. */
struct TridiagonalLU
{
  Interleaved<double> diagonal;    // U's diagonal
  Interleaved<double> upper;       // U's first superdiagonal
  Interleaved<double> upper2;      // U's second superdiagonal (fill-in from row interchanges)
  Interleaved<double> multipliers; // L's multipliers
  Interleaved<int>    swapped;     // 1 where rows i and i + 1 were interchanged
};

/** Factors T - shift I = P L U by Gaussian elimination with partial pivoting. Pivots smaller in magnitude than
 * `pivotFloor` are raised to it, so that the solve amplifies the eigen-direction by about 1 / pivotFloor instead of
 * dividing by zero. */
SVDLR_HOST_DEVICE inline void
FactorShiftedTridiagonal(const Interleaved<double> & d, const Interleaved<double> & e, int n, double shift,
                         double pivotFloor, const TridiagonalLU & lu)
{
  for (int i = 0; i < n; ++i)
  {
    lu.diagonal[i] = d[i] - shift;
    if (i < n - 1)
    {
      lu.upper[i] = e[i];
    }
  }
  for (int i = 0; i < n - 1; ++i)
  {
    // Rows i and i + 1 over columns i, i + 1, i + 2: [a, b, 0] and [sub, a1, b1].
    const double a = lu.diagonal[i];
    const double sub = e[i];
    const double a1 = lu.diagonal[i + 1];
    const double b1 = i < n - 2 ? lu.upper[i + 1] : 0.0;
    if (fabs(a) >= fabs(sub))
    {
      const double pivot = fabs(a) < pivotFloor ? copysign(pivotFloor, a) : a;
      const double factor = sub / pivot;
      lu.diagonal[i] = pivot;
      lu.multipliers[i] = factor;
      lu.swapped[i] = 0;
      lu.diagonal[i + 1] = a1 - factor * lu.upper[i];
      if (i < n - 2)
      {
        lu.upper2[i] = 0.0;
      }
    }
    else
    {
      // Interchange: row i becomes [sub, a1, b1], row i + 1 becomes [a, b, 0] - factor * [sub, a1, b1].
      const double factor = a / sub;
      const double b = lu.upper[i];
      lu.diagonal[i] = sub;
      lu.upper[i] = a1;
      lu.multipliers[i] = factor;
      lu.swapped[i] = 1;
      lu.diagonal[i + 1] = b - factor * a1;
      if (i < n - 2)
      {
        lu.upper2[i] = b1;
        lu.upper[i + 1] = -factor * b1;
      }
    }
  }
  if (n > 0 && fabs(lu.diagonal[n - 1]) < pivotFloor)
  {
    lu.diagonal[n - 1] = copysign(pivotFloor, lu.diagonal[n - 1]);
  }
}

/** Solves (T - shift I) y = x in place with the factors, rescaling x when it grows past 2^300 so that a solve
 * against several tiny pivots cannot overflow (only the direction of y matters). */
SVDLR_HOST_DEVICE inline void
SolveShiftedTridiagonal(const TridiagonalLU & lu, int n, const Interleaved<double> & x)
{
  for (int i = 0; i < n - 1; ++i)
  {
    if (lu.swapped[i])
    {
      const double t = x[i];
      x[i] = x[i + 1];
      x[i + 1] = t;
    }
    x[i + 1] -= lu.multipliers[i] * x[i];
  }
  constexpr double kBig = 0x1.0p300;
  constexpr double kRescale = 0x1.0p-300;
  for (int i = n - 1; i >= 0; --i)
  {
    double value = x[i];
    if (i < n - 1)
    {
      value -= lu.upper[i] * x[i + 1];
    }
    if (i < n - 2)
    {
      value -= lu.upper2[i] * x[i + 2];
    }
    value /= lu.diagonal[i];
    x[i] = value;
    if (fabs(value) > kBig)
    {
      for (int j = 0; j < n; ++j)
      {
        x[j] *= kRescale;
      }
    }
  }
}

/** Dot product of two columns of one matrix's interleaved block. */
SVDLR_HOST_DEVICE inline double
InterleavedDot(const Interleaved<double> & a, const Interleaved<double> & b, int n)
{
  double sum = 0.0;
  for (int i = 0; i < n; ++i)
  {
    sum += a[i] * b[i];
  }
  return sum;
}

/** Eigenvectors of T for its `k` largest eigenvalues by inverse iteration, as LAPACK's dstein organises it:
 * eigenvalues closer than 1e-3 ||T|| to their neighbour form a cluster, and each vector is orthogonalised against
 * the earlier vectors of its cluster after every solve (modified Gram-Schmidt); eigenvalues closer than
 * 10 eps ||T|| are pulled apart by that much first, so that their factorisations differ. Vectors of different
 * clusters are orthogonal to working accuracy because each has a residual of order eps ||T||.
 *  ascending: the eigenvalues of T, ascending (BisectEigenvalue);
 *  z:         column c (c < k) at z[c * n + i], for the (c+1)-th largest eigenvalue, unit 2-norm;
 *  x:         where each vector is iterated before it is stored in z (n values, in shared memory on the GPU). */
SVDLR_HOST_DEVICE inline void
TridiagonalEigenvectors(const Interleaved<double> & d, const Interleaved<double> & e, const Interleaved<double> & ascending,
                        int n, int k, const TridiagonalLU & lu, const Interleaved<double> & z,
                        const Interleaved<double> & x)
{
  constexpr int kSolves = 3;
  const auto    column = [&](int c) { return Interleaved<double>{ &z[static_cast<std::int64_t>(c) * n], z.stride }; };
  double        norm = 0.0; // ||T||_1
  for (int i = 0; i < n; ++i)
  {
    const double left = i > 0 ? fabs(e[i - 1]) : 0.0;
    const double right = i < n - 1 ? fabs(e[i]) : 0.0;
    norm = fmax(norm, fabs(d[i]) + left + right);
  }
  if (n == 1 || norm == 0.0)
  {
    // Every vector is an eigenvector: take the unit vectors.
    for (int c = 0; c < k; ++c)
    {
      const auto x = column(c);
      for (int i = 0; i < n; ++i)
      {
        x[i] = i == c ? 1.0 : 0.0;
      }
    }
    return;
  }
  const double clusterGap = 1e-3 * norm;
  const double separation = 10.0 * DBL_EPSILON * norm;
  const double pivotFloor = DBL_EPSILON * norm;
  int          clusterStart = 0;
  double       previousValue = 0.0;
  double       previousShift = 0.0;
  for (int c = 0; c < k; ++c)
  {
    const double value = ascending[n - 1 - c];
    double       shift = value;
    if (c > 0)
    {
      if (previousValue - value > clusterGap)
      {
        clusterStart = c;
      }
      shift = fmin(shift, previousShift - separation);
    }
    previousValue = value;
    previousShift = shift;

    FactorShiftedTridiagonal(d, e, n, shift, pivotFloor, lu);
    for (int i = 0; i < n; ++i)
    {
      x[i] = InverseIterationStart(i, c);
    }
    for (int solve = 0; solve < kSolves; ++solve)
    {
      SolveShiftedTridiagonal(lu, n, x);
      // Normalise before orthogonalising, so that the projections are taken at unit scale.
      for (int pass = 0; pass < 2; ++pass)
      {
        double length = sqrt(InterleavedDot(x, x, n));
        if (!(length > 0.0 && length <= DBL_MAX))
        {
          // Cannot happen with the pivot floor, but a zero vector must not become NaN: restart from the start vector.
          for (int i = 0; i < n; ++i)
          {
            x[i] = InverseIterationStart(i, c + 1000 * (solve + 1));
          }
          length = sqrt(InterleavedDot(x, x, n));
        }
        for (int i = 0; i < n; ++i)
        {
          x[i] /= length;
        }
        if (pass == 1 || c == clusterStart)
        {
          break;
        }
        for (int p = clusterStart; p < c; ++p)
        {
          const auto   other = column(p);
          const double projection = InterleavedDot(x, other, n);
          for (int i = 0; i < n; ++i)
          {
            x[i] -= projection * other[i];
          }
        }
      }
    }
    const auto stored = column(c);
    for (int i = 0; i < n; ++i)
    {
      stored[i] = x[i];
    }
  }
}

} // namespace detail
} // namespace svdlr

#endif
