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
#ifndef svdlr_NaiveProductKernel_cuh
#define svdlr_NaiveProductKernel_cuh

// The reference for the engine's tiled low-rank product kernel (src/cuda/svdlrReconstructionKernels.cu):
// the simplest correct kernel, one thread per output pixel. Tests compare the fast kernel with it; the engine
// never launches it.

#include "svdlrLowRankProduct.h"

#include <cstdint>

namespace svdlr
{
namespace detail
{

/** Reference kernel: thread (x, y) of the grid computes R[y][x] of matrix blockIdx.z from global memory,
 * accumulating in double whatever TOut is. */
template <typename TOut>
__global__ void
NaiveLowRankProductKernel(const LowRankProductArguments<TOut> args)
{
  const std::int64_t matrix = blockIdx.z;
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
  const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= args.rows || col >= args.cols)
  {
    return;
  }
  const double * p = args.p + matrix * args.rows * args.components;
  const double * q = args.q + matrix * args.cols * args.components;
  const int      rank = args.ranks[matrix];
  double         sum = 0.0;
  for (int l = 0; l < rank; ++l)
  {
    sum += p[row + args.rows * l] * q[col + args.cols * l];
  }
  args.output[matrix * args.rows * args.cols + row * args.cols + col] = static_cast<TOut>(sum);
}

/** The naive kernel in the block shape the tests use. */
template <typename TOut>
cudaError_t
LaunchNaiveLowRankProduct(const LowRankProductArguments<TOut> & args, cudaStream_t stream)
{
  if (args.count == 0 || args.rows == 0 || args.cols == 0)
  {
    return cudaSuccess;
  }
  const dim3 block(32, 8);
  const dim3 grid(static_cast<unsigned>((args.cols + block.x - 1) / block.x),
                  static_cast<unsigned>((args.rows + block.y - 1) / block.y), static_cast<unsigned>(args.count));
  NaiveLowRankProductKernel<TOut><<<grid, block, 0, stream>>>(args);
  return cudaGetLastError();
}

} // namespace detail
} // namespace svdlr

#endif
