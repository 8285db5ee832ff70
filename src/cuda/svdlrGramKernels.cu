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
#include "svdlrFactorKernels.cuh"

#include "svdlrBatchedGemm.h"
#include "svdlrCudaCheck.h"

#include <algorithm>
#include <cmath>

namespace svdlr
{
namespace detail
{
namespace
{

constexpr int kConvertThreads = 256;
constexpr int kConvertItemsPerThread = 8;

/** Not __restrict__: for double input the pipeline converts in place (input == output); each element is
 * read and then written by the same thread, which is safe without the aliasing promise.
 * One block row per matrix (blockIdx.x), several blocks along it (blockIdx.y) striding over its elements.
 * Each block ORs its threads' findings (__syncthreads_or) and one thread raises the matrix's flag, so the
 * flag costs one store per block, not per element. */
template <typename T>
__global__ void
__launch_bounds__(kConvertThreads)
  ConvertAndFlagNonFiniteKernel(const T * input, double * output, int * nonFiniteFlags, std::size_t matrixSize)
{
  const std::size_t matrix = blockIdx.x;
  const T *         in = input + matrix * matrixSize;
  double *          out = output + matrix * matrixSize;
  const std::size_t stride = static_cast<std::size_t>(gridDim.y) * blockDim.x;

  bool sawNonFinite = false;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.y) * blockDim.x + threadIdx.x; i < matrixSize; i += stride)
  {
    const double value = static_cast<double>(in[i]);
    const bool   finite = isfinite(value);
    sawNonFinite |= !finite;
    out[i] = finite ? value : 0.0;
  }
  if (__syncthreads_or(sawNonFinite) && threadIdx.x == 0)
  {
    nonFiniteFlags[matrix] = 1;
  }
}

} // namespace

template <typename T>
void
LaunchConvertAndFlagNonFinite(const T * input, double * output, int * nonFiniteFlags, std::size_t count,
                              std::size_t matrixSize, cudaStream_t stream)
{
  if (count == 0 || matrixSize == 0)
  {
    return;
  }
  // gridDim.x (matrices) may reach 2^31 - 1; gridDim.y is capped at 65535 and the kernel strides.
  constexpr std::size_t perBlock = static_cast<std::size_t>(kConvertThreads) * kConvertItemsPerThread;
  const std::size_t     blocksPerMatrix = std::min<std::size_t>((matrixSize + perBlock - 1) / perBlock, 65535);
  const dim3            grid(static_cast<unsigned>(count), static_cast<unsigned>(blocksPerMatrix));
  ConvertAndFlagNonFiniteKernel<T><<<grid, kConvertThreads, 0, stream>>>(input, output, nonFiniteFlags, matrixSize);
  SVDLR_CUDA_CHECK_LAUNCH("ConvertAndFlagNonFiniteKernel");
}

void
ComputeGramBatched(cublasHandle_t handle, const double * a, double * gram, std::int64_t rows, std::int64_t cols,
                   std::int64_t count)
{
  if (cols <= rows)
  {
    // G = A^T A = X X^T: (cols, cols) = (cols, rows) x (rows, cols).
    MultiplyBatched(handle,
                    CUBLAS_OP_N,
                    CUBLAS_OP_T,
                    cols,
                    cols,
                    rows,
                    a,
                    cols,
                    rows * cols,
                    a,
                    cols,
                    rows * cols,
                    gram,
                    cols,
                    cols * cols,
                    count);
  }
  else
  {
    // G = A A^T = X^T X: (rows, rows) = (rows, cols) x (cols, rows).
    MultiplyBatched(handle,
                    CUBLAS_OP_T,
                    CUBLAS_OP_N,
                    rows,
                    rows,
                    cols,
                    a,
                    cols,
                    rows * cols,
                    a,
                    cols,
                    rows * cols,
                    gram,
                    rows,
                    rows * rows,
                    count);
  }
}

template void
LaunchConvertAndFlagNonFinite<float>(const float *, double *, int *, std::size_t, std::size_t, cudaStream_t);
template void
LaunchConvertAndFlagNonFinite<double>(const double *, double *, int *, std::size_t, std::size_t, cudaStream_t);

} // namespace detail
} // namespace svdlr
