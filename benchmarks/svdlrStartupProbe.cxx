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

// Where a fresh process's first CUDA result spends its time: each step of the CUDA backend's start-up, timed
// once in a fresh process (run it several times, and with CUDA_MODULE_LOADING=EAGER to see what lazy loading
// saves). The steps: the driver and the context, the library handles, the first cuSOLVER call of the shape,
// the engine's first and second run on a small batch of Colin27-sized slices, and the whole volume.
//
//   svdlrStartupProbe [rows cols slices rank]     (default 217 181 181 20: Colin27's axial slices)
#include "svdlr/Engine.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace
{
using Clock = std::chrono::steady_clock;
const Clock::time_point g_Start = Clock::now();

void
Step(const char * what, Clock::time_point & last)
{
  const Clock::time_point now = Clock::now();
  std::printf("| %-58s | %8.1f | %8.1f |\n", what, std::chrono::duration<double, std::milli>(now - last).count(),
              std::chrono::duration<double, std::milli>(now - g_Start).count());
  last = now;
}
} // namespace

int
main(int argc, char ** argv)
{
  const std::size_t rows = argc > 4 ? std::strtoul(argv[1], nullptr, 10) : 217;
  const std::size_t cols = argc > 4 ? std::strtoul(argv[2], nullptr, 10) : 181;
  const std::size_t slices = argc > 4 ? std::strtoul(argv[3], nullptr, 10) : 181;
  const std::size_t rank = argc > 4 ? std::strtoul(argv[4], nullptr, 10) : 20;

  std::setvbuf(stdout, nullptr, _IOLBF, 0); // each step's line out before a failure can end the run
  std::vector<float> volume(slices * rows * cols);
  for (std::size_t i = 0; i < volume.size(); ++i)
  {
    volume[i] = static_cast<float>(std::sin(0.001 * static_cast<double>(i)) + 0.1 * std::cos(0.37 * static_cast<double>(i % 977)));
  }
  std::printf("| step | ms | ms since start |\n|---|---|---|\n");
  Clock::time_point last = g_Start;
  Step("data made (host)", last);
  int devices = 0;
  cudaGetDeviceCount(&devices);
  Step("cudaGetDeviceCount (driver loaded)", last);
  cudaFree(nullptr);
  Step("cudaFree(0) (primary context created)", last);
  cublasHandle_t blas = nullptr;
  cublasCreate(&blas);
  Step("cublasCreate", last);
  cusolverDnHandle_t solver = nullptr;
  cusolverDnCreate(&solver);
  Step("cusolverDnCreate", last);
  cusolverDnDestroy(solver);
  cublasDestroy(blas);
  Step("both destroyed", last);

  svdlr::Options options;
  options.backend = svdlr::Backend::CUDA;
  options.policy = svdlr::RankPolicy::Fixed(rank);
  const std::size_t   size = rows * cols;
  std::vector<float>  out(volume.size());
  const auto run = [&](std::size_t count) {
    const svdlr::Report report = svdlr::Reconstruct(svdlr::MatrixBatch<const float>{ volume.data(), count, rows, cols, size },
                                                    svdlr::MatrixBatch<float>{ out.data(), count, rows, cols, size }, options);
    return report.solver;
  };
  const svdlr::Solver first = run(16);
  Step(first == svdlr::Solver::Subspace ? "engine, first run, 16 slices (subspace: kernels load)"
                                        : "engine, first run, 16 slices (exact: kernels load)",
       last);
  run(16);
  Step("engine, second run, 16 slices", last);
  run(slices);
  Step("engine, the whole volume (buffers grow)", last);
  run(slices);
  Step("engine, the whole volume again (warm)", last);
  svdlr::ReleaseCudaResources();
  Step("ReleaseCudaResources", last);
  return 0;
}
