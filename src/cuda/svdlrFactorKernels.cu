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

namespace svdlr
{
namespace detail
{
namespace
{

constexpr int kExtractThreads = 256;

/** blockIdx.x: matrix; blockIdx.y strides over the n * kmax elements of its leading block. Reads and writes
 * run along a column, so both are coalesced. */
__global__ void
__launch_bounds__(kExtractThreads)
  ExtractLeadingEigenvectorsKernel(const double * __restrict__ eigenvectors, double * __restrict__ leading,
                                   std::int64_t n, std::int64_t kmax)
{
  const std::int64_t matrix = blockIdx.x;
  const double *     source = eigenvectors + matrix * n * n;
  double *           target = leading + matrix * n * kmax;
  const std::int64_t total = n * kmax;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.y) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.y) * blockDim.x + threadIdx.x; e < total; e += stride)
  {
    const std::int64_t component = e / n; // 0: largest eigenvalue
    const std::int64_t row = e - component * n;
    target[e] = source[row + n * (n - 1 - component)];
  }
}

} // namespace

void
LaunchExtractLeadingEigenvectors(const double * eigenvectors, double * leading, std::int64_t n, std::int64_t kmax,
                                 std::int64_t count, cudaStream_t stream)
{
  if (count == 0 || n == 0 || kmax == 0)
  {
    return;
  }
  const std::int64_t blocksPerMatrix =
    std::min<std::int64_t>((n * kmax + kExtractThreads - 1) / kExtractThreads, 65535);
  const dim3 grid(static_cast<unsigned>(count), static_cast<unsigned>(blocksPerMatrix));
  ExtractLeadingEigenvectorsKernel<<<grid, kExtractThreads, 0, stream>>>(eigenvectors, leading, n, kmax);
  SVDLR_CUDA_CHECK_LAUNCH("ExtractLeadingEigenvectorsKernel");
}

void
ComputeLargeSideFactor(cublasHandle_t handle, const double * a, const double * small, double * large, std::int64_t rows,
                       std::int64_t cols, std::int64_t kmax, std::int64_t count)
{
  if (count == 0 || kmax == 0)
  {
    return;
  }
  if (cols <= rows)
  {
    // P = A Q = X^T Q: (rows, kmax) = (rows, cols) x (cols, kmax).
    MultiplyBatched(handle,
                    CUBLAS_OP_T,
                    CUBLAS_OP_N,
                    rows,
                    kmax,
                    cols,
                    a,
                    cols,
                    rows * cols,
                    small,
                    cols,
                    cols * kmax,
                    large,
                    rows,
                    rows * kmax,
                    count);
  }
  else
  {
    // Q = A^T P = X P: (cols, kmax) = (cols, rows) x (rows, kmax).
    MultiplyBatched(handle,
                    CUBLAS_OP_N,
                    CUBLAS_OP_N,
                    cols,
                    kmax,
                    rows,
                    a,
                    cols,
                    rows * cols,
                    small,
                    rows,
                    rows * kmax,
                    large,
                    cols,
                    cols * kmax,
                    count);
  }
}

} // namespace detail
} // namespace svdlr
