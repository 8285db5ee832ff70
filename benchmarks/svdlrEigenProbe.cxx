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

// What bounds one small slice (W4: one 256 x 256 slice at k = 100) on the GPU: the time of each cuSOLVER
// route to the eigen-decomposition of one n x n float64 Gram matrix, the step that dominates it. Prints one
// table row per (routine, n) with the median over repeats (CUDA events, the matrix restored before each run).
//
//   svdlrEigenProbe [repeats]
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace
{

void
Check(bool ok, const char * what)
{
  if (!ok)
  {
    std::fprintf(stderr, "svdlrEigenProbe: %s failed\n", what);
    std::exit(1);
  }
}
#define PROBE_CUDA(call) Check((call) == cudaSuccess, #call)
#define PROBE_SOLVER(call) Check((call) == CUSOLVER_STATUS_SUCCESS, #call)

// A Gram matrix with the spectrum of MRI-like slices: a few strong values, then a slow noise plateau.
std::vector<double>
GramMatrix(int n)
{
  std::mt19937                     generator(7u);
  std::normal_distribution<double> normal;
  std::vector<double>              b(static_cast<std::size_t>(n) * n);
  for (int j = 0; j < n; ++j)
  {
    const double scale = 1.0 / (1.0 + 0.2 * j) + 0.02;
    for (int i = 0; i < n; ++i)
    {
      b[static_cast<std::size_t>(j) * n + i] = scale * normal(generator);
    }
  }
  std::vector<double> g(static_cast<std::size_t>(n) * n, 0.0);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
    {
      double sum = 0.0;
      for (int l = 0; l < n; ++l)
        sum += b[static_cast<std::size_t>(i) * n + l] * b[static_cast<std::size_t>(j) * n + l];
      g[static_cast<std::size_t>(j) * n + i] = sum;
    }
  return g;
}

double
MedianMs(int repeats, const double * pristine, double * work, std::size_t bytes, const std::function<void()> & solve)
{
  cudaEvent_t start, stop;
  PROBE_CUDA(cudaEventCreate(&start));
  PROBE_CUDA(cudaEventCreate(&stop));
  std::vector<float> times;
  for (int r = 0; r <= repeats; ++r) // the first run is a warm-up
  {
    PROBE_CUDA(cudaMemcpy(work, pristine, bytes, cudaMemcpyDeviceToDevice));
    PROBE_CUDA(cudaEventRecord(start));
    solve();
    PROBE_CUDA(cudaEventRecord(stop));
    PROBE_CUDA(cudaEventSynchronize(stop));
    float ms = 0.0f;
    PROBE_CUDA(cudaEventElapsedTime(&ms, start, stop));
    if (r > 0)
      times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  PROBE_CUDA(cudaEventDestroy(start));
  PROBE_CUDA(cudaEventDestroy(stop));
  return times[times.size() / 2];
}

} // namespace

int
main(int argc, char ** argv)
{
  const int          repeats = argc > 1 ? std::atoi(argv[1]) : 20;
  cusolverDnHandle_t handle;
  cusolverDnParams_t params;
  PROBE_SOLVER(cusolverDnCreate(&handle));
  PROBE_SOLVER(cusolverDnCreateParams(&params));
  syevjInfo_t jacobi;
  PROBE_SOLVER(cusolverDnCreateSyevjInfo(&jacobi));
  PROBE_SOLVER(cusolverDnXsyevjSetTolerance(jacobi, 1e-12));
  PROBE_SOLVER(cusolverDnXsyevjSetMaxSweeps(jacobi, 15));

  std::printf("| routine (float64, vectors) | n | kept | median ms |\n|---|---|---|---|\n");
  for (const int n : { 128, 160, 181, 256 })
  {
    const std::vector<double> host = GramMatrix(n);
    const std::size_t         bytes = host.size() * sizeof(double);
    double *pristine = nullptr, *a = nullptr, *w = nullptr;
    int *   info = nullptr;
    PROBE_CUDA(cudaMalloc(&pristine, bytes));
    PROBE_CUDA(cudaMalloc(&a, bytes));
    PROBE_CUDA(cudaMalloc(&w, n * sizeof(double)));
    PROBE_CUDA(cudaMalloc(&info, sizeof(int)));
    PROBE_CUDA(cudaMemcpy(pristine, host.data(), bytes, cudaMemcpyHostToDevice));
    const std::int64_t n64 = n;
    const std::int64_t kept = std::min<std::int64_t>(100, n);

    // The workspaces of all routines, sized once.
    std::size_t dBatched = 0, hBatched = 0, dSyevd = 0, hSyevd = 0, dSyevdx = 0, hSyevdx = 0;
    std::int64_t found = 0;
    PROBE_SOLVER(cusolverDnXsyevBatched_bufferSize(handle, params, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n64,
                                                   CUDA_R_64F, a, n64, CUDA_R_64F, w, CUDA_R_64F, &dBatched, &hBatched, 1));
    PROBE_SOLVER(cusolverDnXsyevd_bufferSize(handle, params, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n64,
                                             CUDA_R_64F, a, n64, CUDA_R_64F, w, CUDA_R_64F, &dSyevd, &hSyevd));
    PROBE_SOLVER(cusolverDnXsyevdx_bufferSize(handle, params, CUSOLVER_EIG_MODE_VECTOR, CUSOLVER_EIG_RANGE_I,
                                              CUBLAS_FILL_MODE_LOWER, n64, CUDA_R_64F, a, n64, nullptr, nullptr,
                                              n64 - kept + 1, n64, &found, CUDA_R_64F, w, CUDA_R_64F, &dSyevdx,
                                              &hSyevdx));
    int lworkJacobi = 0;
    PROBE_SOLVER(cusolverDnDsyevj_bufferSize(handle, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, a, n, w,
                                             &lworkJacobi, jacobi));
    const std::size_t deviceBytes =
      std::max({ dBatched, dSyevd, dSyevdx, static_cast<std::size_t>(lworkJacobi) * sizeof(double) });
    const std::size_t hostBytes = std::max({ hBatched, hSyevd, hSyevdx, std::size_t{ 1 } });
    void *            dWork = nullptr;
    std::vector<char> hWork(hostBytes);
    PROBE_CUDA(cudaMalloc(&dWork, std::max<std::size_t>(deviceBytes, 1)));

    const auto row = [&](const char * name, std::int64_t vectors, const std::function<void()> & solve) {
      std::printf("| %s | %d | %lld | %.3f |\n", name, n, static_cast<long long>(vectors),
                  MedianMs(repeats, pristine, a, bytes, solve));
    };
    row("XsyevBatched, batch of 1", n64, [&] {
      PROBE_SOLVER(cusolverDnXsyevBatched(handle, params, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n64, CUDA_R_64F,
                                          a, n64, CUDA_R_64F, w, CUDA_R_64F, dWork, dBatched, hWork.data(), hBatched,
                                          info, 1));
    });
    row("Xsyevd", n64, [&] {
      PROBE_SOLVER(cusolverDnXsyevd(handle, params, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n64, CUDA_R_64F, a,
                                    n64, CUDA_R_64F, w, CUDA_R_64F, dWork, dSyevd, hWork.data(), hSyevd, info));
    });
    row("Xsyevdx, leading 100 only", kept, [&] {
      PROBE_SOLVER(cusolverDnXsyevdx(handle, params, CUSOLVER_EIG_MODE_VECTOR, CUSOLVER_EIG_RANGE_I, CUBLAS_FILL_MODE_LOWER,
                                     n64, CUDA_R_64F, a, n64, nullptr, nullptr, n64 - kept + 1, n64, &found, CUDA_R_64F, w,
                                     CUDA_R_64F, dWork, dSyevdx, hWork.data(), hSyevdx, info));
    });
    row("Dsyevj (tol 1e-12, 15 sweeps)", n64, [&] {
      PROBE_SOLVER(cusolverDnDsyevj(handle, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, a, n, w,
                                    static_cast<double *>(dWork), lworkJacobi, info, jacobi));
    });
    PROBE_CUDA(cudaFree(dWork));
    PROBE_CUDA(cudaFree(pristine));
    PROBE_CUDA(cudaFree(a));
    PROBE_CUDA(cudaFree(w));
    PROBE_CUDA(cudaFree(info));
  }
  cusolverDnDestroySyevjInfo(jacobi);
  cusolverDnDestroyParams(params);
  cusolverDnDestroy(handle);
  return 0;
}
