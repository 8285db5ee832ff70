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
// Device code for R = P Q^T, per matrix with its own rank (see svdlrLowRankProduct.h for the layouts).
//
// Why our own kernel rather than cuBLAS: the ranks differ per matrix inside a batch (energy policy), the
// output is row-major T while the factors are float64, and one launch covers the whole batch
// (blockIdx.z = matrix), so the product costs one pass over the output and no conversion pass.
//
// Arithmetic follows the output type (ComputeType<TOut>): for float output each factor element is rounded
// to float as it enters shared memory, and the shared tiles, the register accumulators and the FMAs are
// float; for double output everything stays double. Float halves the shared-memory bytes per component,
// which lets the tile take twice the components per step, and runs the FMAs at the FP32 rate, twice the
// FP64 rate on an H100 (W1 product with float output: 96 us with double arithmetic, 70 us for cuBLAS
// SGEMM, 49 us for an earlier float-arithmetic variant). The cost in accuracy: rounding both factors to
// float and accumulating `rank` products in float gives, per pixel, at worst (to first order in FLT_EPSILON)
//   |R_float - R| <= (rank + 2) * (FLT_EPSILON / 2) * sum_l |p_l q_l|,  about rank * FLT_EPSILON * that sum.
// That is a worst case: rounding errors of random sign grow like sqrt(rank), and with SVD factors the
// leading components dominate the sum, so at the engine's ranks (tens) the error is of the order of the
// float output's own rounding (FLT_EPSILON / 2 = 6e-8 relative), far below the 1e-5 relative accuracy
// float reconstructions are held to. svdlrCudaBackendGTest checks the per-pixel bound against the naive
// kernel, which accumulates in double.

#include "svdlrLowRankProduct.h"

#include <cstdint>
#include <string>

namespace svdlr
{
namespace detail
{

/** The arithmetic type of the product for output type TOut: float for float output, double otherwise. */
template <typename TOut>
struct ProductComputeType
{
  using Type = double;
};
template <>
struct ProductComputeType<float>
{
  using Type = float;
};
template <typename TOut>
using ComputeType = typename ProductComputeType<TOut>::Type;

/** The tile the engine launches (LaunchTiledLowRankProduct): 64 x 64 outputs per block of 32 x 8 threads,
 * 8 x 2 accumulators per thread. The component step fills 16 KB of shared memory, (64 + 64) * kTileK
 * elements: 16 components in double, 32 in float. A 256 x 256 matrix makes 16 blocks, so a batch of 256
 * fills the 132 SMs of an H100 many times over. */
template <typename TOut>
struct EngineProductTile
{
  static constexpr int kTileM = 64;
  static constexpr int kTileN = 64;
  static constexpr int kTileK = sizeof(ComputeType<TOut>) == sizeof(float) ? 32 : 16;
  static constexpr int kThreadsX = 32;
  static constexpr int kThreadsY = 8;
};

__device__ inline float
MultiplyAdd(float a, float b, float c)
{
  return __fmaf_rn(a, b, c);
}

__device__ inline double
MultiplyAdd(double a, double b, double c)
{
  return __fma_rn(a, b, c);
}

/** Tiled kernel. A block computes a (kTileM, kTileN) tile of R for matrix blockIdx.z. Threads form a
 * (kThreadsY, kThreadsX) grid; thread (ty, tx) owns rows ty + r * kThreadsY and columns tx + c * kThreadsX of
 * the tile, so a warp (one ty, 32 consecutive tx) stores 32 consecutive columns of a row: coalesced writes
 * into the row-major output. The component loop goes: load the (kTileK, kTileM) slice of P and the
 * (kTileK, kTileN) slice of Q into shared memory (reads along a component vector: coalesced; each element
 * rounded to ComputeType<TOut> on the way), barrier, accumulate from registers, barrier. */
template <typename TOut>
__global__ void
__launch_bounds__(EngineProductTile<TOut>::kThreadsX * EngineProductTile<TOut>::kThreadsY)
  TiledLowRankProductKernel(const LowRankProductArguments<TOut> args)
{
  using Compute = ComputeType<TOut>;
  constexpr int kTileM = EngineProductTile<TOut>::kTileM;
  constexpr int kTileN = EngineProductTile<TOut>::kTileN;
  constexpr int kTileK = EngineProductTile<TOut>::kTileK;
  constexpr int kThreadsX = EngineProductTile<TOut>::kThreadsX;
  constexpr int kThreadsY = EngineProductTile<TOut>::kThreadsY;
  constexpr int kThreads = kThreadsX * kThreadsY;
  constexpr int kRowsPerThread = kTileM / kThreadsY;
  constexpr int kColsPerThread = kTileN / kThreadsX;
  static_assert(kThreadsX % 32 == 0, "a warp must span whole rows of the tile for coalesced stores");
  static_assert(kTileM % kThreadsY == 0 && kTileN % kThreadsX == 0, "tile must split evenly over the threads");
  static_assert(kTileK > 0 && kRowsPerThread > 0 && kColsPerThread > 0, "empty tile");
  static_assert((kTileM + kTileN) * kTileK * sizeof(Compute) <= 48 * 1024, "static shared memory is capped at 48 KB");

  __shared__ Compute sharedP[kTileK][kTileM]; // (TileK, TileM)
  __shared__ Compute sharedQ[kTileK][kTileN]; // (TileK, TileN)

  const std::int64_t matrix = blockIdx.z;
  const std::int64_t rows = args.rows;
  const std::int64_t cols = args.cols;
  const std::int64_t rank = args.ranks[matrix];
  const std::int64_t rowBase = static_cast<std::int64_t>(blockIdx.y) * kTileM;
  const std::int64_t colBase = static_cast<std::int64_t>(blockIdx.x) * kTileN;
  const double *     p = args.p + matrix * rows * args.components; // (rows, components)
  const double *     q = args.q + matrix * cols * args.components; // (cols, components)
  const int          tx = threadIdx.x;
  const int          ty = threadIdx.y;
  const int          tid = ty * kThreadsX + tx;

  Compute accumulator[kRowsPerThread][kColsPerThread];
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r)
  {
#pragma unroll
    for (int c = 0; c < kColsPerThread; ++c)
    {
      accumulator[r][c] = Compute(0);
    }
  }

  // `rank` is the same for the whole block, so every thread takes the same number of trips and reaches
  // the barriers together.
  for (std::int64_t kBase = 0; kBase < rank; kBase += kTileK)
  {
    for (int e = tid; e < kTileK * kTileM; e += kThreads)
    {
      const int          k = e / kTileM;
      const int          i = e - k * kTileM;
      const std::int64_t row = rowBase + i;
      const std::int64_t component = kBase + k;
      sharedP[k][i] = (row < rows && component < rank) ? static_cast<Compute>(p[row + rows * component]) : Compute(0);
    }
    for (int e = tid; e < kTileK * kTileN; e += kThreads)
    {
      const int          k = e / kTileN;
      const int          j = e - k * kTileN;
      const std::int64_t col = colBase + j;
      const std::int64_t component = kBase + k;
      sharedQ[k][j] = (col < cols && component < rank) ? static_cast<Compute>(q[col + cols * component]) : Compute(0);
    }
    __syncthreads();

#pragma unroll
    for (int k = 0; k < kTileK; ++k)
    {
      Compute a[kRowsPerThread];
      Compute b[kColsPerThread];
#pragma unroll
      for (int r = 0; r < kRowsPerThread; ++r)
      {
        a[r] = sharedP[k][ty + r * kThreadsY]; // broadcast within the warp
      }
#pragma unroll
      for (int c = 0; c < kColsPerThread; ++c)
      {
        b[c] = sharedQ[k][tx + c * kThreadsX]; // consecutive per lane: no bank conflict
      }
#pragma unroll
      for (int r = 0; r < kRowsPerThread; ++r)
      {
#pragma unroll
        for (int c = 0; c < kColsPerThread; ++c)
        {
          accumulator[r][c] = MultiplyAdd(a[r], b[c], accumulator[r][c]);
        }
      }
    }
    __syncthreads();
  }

  TOut * out = args.output + matrix * rows * cols;
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r)
  {
    const std::int64_t row = rowBase + ty + r * kThreadsY;
#pragma unroll
    for (int c = 0; c < kColsPerThread; ++c)
    {
      const std::int64_t col = colBase + tx + c * kThreadsX;
      if (row < rows && col < cols)
      {
        out[row * cols + col] = static_cast<TOut>(accumulator[r][c]);
      }
    }
  }
}

namespace
{

constexpr std::int64_t kMaxGridYZ = 65535;

template <typename TOut>
bool
IsEmpty(const LowRankProductArguments<TOut> & arguments)
{
  return arguments.count == 0 || arguments.rows == 0 || arguments.cols == 0;
}

} // namespace

template <typename TOut>
bool
CanImplementLowRankProduct(const LowRankProductArguments<TOut> & arguments, std::string & why)
{
  if (arguments.rows < 0 || arguments.cols < 0 || arguments.count < 0 || arguments.components < 0)
  {
    why = "negative size";
    return false;
  }
  if (IsEmpty(arguments))
  {
    return true;
  }
  if (arguments.count > kMaxGridYZ)
  {
    why = "more than 65535 matrices in one launch (blockIdx.z is the matrix index)";
    return false;
  }
  constexpr std::int64_t kTileM = EngineProductTile<TOut>::kTileM;
  const std::int64_t     tileRows = (arguments.rows + kTileM - 1) / kTileM;
  if (tileRows > kMaxGridYZ)
  {
    why = "too many rows for the grid's y dimension";
    return false;
  }
  if (arguments.ranks == nullptr || arguments.output == nullptr ||
      (arguments.components > 0 && (arguments.p == nullptr || arguments.q == nullptr)))
  {
    why = "null device pointer";
    return false;
  }
  return true;
}

template <typename TOut>
cudaError_t
LaunchTiledLowRankProduct(const LowRankProductArguments<TOut> & arguments, cudaStream_t stream)
{
  if (IsEmpty(arguments))
  {
    return cudaSuccess;
  }
  using Tile = EngineProductTile<TOut>; // 64 x 64 x 32 for float output, 64 x 64 x 16 for double
  const dim3 block(Tile::kThreadsX, Tile::kThreadsY);
  const dim3 grid(static_cast<unsigned>((arguments.cols + Tile::kTileN - 1) / Tile::kTileN),
                  static_cast<unsigned>((arguments.rows + Tile::kTileM - 1) / Tile::kTileM),
                  static_cast<unsigned>(arguments.count));
  TiledLowRankProductKernel<TOut><<<grid, block, 0, stream>>>(arguments);
  return cudaGetLastError();
}

template bool
CanImplementLowRankProduct<float>(const LowRankProductArguments<float> &, std::string &);
template bool
CanImplementLowRankProduct<double>(const LowRankProductArguments<double> &, std::string &);
template cudaError_t
LaunchTiledLowRankProduct<float>(const LowRankProductArguments<float> &, cudaStream_t);
template cudaError_t
LaunchTiledLowRankProduct<double>(const LowRankProductArguments<double> &, cudaStream_t);

} // namespace detail
} // namespace svdlr
