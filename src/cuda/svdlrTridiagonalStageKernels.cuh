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
#ifndef svdlr_TridiagonalStageKernels_cuh
#define svdlr_TridiagonalStageKernels_cuh

// Stages 2 and 3 of the small eigen-solver (svdlrSmallEigenSolver.cu): the eigenvalues of each tridiagonal T
// (bisection, one thread per eigenvalue) and its eigenvectors by inverse iteration (one thread per matrix, in shared
// memory). The per-thread routines they run are in svdlrTridiagonalEigen.cuh, where the host tests reach them too.
// Included by svdlrSmallEigenSolver.cu only.

#include "svdlrSmallEigenSolver.h"
#include "svdlrTridiagonalEigen.cuh"

#include <cstddef>
#include <cstdint>

namespace svdlr
{
namespace detail
{

constexpr int kScalarThreads = 128; // stage 3: one thread per matrix

/** Stage 2: one block per matrix, one thread per eigenvalue (its index), d, |e| and e^2 in shared memory, where
 * every thread of a warp reads the same element at once. Each thread also finds the Gershgorin bounds itself: one
 * pass of n steps, against the ~52 n-step Sturm counts of its eigenvalue. */
__global__ void
__launch_bounds__(SmallEigenSolver::kMaxSide)
  TridiagonalBisectionKernel(const double * diagonal, const double * offDiagonal, double * values,
                             double * eigenvalues, int * info, int n, std::int64_t count)
{
  __shared__ double d[SmallEigenSolver::kMaxSide];
  __shared__ double magnitude[SmallEigenSolver::kMaxSide];
  __shared__ double squared[SmallEigenSolver::kMaxSide];
  const std::int64_t b = blockIdx.x;
  for (int i = threadIdx.x; i < n; i += blockDim.x)
  {
    d[i] = diagonal[i * count + b];
    const double e = i < n - 1 ? offDiagonal[i * count + b] : 0.0;
    magnitude[i] = fabs(e);
    squared[i] = e * e;
  }
  __syncthreads();
  const SturmBounds bounds = GershgorinBounds(d, magnitude, squared, n);
  const int         i = threadIdx.x;
  if (i < n)
  {
    const double value = BisectEigenvalue(d, squared, n, i, bounds);
    values[i * count + b] = value;
    if (eigenvalues != nullptr)
    {
      eigenvalues[b * n + i] = value;
    }
  }
  if (i == 0 && info != nullptr)
  {
    info[b] = isfinite(bounds.norm) ? 0 : 1; // NaN or Inf in T: no eigenvalue to trust
  }
}

__device__ inline int
VectorsWanted(const int * vectorCounts, const int * info, std::int64_t b, int maxVectors, int n)
{
  if (info != nullptr && info[b] != 0)
  {
    return 0;
  }
  const int wanted = vectorCounts != nullptr ? vectorCounts[b] : maxVectors;
  return max(0, min(min(wanted, maxVectors), n));
}

/** Bytes of shared memory SharedTridiagonalEigenvectorsKernel takes per thread: d, e, the eigenvalues, the four LU
 * arrays and the vector iterated (doubles), the interchanges (ints). */
constexpr std::size_t
SharedEigenvectorBytesPerThread(int n)
{
  return static_cast<std::size_t>(n) * (8 * sizeof(double) + sizeof(int));
}

/** Stage 3. One thread per matrix: T's eigenvectors for the largest eigenvalues, into the interleaved z, with each
 * thread's T, eigenvalues, LU factors and vector in shared memory (element i of the block's thread t at
 * [i * blockDim.x + t]) and its vectors stored to z as each is done: its long chains of dependent loads then wait on
 * shared memory instead of L2 (in the global workspace they took 2.3 s of a 176x176x120x200 series' 8.5 s). Shared memory bounds the block to a
 * few threads (68 n bytes each). */
__global__ void
__launch_bounds__(kScalarThreads)
  SharedTridiagonalEigenvectorsKernel(const double * diagonal, const double * offDiagonal, const double * values,
                                      double * z, const int * vectorCounts, const int * info, int n, int maxVectors,
                                      std::int64_t count)
{
  extern __shared__ double work[];
  const int          t = threadIdx.x;
  const int          threads = blockDim.x;
  const std::int64_t b = static_cast<std::int64_t>(blockIdx.x) * threads + t;
  if (b >= count)
  {
    return;
  }
  const int k = VectorsWanted(vectorCounts, info, b, maxVectors, n);
  if (k == 0)
  {
    return;
  }
  const std::int64_t  column = static_cast<std::int64_t>(n) * threads;
  const auto          at = [&](int array) { return Interleaved<double>{ work + array * column + t, threads }; };
  const Interleaved<double> d = at(0), e = at(1), ascending = at(2), x = at(7);
  const TridiagonalLU lu{ at(3), at(4), at(5), at(6),
                          Interleaved<int>{ reinterpret_cast<int *>(work + 8 * column) + t, threads } };
  for (int i = 0; i < n; ++i)
  {
    d[i] = diagonal[i * count + b];
    e[i] = offDiagonal[i * count + b];
    ascending[i] = values[i * count + b];
  }
  TridiagonalEigenvectors(d, e, ascending, n, k, lu, Interleaved<double>{ z + b, count }, x);
}

} // namespace detail
} // namespace svdlr

#endif
