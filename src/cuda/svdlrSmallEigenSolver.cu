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
#include "svdlrSmallEigenSolver.h"

#include "svdlrCudaCheck.h"
#include "svdlrFusedTridiagonalKernel.cuh"
#include "svdlrTridiagonalEigen.cuh"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

namespace svdlr
{
namespace detail
{

// Stages 2 and 3 of the small eigen-solver: the eigenvalues of each tridiagonal T
// (bisection, one thread per eigenvalue) and its eigenvectors by inverse iteration (one thread per matrix, in shared
// memory). The per-thread routines they run are in svdlrTridiagonalEigen.cuh, where the host tests reach them too.

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

namespace
{

constexpr int kTridiagonalThreads = 128;   // stage 1: one block per matrix
constexpr int kWideTridiagonalThreads = 512; // stage 1, the packed kernel past n = 96
constexpr int kFusedMaxRows = 7;           // stage 1, the fused kernel: n <= 32 kFusedMaxRows
constexpr int kBackTransformThreads = 128; // stage 4: one warp per vector
constexpr std::size_t kAlignment = 256;

std::size_t
AlignUp(std::size_t bytes)
{
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

/** The workspace, carved into interleaved per-matrix arrays (element i of matrix b at [i * count + b]). */
struct Workspace
{
  double * diagonal;    // (n): T's diagonal
  double * offDiagonal; // (n): T's off-diagonal, e[n - 1] = 0
  double * tau;         // (n): the reflectors' scalars, tau[n - 2] = tau[n - 1] = 0
  double * values;      // (n): eigenvalues, ascending
  double * z;           // (maxVectors, n): eigenvectors of T
  std::size_t bytes;
};

Workspace
CarveWorkspace(void * base, std::int64_t n, std::int64_t count, std::int64_t maxVectors)
{
  Workspace         w{};
  unsigned char *   cursor = static_cast<unsigned char *>(base);
  std::size_t       used = 0;
  const std::size_t column = static_cast<std::size_t>(n) * static_cast<std::size_t>(count);
  const auto        take = [&](std::size_t bytes) {
    unsigned char * at = cursor == nullptr ? nullptr : cursor + used;
    used += AlignUp(bytes);
    return at;
  };
  w.diagonal = reinterpret_cast<double *>(take(column * sizeof(double)));
  w.offDiagonal = reinterpret_cast<double *>(take(column * sizeof(double)));
  w.tau = reinterpret_cast<double *>(take(column * sizeof(double)));
  w.values = reinterpret_cast<double *>(take(column * sizeof(double)));
  // Five double and one int array that no stage uses any more (QL's off-diagonal, the global-memory inverse
  // iteration's LU factors): kept so that WorkspaceBytes, and with it the denoiser's batch sizes, stay as they were.
  for (int unused = 0; unused < 5; ++unused)
  {
    take(column * sizeof(double));
  }
  take(column * sizeof(int));
  w.z = reinterpret_cast<double *>(take(column * static_cast<std::size_t>(std::max<std::int64_t>(maxVectors, 0)) *
                                        sizeof(double)));
  w.bytes = used;
  return w;
}

/** Stage 1. One block per matrix: A = Q T Q^T by n - 2 Householder reflections H_j = I - tau_j v_j v_j^T (v_j zero
 * above row j + 1, v_j(j + 1) = 1), as LAPACK's dsytd2. Per step: warp 0 forms v from column j (one warp
 * reduction), the block forms p = tau A22 v, every warp reduces K = tau/2 p.v itself (no barrier), and the block
 * applies the rank-2 update A22 -= v w^T + w v^T, w = p - K v. Three barriers per step. Only the lower triangle is
 * updated (half the update's work), and each row of p is summed by a group of q threads (q = the largest power of
 * two, up to 32, with q rows <= the block), so that the chain of dependent additions per thread is m / q long
 * instead of m. Row i of the symmetric A22 is read as A(i, l) for l <= i and A(l, i) beyond.
 *
 * kPacked: the lower triangle is copied to shared memory packed column by column, element (i, l), i >= l, at
 * l (2n - l - 1) / 2 + i, and the reflectors are copied back at the end; otherwise the block works on the global
 * matrix in place (large n). Shared memory always holds v, p and tau.
 * Outputs (interleaved): T's diagonal and off-diagonal, and tau; v_j below row j + 1 stays in column j. */
template <int kThreads, bool kPacked>
__global__ void
__launch_bounds__(kThreads)
  HouseholderTridiagonalKernel(double * matrices, int n, std::int64_t count, double * diagonal, double * offDiagonal,
                               double * tau)
{
  static_assert(kThreads % 32 == 0 && kThreads >= 64, "whole warps, at least two");
  constexpr int      kWarps = kThreads / 32;
  extern __shared__ double shared[];
  double *           v = shared;         // (n)
  double *           p = shared + n;     // (n)
  double *           scalar = p + n;     // (2): tau of the current step
  const std::int64_t b = blockIdx.x;
  const int          tid = threadIdx.x;
  const int          lane = tid % 32;
  const int          warp = tid / 32;
  double *           global = matrices + b * static_cast<std::int64_t>(n) * n;
  double *           a = kPacked ? scalar + 2 : global; // packed, or (n, n) with leading dimension n
  // Where element (i, l), i >= l, of the matrix is.
  const auto at = [=](int i, int l) -> double & {
    return a[kPacked ? l * (2 * n - l - 1) / 2 + i : i + n * l];
  };

  if constexpr (kPacked)
  {
    for (int col = warp; col < n; col += kWarps)
    {
      for (int row = col + lane; row < n; row += 32)
      {
        at(row, col) = global[row + static_cast<std::int64_t>(n) * col];
      }
    }
    __syncthreads();
  }

  for (int j = 0; j < n - 2; ++j)
  {
    if (warp == 0)
    {
      // The reflector that zeroes column j below row j + 1 (LAPACK's dlarfg).
      const Reflector h = WarpReflector([&](int i) { return at(j + 1 + i, j); }, n - j - 1, lane);
      for (int i = j + 2 + lane; i < n; i += 32)
      {
        const double x = at(i, j) * h.scale;
        at(i, j) = x;
        v[i] = x;
      }
      if (lane == 0)
      {
        v[j + 1] = 1.0;
        scalar[0] = h.tau;
        offDiagonal[j * count + b] = h.beta;
        tau[j * count + b] = h.tau;
      }
    }
    __syncthreads();
    const double t = scalar[0];
    const int    m = n - j - 1; // rows and columns of A22
    // p = tau A22 v: q threads per row, then a reduction within each group of q lanes.
    int q = 1;
    while (q < 32 && 2 * q * m <= kThreads)
    {
      q *= 2;
    }
    const int groups = kThreads / q;
    const int group = tid / q;
    const int part = tid % q;
    const int rounds = (m + groups - 1) / groups; // the same for every thread: the shuffles see whole warps
    for (int round = 0; round < rounds; ++round)
    {
      const int i = j + 1 + round * groups + group;
      double    sum = 0.0;
      if (i < n)
      {
        for (int l = j + 1 + part; l < n; l += q)
        {
          sum += (l <= i ? at(i, l) : at(l, i)) * v[l];
        }
      }
      for (int offset = q / 2; offset > 0; offset /= 2)
      {
        sum += __shfl_xor_sync(0xffffffffu, sum, offset);
      }
      if (part == 0 && i < n)
      {
        p[i] = t * sum;
      }
    }
    __syncthreads();
    double partial = 0.0;
    for (int i = j + 1 + lane; i < n; i += 32)
    {
      partial += p[i] * v[i];
    }
    const double k = 0.5 * t * WarpSum(partial);
    // A22 -= v w^T + w v^T with w = p - K v: one column per warp, consecutive rows per lane from the diagonal down.
    for (int l = j + 1 + warp; l < n; l += kWarps)
    {
      const double vl = v[l];
      const double wl = p[l] - k * vl;
      for (int i = l + lane; i < n; i += 32)
      {
        const double vi = v[i];
        const double wi = p[i] - k * vi;
        at(i, l) -= vi * wl + wi * vl;
      }
    }
    __syncthreads();
  }

  StoreTridiagonal(at, n, count, b, diagonal, offDiagonal, tau);
  if constexpr (kPacked)
  {
    StoreReflectors(at, n, global);
  }
}

/** Stage 4. One warp per vector: V = Q Z = H_0 H_1 ... H_{n-3} Z, applying the reflectors last to first. The
 * vector lives in registers, kRowsPerLane components per lane (n <= 32 kRowsPerLane); each reflector costs one warp
 * reduction and no barrier, so vectors of one matrix proceed independently. */
template <int kRowsPerLane, int kThreads>
__global__ void
__launch_bounds__(kThreads)
  BackTransformKernel(const double * matrices, const double * tau, const double * z, const int * vectorCounts,
                      const int * info, double * vectors, int n, int maxVectors, std::int64_t count)
{
  static_assert(kThreads % 32 == 0, "whole warps");
  constexpr int      kWarps = kThreads / 32;
  const std::int64_t b = blockIdx.x;
  const int          lane = threadIdx.x % 32;
  const int          warp = threadIdx.x / 32;
  const int          k = VectorsWanted(vectorCounts, info, b, maxVectors, n);
  const double *     reflectors = matrices + b * static_cast<std::int64_t>(n) * n;
  double *           out = vectors + b * static_cast<std::int64_t>(n) * maxVectors;

  for (int c = warp; c < k; c += kWarps)
  {
    double x[kRowsPerLane];
#pragma unroll
    for (int q = 0; q < kRowsPerLane; ++q)
    {
      const int r = lane + 32 * q;
      x[q] = r < n ? z[(static_cast<std::int64_t>(c) * n + r) * count + b] : 0.0;
    }
    for (int j = n - 3; j >= 0; --j)
    {
      const double t = tau[j * count + b];
      if (t == 0.0)
      {
        continue;
      }
      double vr[kRowsPerLane];
      double partial = 0.0;
#pragma unroll
      for (int q = 0; q < kRowsPerLane; ++q)
      {
        const int r = lane + 32 * q;
        vr[q] = r == j + 1 ? 1.0 : (r > j + 1 && r < n ? reflectors[r + static_cast<std::int64_t>(n) * j] : 0.0);
        partial += vr[q] * x[q];
      }
      const double s = t * WarpSum(partial);
#pragma unroll
      for (int q = 0; q < kRowsPerLane; ++q)
      {
        x[q] -= s * vr[q];
      }
    }
#pragma unroll
    for (int q = 0; q < kRowsPerLane; ++q)
    {
      const int r = lane + 32 * q;
      if (r < n)
      {
        out[static_cast<std::int64_t>(c) * n + r] = x[q];
      }
    }
  }
}

int
SharedMemoryLimit()
{
  int device = 0;
  int limit = 0;
  SVDLR_CUDA_CHECK(cudaGetDevice(&device));
  SVDLR_CUDA_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return limit;
}

template <int kRowsPerLane>
void
LaunchBackTransform(const SmallEigenSolver::Arguments & arguments, const Workspace & w, cudaStream_t stream)
{
  BackTransformKernel<kRowsPerLane, kBackTransformThreads>
    <<<static_cast<unsigned>(arguments.count), kBackTransformThreads, 0, stream>>>(arguments.matrices,
                                                                                  w.tau,
                                                                                  w.z,
                                                                                  arguments.vectorCounts,
                                                                                  arguments.info,
                                                                                  arguments.vectors,
                                                                                  static_cast<int>(arguments.n),
                                                                                  static_cast<int>(arguments.maxVectors),
                                                                                  arguments.count);
  SVDLR_CUDA_CHECK_LAUNCH("BackTransformKernel");
}

/** The fused kernel's block: 4 warps while a lane holds up to 3 rows (n <= 96), else 8. The packed kernel (n = 200,
 * one block an SM) always takes 16 warps. */
constexpr int
FusedThreads(int n, bool packed)
{
  return packed ? 512 : (n <= 96 ? 128 : 256);
}

template <int kRows, bool kPacked>
void
LaunchFusedTridiagonalRows(const SmallEigenSolver::Arguments & arguments, const Workspace & w, cudaStream_t stream)
{
  const int         n = static_cast<int>(arguments.n);
  constexpr int     kThreads = FusedThreads(32 * kRows, kPacked);
  const auto        kernel = FusedTridiagonalKernel<kRows, kThreads, kPacked>;
  const std::size_t bytes = FusedTridiagonalSharedBytes(n, kThreads / 32, kPacked);
  SVDLR_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  kernel<<<static_cast<unsigned>(arguments.count), kThreads, bytes, stream>>>(
    arguments.matrices, n, arguments.count, w.diagonal, w.offDiagonal, w.tau);
  SVDLR_CUDA_CHECK_LAUNCH("FusedTridiagonalKernel");
}

/** The fused kernel for n <= 32 kFusedMaxRows: the one whose lanes hold ceil(n / 32) rows each, kRows and up. */
template <bool kPacked, int kRows = 1>
void
LaunchFusedTridiagonal(const SmallEigenSolver::Arguments & arguments, const Workspace & w, cudaStream_t stream)
{
  if constexpr (kRows < kFusedMaxRows)
  {
    if (arguments.n > 32 * kRows)
    {
      return LaunchFusedTridiagonal<kPacked, kRows + 1>(arguments, w, stream);
    }
  }
  LaunchFusedTridiagonalRows<kRows, kPacked>(arguments, w, stream);
}

/** Stage 1, in the fastest kernel that fits the device's shared memory: the fused kernel on the whole matrix, then on
 * its packed lower triangle (n <= 223 on the H100), then the packed three-barrier kernel while the packed triangle
 * fits beside v, p and tau (n <= 237), and past that the block on the global matrix in place. */
void
Tridiagonalize(const SmallEigenSolver::Arguments & arguments, const Workspace & w, cudaStream_t stream)
{
  const int  n = static_cast<int>(arguments.n);
  const auto limit = static_cast<std::size_t>(SharedMemoryLimit());
  const auto fusedFits = [&](bool packed) {
    return n <= 32 * kFusedMaxRows && FusedTridiagonalSharedBytes(n, FusedThreads(n, packed) / 32, packed) <= limit;
  };
  if (fusedFits(false))
  {
    LaunchFusedTridiagonal<false>(arguments, w, stream);
    return;
  }
  if (fusedFits(true))
  {
    LaunchFusedTridiagonal<true>(arguments, w, stream);
    return;
  }
  const std::size_t vectorBytes = (2 * static_cast<std::size_t>(n) + 2) * sizeof(double);
  const std::size_t packedBytes = static_cast<std::size_t>(n) * (n + 1) / 2 * sizeof(double);
  const bool        packed = vectorBytes + packedBytes <= limit;
  const std::size_t sharedBytes = vectorBytes + (packed ? packedBytes : 0);
  const auto        launch = [&](auto kernel, int threads, const char * name) {
    SVDLR_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(sharedBytes)));
    kernel<<<static_cast<unsigned>(arguments.count), threads, sharedBytes, stream>>>(
      arguments.matrices, n, arguments.count, w.diagonal, w.offDiagonal, w.tau);
    SVDLR_CUDA_CHECK_LAUNCH(name);
  };
  if (!packed)
  {
    launch(HouseholderTridiagonalKernel<kTridiagonalThreads, false>, kTridiagonalThreads,
           "HouseholderTridiagonalKernel<lower>");
  }
  // Past n = 96 a packed matrix takes most of an SM's shared memory: more warps a block hide the latency instead.
  else if (n <= 96)
  {
    launch(HouseholderTridiagonalKernel<kTridiagonalThreads, true>, kTridiagonalThreads,
           "HouseholderTridiagonalKernel<packed>");
  }
  else
  {
    launch(HouseholderTridiagonalKernel<kWideTridiagonalThreads, true>, kWideTridiagonalThreads,
           "HouseholderTridiagonalKernel<packed, wide>");
  }
}

} // namespace

bool
SmallEigenSolver::CanImplement(std::int64_t n, std::int64_t count)
{
  return n >= 1 && n <= kMaxSide && count >= 0 && count < (std::int64_t{ 1 } << 31);
}

std::size_t
SmallEigenSolver::WorkspaceBytes(std::int64_t n, std::int64_t count, std::int64_t maxVectors)
{
  return CarveWorkspace(nullptr, n, count, maxVectors).bytes;
}

void
SmallEigenSolver::RunEigenvalues(const Arguments & arguments, cudaStream_t stream)
{
  if (!CanImplement(arguments.n, arguments.count))
  {
    throw Error(ErrorCode::InvalidArgument,
                "svdlr: the small eigen-solver takes 1 <= n <= " + std::to_string(kMaxSide) + ", got n = " +
                  std::to_string(arguments.n));
  }
  if (arguments.count == 0)
  {
    return;
  }
  const Workspace w = CarveWorkspace(arguments.workspace, arguments.n, arguments.count, arguments.maxVectors);
  if (arguments.workspaceBytes < w.bytes)
  {
    throw Error(ErrorCode::InvalidArgument, "svdlr: the small eigen-solver's workspace is too small");
  }
  Tridiagonalize(arguments, w, stream);
  // Stage 2 by bisection, one thread per eigenvalue (BisectEigenvalue): QL, one thread per matrix, ran a whole
  // matrix's iteration as one chain, and a batch took as long as its longest chain.
  const int n = static_cast<int>(arguments.n);
  const int threads = (n + 31) / 32 * 32;
  TridiagonalBisectionKernel<<<static_cast<unsigned>(arguments.count), threads, 0, stream>>>(
    w.diagonal, w.offDiagonal, w.values, arguments.eigenvalues, arguments.info, n, arguments.count);
  SVDLR_CUDA_CHECK_LAUNCH("TridiagonalBisectionKernel");
}

void
SmallEigenSolver::RunEigenvectors(const Arguments & arguments, cudaStream_t stream)
{
  if (arguments.count == 0 || arguments.maxVectors <= 0)
  {
    return;
  }
  const Workspace     w = CarveWorkspace(arguments.workspace, arguments.n, arguments.count, arguments.maxVectors);
  const int           n = static_cast<int>(arguments.n);
  const int           maxVectors = static_cast<int>(arguments.maxVectors);
  // Shared memory: the most threads a block, up to kScalarThreads, that leave room for two blocks an SM. One thread
  // takes 68 n bytes, 17 KB at n = 256: always within a block's shared memory (48 KB on every GPU).
  const std::size_t perThread = SharedEigenvectorBytesPerThread(n);
  const auto        sharedLimit = static_cast<std::size_t>(SharedMemoryLimit());
  int               sharedThreads = kScalarThreads;
  while (sharedThreads > 1 && sharedThreads * perThread > sharedLimit / 2)
  {
    sharedThreads /= 2;
  }
  const std::size_t bytes = sharedThreads * perThread;
  SVDLR_CUDA_CHECK(cudaFuncSetAttribute(SharedTridiagonalEigenvectorsKernel,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  const auto blocks = static_cast<unsigned>((arguments.count + sharedThreads - 1) / sharedThreads);
  SharedTridiagonalEigenvectorsKernel<<<blocks, sharedThreads, bytes, stream>>>(
    w.diagonal, w.offDiagonal, w.values, w.z, arguments.vectorCounts, arguments.info, n, maxVectors, arguments.count);
  SVDLR_CUDA_CHECK_LAUNCH("SharedTridiagonalEigenvectorsKernel");

  if (n <= 32)
  {
    LaunchBackTransform<1>(arguments, w, stream);
  }
  else if (n <= 64)
  {
    LaunchBackTransform<2>(arguments, w, stream);
  }
  else if (n <= 128)
  {
    LaunchBackTransform<4>(arguments, w, stream);
  }
  else
  {
    LaunchBackTransform<8>(arguments, w, stream);
  }
}

} // namespace detail
} // namespace svdlr
