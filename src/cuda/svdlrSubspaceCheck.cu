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

#include "svdlrBatchedGemm.h"
#include "svdlrCudaCheck.h"
#include "svdlrFactorKernels.cuh"
#include "slice/svdlrSubspaceCheck.h"
#include "svdlrSubspaceIteration.h"

#include <algorithm>

namespace svdlr
{
namespace detail
{
namespace
{

constexpr int kScaleThreads = 256;
constexpr int kCheckThreads = 256;

/** scaled (w, w) = leading (w, w) diag(theta), column c of leading being the eigenvector of the c-th largest
 * eigenvalue, eigenvalues ascending. */
__global__ void
__launch_bounds__(kScaleThreads)
  ScaleByRitzValuesKernel(const double * __restrict__ leading, const double * __restrict__ eigenvalues,
                          double * __restrict__ scaled, std::int64_t w, std::int64_t total)
{
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride)
  {
    const std::int64_t matrix = e / (w * w);
    const std::int64_t col = (e % (w * w)) / w;
    scaled[e] = leading[e] * eigenvalues[matrix * w + (w - 1 - col)];
  }
}

/** One block per matrix: tr(G) and the residual norms into data (w + 1 per matrix), then the criterion. */
__global__ void
__launch_bounds__(kCheckThreads)
  CheckKernel(const double * __restrict__ gram, const double * __restrict__ residuals,
              const double * __restrict__ eigenvalues, double * __restrict__ data, int * __restrict__ redo, int n,
              int w, int k)
{
  __shared__ double partial[kCheckThreads / 32];
  const std::size_t matrix = blockIdx.x;
  const double *    g = gram + matrix * static_cast<std::size_t>(n) * n;
  const double *    rho = residuals + matrix * static_cast<std::size_t>(n) * w;
  double *          out = data + matrix * static_cast<std::size_t>(w + 1);
  const int         lane = threadIdx.x % 32;
  const int         warp = threadIdx.x / 32;
  constexpr int     warps = kCheckThreads / 32;

  double diagonal = 0.0;
  for (int i = threadIdx.x; i < n; i += blockDim.x)
  {
    diagonal += g[static_cast<std::size_t>(i) * (n + 1)];
  }
  for (int offset = 16; offset > 0; offset /= 2)
  {
    diagonal += __shfl_down_sync(0xffffffffu, diagonal, offset);
  }
  if (lane == 0)
  {
    partial[warp] = diagonal;
  }
  for (int col = warp; col < w; col += warps)
  {
    double sum = 0.0;
    for (int r = lane; r < n; r += 32)
    {
      const double v = rho[r + static_cast<std::size_t>(n) * col];
      sum += v * v;
    }
    for (int offset = 16; offset > 0; offset /= 2)
    {
      sum += __shfl_down_sync(0xffffffffu, sum, offset);
    }
    if (lane == 0)
    {
      out[col] = sqrt(sum);
    }
  }
  __syncthreads();
  if (threadIdx.x == 0)
  {
    double trace = 0.0;
    for (int i = 0; i < warps; ++i)
    {
      trace += partial[i];
    }
    out[w] = trace;
    const SubspaceCheckOutcome outcome = CheckSubspaceOptimality(trace, eigenvalues + matrix * w, out, n, w, k);
    redo[matrix] = outcome.passes ? 0 : 1;
  }
}

} // namespace

void
CheckSubspaceBatched(cublasHandle_t handle, cudaStream_t stream, const double * gram, const double * basis,
                     const double * image, const double * eigenvectors, const double * eigenvalues,
                     const SubspaceWorkspace & workspace, std::int64_t n, std::int64_t w, std::int64_t k,
                     std::int64_t count, int * redo)
{
  if (count == 0)
  {
    return;
  }
  double * leading = workspace.inverse; // (count, w, w), descending order of theta
  double * residual = workspace.check;  // (count, n, w)
  double * scaled = workspace.CheckScaled(n, w, count);
  LaunchExtractLeadingEigenvectors(eigenvectors, leading, w, w, count, stream);
  const std::int64_t total = w * w * count;
  const std::int64_t blocks = std::min<std::int64_t>((total + kScaleThreads - 1) / kScaleThreads, 4096);
  ScaleByRitzValuesKernel<<<static_cast<unsigned>(blocks), kScaleThreads, 0, stream>>>(
    leading, eigenvalues, scaled, w, total);
  SVDLR_CUDA_CHECK_LAUNCH("ScaleByRitzValuesKernel");
  // Rho = Z W, then Rho -= Q (W Theta).
  MultiplyBatched(
    handle, CUBLAS_OP_N, CUBLAS_OP_N, n, w, w, image, n, n * w, leading, w, w * w, residual, n, n * w, count);
  MultiplyBatched(handle,
                  CUBLAS_OP_N,
                  CUBLAS_OP_N,
                  n,
                  w,
                  w,
                  basis,
                  n,
                  n * w,
                  scaled,
                  w,
                  w * w,
                  residual,
                  n,
                  n * w,
                  count,
                  -1.0,
                  1.0);
  CheckKernel<<<static_cast<unsigned>(count), kCheckThreads, 0, stream>>>(gram,
                                                                          residual,
                                                                          eigenvalues,
                                                                          workspace.CheckData(n, w, count),
                                                                          redo,
                                                                          static_cast<int>(n),
                                                                          static_cast<int>(w),
                                                                          static_cast<int>(k));
  SVDLR_CUDA_CHECK_LAUNCH("CheckKernel");
}

} // namespace detail
} // namespace svdlr
