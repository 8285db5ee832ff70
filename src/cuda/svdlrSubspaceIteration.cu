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
#include "svdlrSubspaceIteration.h"

#include "svdlrBatchedGemm.h"
#include "svdlrCudaCheck.h"
#include "svdlrFactorKernels.cuh"

#include <algorithm>
#include <cstddef>
#include <utility>

namespace svdlr
{
namespace detail
{
namespace
{

constexpr int kFillThreads = 256;
constexpr int kOrthonormalizeThreads = 512;

// A pivot of the equilibrated cross-product matrix (unit diagonal) at or below this means the column's
// part outside the span of the previous columns is below 1e-7 of its length: float64 rounding of the cross
// products (~1e-16) can no longer resolve it, so the column is dropped instead of amplifying noise. One
// CholeskyQR pass then loses at most ~1e-2 of orthogonality on the kept columns, which the next pass (or
// the next iteration) removes. Resolution limit: a singular direction weaker than about (1e-14)^(1/4) =
// 3e-4 of the strongest can be lost from a block that starts at random; Solver::Exact resolves ~1e-8.
constexpr double kDropTolerance = 1e-14;
// Below this a column is treated as zero (its inverse square root would overflow).
constexpr double kZeroColumnEnergy = 1e-290;

/** A fixed pseudo-random value in [-1, 1) for element (row, col) of the start block: the same block for
 * every matrix and every run, so results are reproducible (splitmix64 finaliser). */
__device__ double
StartValue(std::int64_t row, std::int64_t col)
{
  std::uint64_t z = static_cast<std::uint64_t>(row) * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(col) + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;
}

__global__ void
__launch_bounds__(kFillThreads)
  FillStartBlockKernel(double * __restrict__ block, std::int64_t n, std::int64_t w, std::int64_t total)
{
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride)
  {
    const std::int64_t within = e % (n * w);
    block[e] = StartValue(within % n, within / n);
  }
}

/** One block per matrix. From the cross products C = Z^T Z (w x w, column-major) computes the factor F
 * with Z F orthonormal (zero columns where Z lost rank): F = D L^-T, where D = diag(C)^(-1/2) equilibrates
 * C to C' = D C D = L L^T (unit diagonal, so that a column's pivot measures its angle to the others, not
 * its length) and L is lower triangular (L^T is the R of QR).
 *
 * Y = L^-1 is built during the factorisation itself: step j scales row j of Y by 1 / L_jj and subtracts
 * L_rj times it from every later row r, the same rank-1 shape as Cholesky's trailing update. So each of
 * the w steps is one parallel update and two barriers, with no sequential substitution afterwards.
 *
 * Shared memory holds one (w, w) array with leading dimension w + 1, odd, so that walking along a row
 * (stride w + 1 doubles) hits distinct banks. Lower triangle: C', overwritten column by column by L.
 * Strict upper triangle: Y, transposed (Y(r, c) for r > c at (c, r)); Y's diagonal is yDiagonal. Column j
 * of the array read top to bottom is then row j of Y (above the diagonal) followed by column j of L (below
 * it), which is exactly the vector step j subtracts. */
__global__ void
__launch_bounds__(kOrthonormalizeThreads)
  OrthonormalizingFactorKernel(const double * __restrict__ cross, double * __restrict__ factor, int w)
{
  extern __shared__ double shared[];
  const int                ld = w + 1;
  double *                 s = shared;            // (w, w), leading dimension ld
  double *                 scale = s + ld * w;    // (w): D, 0 for a zero column
  double *                 yDiagonal = scale + w; // (w): Y(j, j)
  const std::size_t        matrix = blockIdx.x;
  const double *           c = cross + matrix * w * w;
  double *                 f = factor + matrix * w * w;
  const int                tid = threadIdx.x;
  const int                lane = tid % 32;
  const int                warp = tid / 32;
  const int                warps = blockDim.x / 32;

  for (int j = tid; j < w; j += blockDim.x)
  {
    const double energy = c[j + w * j];
    scale[j] = energy > kZeroColumnEnergy ? 1.0 / sqrt(energy) : 0.0;
    yDiagonal[j] = 1.0;
  }
  __syncthreads();
  for (int col = warp; col < w; col += warps)
  {
    for (int row = lane; row < w; row += 32)
    {
      s[row + ld * col] = row >= col ? c[row + w * col] * scale[row] * scale[col] : 0.0; // Y starts as I
    }
  }
  __syncthreads();

  for (int j = 0; j < w; ++j)
  {
    // The pivot is read by every thread and never written (L_jj is not stored): no barrier needed here.
    const double pivot = s[j + ld * j];
    const double inverse = pivot > kDropTolerance ? 1.0 / sqrt(pivot) : 0.0; // 0 drops the column
    for (int e = tid; e < w; e += blockDim.x)
    {
      if (e > j)
      {
        s[e + ld * j] *= inverse; // column j of L
      }
      else if (e < j)
      {
        s[e + ld * j] *= inverse; // row j of Y
      }
      else
      {
        yDiagonal[j] *= inverse;
      }
    }
    __syncthreads();
    // Row r > j: Y(r, c) -= L_rj Y(j, c) for c <= j, and C'(r, c) -= L_rj L_cj for j < c <= r.
    for (int r = j + 1 + warp; r < w; r += warps)
    {
      const double lr = s[r + ld * j];
      for (int col = lane; col <= r; col += 32)
      {
        if (col < j)
        {
          s[col + ld * r] -= lr * s[col + ld * j];
        }
        else if (col == j)
        {
          s[j + ld * r] -= lr * yDiagonal[j];
        }
        else
        {
          s[r + ld * col] -= lr * s[col + ld * j];
        }
      }
    }
    __syncthreads();
  }

  // F(i, col) = D(i) * Y(col, i), upper triangular.
  for (int col = warp; col < w; col += warps)
  {
    for (int i = lane; i < w; i += 32)
    {
      const double y = i < col ? s[i + ld * col] : (i == col ? yDiagonal[i] : 0.0);
      f[i + w * col] = scale[i] * y;
    }
  }
}

void
LaunchFillStartBlock(double * block, std::int64_t n, std::int64_t w, std::int64_t count, cudaStream_t stream)
{
  const std::int64_t total = n * w * count;
  const std::int64_t blocks = std::min<std::int64_t>((total + kFillThreads - 1) / kFillThreads, 4096);
  FillStartBlockKernel<<<static_cast<unsigned>(blocks), kFillThreads, 0, stream>>>(block, n, w, total);
  SVDLR_CUDA_CHECK_LAUNCH("FillStartBlockKernel");
}

void
LaunchOrthonormalizingFactor(const double * cross, double * factor, std::int64_t w, std::int64_t count,
                             cudaStream_t stream)
{
  const std::size_t bytes = static_cast<std::size_t>((w + 1) * w + 2 * w) * sizeof(double);
  SVDLR_CUDA_CHECK(cudaFuncSetAttribute(
    OrthonormalizingFactorKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  OrthonormalizingFactorKernel<<<static_cast<unsigned>(count), kOrthonormalizeThreads, bytes, stream>>>(
    cross, factor, static_cast<int>(w));
  SVDLR_CUDA_CHECK_LAUNCH("OrthonormalizingFactorKernel");
}

} // namespace

void
Orthonormalize(cublasHandle_t handle, cudaStream_t stream, const double * in, double * out,
               const SubspaceWorkspace & workspace, std::int64_t n, std::int64_t w, std::int64_t count)
{
  MultiplyBatched(
    handle, CUBLAS_OP_T, CUBLAS_OP_N, w, w, n, in, n, n * w, in, n, n * w, workspace.small, w, w * w, count);
  LaunchOrthonormalizingFactor(workspace.small, workspace.inverse, w, count, stream);
  MultiplyBatched(
    handle, CUBLAS_OP_N, CUBLAS_OP_N, n, w, w, in, n, n * w, workspace.inverse, w, w * w, out, n, n * w, count);
}

const double *
IterateSubspace(cublasHandle_t handle, cudaStream_t stream, const double * gram, const SubspaceWorkspace & workspace,
                std::int64_t n, std::int64_t w, int iterations, std::int64_t count)
{
  double * q = workspace.basis;
  double * z = workspace.image;
  LaunchFillStartBlock(q, n, w, count, stream);
  for (int step = 0; step < iterations; ++step)
  {
    MultiplyBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, w, n, gram, n, n * n, q, n, n * w, z, n, n * w, count);
    Orthonormalize(handle, stream, z, q, workspace, n, w, count);
  }
  // CholeskyQR2: a second pass makes the Rayleigh-Ritz basis orthonormal to float64 rounding.
  Orthonormalize(handle, stream, q, z, workspace, n, w, count);
  std::swap(q, z);

  // Rayleigh-Ritz: H = Q^T (G Q).
  MultiplyBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, w, n, gram, n, n * n, q, n, n * w, z, n, n * w, count);
  MultiplyBatched(
    handle, CUBLAS_OP_T, CUBLAS_OP_N, w, w, n, q, n, n * w, z, n, n * w, workspace.small, w, w * w, count);
  return q;
}

void
ComputeRitzVectors(cublasHandle_t handle, cudaStream_t stream, const double * basis,
                   const SubspaceWorkspace & workspace, double * ritz, std::int64_t n, std::int64_t w,
                   std::int64_t kmax, std::int64_t count)
{
  if (count == 0 || kmax == 0)
  {
    return;
  }
  LaunchExtractLeadingEigenvectors(workspace.small, workspace.inverse, w, kmax, count, stream);
  MultiplyBatched(handle,
                  CUBLAS_OP_N,
                  CUBLAS_OP_N,
                  n,
                  kmax,
                  w,
                  basis,
                  n,
                  n * w,
                  workspace.inverse,
                  w,
                  w * kmax,
                  ritz,
                  n,
                  n * kmax,
                  count);
}

} // namespace detail
} // namespace svdlr
