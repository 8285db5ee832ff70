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
// The block-size sweep of the reconstruction product (docs/performance.md): the tiled kernel in several tile
// shapes, the naive reference kernel in several block shapes, and cuBLAS's strided-batched GEMM, all on the
// same factors and timed with CUDA events. A benchmark hook, never used by the engine.
#include "svdlrCudaCheck.h"
#include "svdlrDevicePoison.h"
#include "svdlrCudaDevice.h"
#include "svdlrCudaHandles.h"
#include "svdlrCudaTestHooks.h"
#include "svdlrDeviceBuffer.h"
#include "svdlrNaiveProductKernel.cuh"
#include "svdlrReconstructionKernels.cuh"

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <type_traits>

namespace svdlr
{
namespace detail
{
namespace testing
{
namespace
{

EventOwner
CreateTimingEvent()
{
  cudaEvent_t event = nullptr;
  SVDLR_CUDA_CHECK(cudaEventCreate(&event));
  return EventOwner(event);
}

// Median device time of `launch` over `repeats` runs after one warm-up.
double
MedianMicroseconds(const std::function<void()> & launch, cudaStream_t stream, int repeats)
{
  const EventOwner start = CreateTimingEvent();
  const EventOwner stop = CreateTimingEvent();
  launch();
  std::vector<float> times;
  for (int i = 0; i < repeats; ++i)
  {
    SVDLR_CUDA_CHECK(cudaEventRecord(start.Get(), stream));
    launch();
    SVDLR_CUDA_CHECK(cudaEventRecord(stop.Get(), stream));
    SVDLR_CUDA_CHECK(cudaEventSynchronize(stop.Get()));
    float ms = 0.0f;
    SVDLR_CUDA_CHECK(cudaEventElapsedTime(&ms, start.Get(), stop.Get()));
    times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  return 1000.0 * times[times.size() / 2];
}

template <typename TOut, int kTileM, int kTileN, int kTileK, int kThreadsX, int kThreadsY>
void
LaunchTiled(const LowRankProductArguments<TOut> & args, cudaStream_t stream)
{
  SVDLR_CUDA_CHECK((LaunchTiledLowRankProductWithTile<TOut, kTileM, kTileN, kTileK, kThreadsX, kThreadsY>(args, stream)));
}

// Times the tiled kernel in one tile shape through `measure(name, launch)`; the name marks the engine's shape.
template <typename TOut, int kTileM, int kTileN, int kTileK, int kThreadsX, int kThreadsY, typename TMeasure>
void
MeasureTiled(const TMeasure & measure, const LowRankProductArguments<TOut> & args, cudaStream_t stream)
{
  using Engine = EngineProductTile<TOut>;
  const bool isEngine = kTileM == Engine::kTileM && kTileN == Engine::kTileN && kTileK == Engine::kTileK &&
                        kThreadsX == Engine::kThreadsX && kThreadsY == Engine::kThreadsY;
  const std::string name = "tiled " + std::to_string(kTileM) + "x" + std::to_string(kTileN) + "x" +
                           std::to_string(kTileK) + ", " + std::to_string(kThreadsX) + "x" +
                           std::to_string(kThreadsY) + " threads" + (isEngine ? " (engine)" : "");
  measure(name, [&args, stream]() { LaunchTiled<TOut, kTileM, kTileN, kTileK, kThreadsX, kThreadsY>(args, stream); });
}

template <typename TOut>
void
LaunchNaive(const LowRankProductArguments<TOut> & args, cudaStream_t stream, unsigned threadsX, unsigned threadsY)
{
  SVDLR_CUDA_CHECK(LaunchNaiveLowRankProductWithBlock(args, stream, threadsX, threadsY));
}

template <typename TOut>
double
MaxDifference(const std::vector<TOut> & a, const std::vector<TOut> & b)
{
  double largest = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i)
  {
    const double d = std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i]));
    largest = std::isnan(d) ? INFINITY : std::max(largest, d);
  }
  return largest;
}

} // namespace

template <typename TOut>
std::vector<ProductKernelTiming>
SweepLowRankProductKernels(std::int64_t count, std::int64_t rows, std::int64_t cols, std::int64_t components,
                           int repeats, int deviceId)
{
  const ScopedDevice device(deviceId);
  const StreamOwner  stream = CreateStream();
  const std::size_t  outputSize = static_cast<std::size_t>(count * rows * cols);

  // Random factors, the same for every configuration; every matrix uses all components.
  std::mt19937_64                        random(std::random_device{}());
  std::normal_distribution<double>       normal;
  std::vector<double>                    p(static_cast<std::size_t>(count * rows * components));
  std::vector<double>                    q(static_cast<std::size_t>(count * cols * components));
  for (double & v : p)
  {
    v = normal(random);
  }
  for (double & v : q)
  {
    v = normal(random);
  }
  DeviceBuffer<double> deviceP, deviceQ;
  DeviceBuffer<int>    deviceRanks;
  DeviceBuffer<TOut>   deviceOutput;
  deviceP.Allocate(p.size());
  deviceQ.Allocate(q.size());
  deviceRanks.Allocate(static_cast<std::size_t>(count));
  deviceOutput.Allocate(outputSize);
  const std::vector<int> ranks(static_cast<std::size_t>(count), static_cast<int>(components));
  SVDLR_CUDA_CHECK(cudaMemcpy(deviceP.Data(), p.data(), deviceP.Bytes(), cudaMemcpyHostToDevice));
  SVDLR_CUDA_CHECK(cudaMemcpy(deviceQ.Data(), q.data(), deviceQ.Bytes(), cudaMemcpyHostToDevice));
  SVDLR_CUDA_CHECK(cudaMemcpy(deviceRanks.Data(), ranks.data(), deviceRanks.Bytes(), cudaMemcpyHostToDevice));

  LowRankProductArguments<TOut> args;
  args.rows = rows;
  args.cols = cols;
  args.count = count;
  args.components = components;
  args.p = deviceP.Data();
  args.q = deviceQ.Data();
  args.ranks = deviceRanks.Data();
  args.output = deviceOutput.Data();

  auto result = [&]() {
    SVDLR_CUDA_CHECK(cudaStreamSynchronize(stream.Get()));
    std::vector<TOut> host(outputSize);
    SVDLR_CUDA_CHECK(cudaMemcpy(host.data(), deviceOutput.Data(), deviceOutput.Bytes(), cudaMemcpyDeviceToHost));
    return host;
  };
  auto poison = [&]() { svdlr::test::PoisonDeviceBytes(deviceOutput.Data(), deviceOutput.Bytes()); };

  std::vector<ProductKernelTiming> timings;
  poison();
  LaunchNaive(args, stream.Get(), 32, 8);
  const std::vector<TOut> reference = result();

  auto measure = [&](const std::string & name, const std::function<void()> & launch) {
    poison();
    const double microseconds = MedianMicroseconds(launch, stream.Get(), repeats);
    timings.push_back({ name, microseconds, MaxDifference(result(), reference) });
  };

  for (const auto & [bx, by] : std::vector<std::pair<unsigned, unsigned>>{ { 16, 16 }, { 32, 8 }, { 32, 32 } })
  {
    measure("naive " + std::to_string(bx) + "x" + std::to_string(by), [&, bx = bx, by = by]() {
      LaunchNaive(args, stream.Get(), bx, by);
    });
  }
  const cudaStream_t s = stream.Get();
  // The engine's shape is 64x64x32 for float output, 64x64x16 for double (EngineProductTile); the kernel
  // computes in float for float output, in double for double output, in every shape.
  MeasureTiled<TOut, 32, 32, 16, 32, 4>(measure, args, s);
  MeasureTiled<TOut, 32, 64, 16, 32, 8>(measure, args, s);
  MeasureTiled<TOut, 64, 64, 8, 32, 8>(measure, args, s);
  MeasureTiled<TOut, 64, 64, 16, 32, 8>(measure, args, s);
  MeasureTiled<TOut, 64, 64, 32, 32, 8>(measure, args, s);
  MeasureTiled<TOut, 64, 64, 16, 32, 16>(measure, args, s);
  MeasureTiled<TOut, 128, 64, 16, 32, 8>(measure, args, s);
  MeasureTiled<TOut, 64, 128, 16, 32, 8>(measure, args, s);

  // cuBLAS on the same factors in TOut: R (row-major rows x cols) is, column-major, the cols x rows matrix
  // Q P^T, so one strided-batched GEMM with B transposed writes it in place.
  DeviceBuffer<TOut> castP, castQ;
  castP.Allocate(p.size());
  castQ.Allocate(q.size());
  std::vector<TOut> hostP(p.begin(), p.end()), hostQ(q.begin(), q.end());
  SVDLR_CUDA_CHECK(cudaMemcpy(castP.Data(), hostP.data(), castP.Bytes(), cudaMemcpyHostToDevice));
  SVDLR_CUDA_CHECK(cudaMemcpy(castQ.Data(), hostQ.data(), castQ.Bytes(), cudaMemcpyHostToDevice));
  const CublasOwner cublas = CreateCublas(s);
  const TOut        one = 1, zero = 0;
  measure(std::is_same<TOut, float>::value ? "cuBLAS SGEMM (float factors)" : "cuBLAS DGEMM", [&]() {
    if constexpr (std::is_same<TOut, float>::value)
    {
      SVDLR_CUBLAS_CHECK(cublasSgemmStridedBatched(cublas.Get(), CUBLAS_OP_N, CUBLAS_OP_T, cols, rows, components,
                                                   &one, castQ.Data(), cols, cols * components, castP.Data(), rows,
                                                   rows * components, &zero, deviceOutput.Data(), cols, rows * cols,
                                                   count));
    }
    else
    {
      SVDLR_CUBLAS_CHECK(cublasDgemmStridedBatched(cublas.Get(), CUBLAS_OP_N, CUBLAS_OP_T, cols, rows, components,
                                                   &one, castQ.Data(), cols, cols * components, castP.Data(), rows,
                                                   rows * components, &zero, deviceOutput.Data(), cols, rows * cols,
                                                   count));
    }
  });
  return timings;
}

template SVDLR_CUDA_EXPORT std::vector<ProductKernelTiming>
SweepLowRankProductKernels<float>(std::int64_t, std::int64_t, std::int64_t, std::int64_t, int, int);
template SVDLR_CUDA_EXPORT std::vector<ProductKernelTiming>
SweepLowRankProductKernels<double>(std::int64_t, std::int64_t, std::int64_t, std::int64_t, int, int);

} // namespace testing
} // namespace detail
} // namespace svdlr
