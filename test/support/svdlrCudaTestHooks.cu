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
#include "svdlrCudaTestHooks.h"

#include "svdlrCudaCheck.h"
#include "svdlrDevicePoison.h"
#include "svdlrCudaDevice.h"
#include "svdlrCudaHandles.h"
#include "svdlrCudaPipeline.h"
#include "svdlrDeviceBuffer.h"
#include "svdlrLowRankProduct.h"
#include "svdlrNaiveProductKernel.cuh"
#include "svdlrSubspaceIteration.h"

#include <limits>
#include <string>

namespace svdlr
{
namespace detail
{
namespace testing
{

template <typename TOut>
std::vector<TOut>
RunLowRankProduct(ProductKernel kernel, const std::vector<double> & p, const std::vector<double> & q,
                  const std::vector<int> & ranks, std::int64_t rows, std::int64_t cols, std::int64_t components,
                  int deviceId)
{
  const ScopedDevice device(deviceId);
  const StreamOwner  stream = CreateStream();
  const std::size_t  count = ranks.size();
  const std::size_t  outputSize = count * static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);

  DeviceBuffer<double> deviceP;
  DeviceBuffer<double> deviceQ;
  DeviceBuffer<int>    deviceRanks;
  DeviceBuffer<TOut>   deviceOutput;
  deviceP.Allocate(p.size());
  deviceQ.Allocate(q.size());
  deviceRanks.Allocate(ranks.size());
  deviceOutput.Allocate(outputSize);
  SVDLR_CUDA_CHECK(cudaMemcpy(deviceP.Data(), p.data(), deviceP.Bytes(), cudaMemcpyHostToDevice));
  SVDLR_CUDA_CHECK(cudaMemcpy(deviceQ.Data(), q.data(), deviceQ.Bytes(), cudaMemcpyHostToDevice));
  SVDLR_CUDA_CHECK(cudaMemcpy(deviceRanks.Data(), ranks.data(), deviceRanks.Bytes(), cudaMemcpyHostToDevice));
  // Poison the output (all bits set: NaN for float and double) so that an unwritten pixel cannot pass.
  svdlr::test::PoisonDeviceBytes(deviceOutput.Data(), deviceOutput.Bytes());

  LowRankProductArguments<TOut> arguments;
  arguments.rows = rows;
  arguments.cols = cols;
  arguments.count = static_cast<std::int64_t>(count);
  arguments.components = components;
  arguments.p = deviceP.Data();
  arguments.q = deviceQ.Data();
  arguments.ranks = deviceRanks.Data();
  arguments.output = deviceOutput.Data();
  std::string why;
  if (!CanImplementLowRankProduct(arguments, why))
  {
    throw Error(ErrorCode::InvalidArgument, "svdlr test hook: " + why);
  }
  if (kernel == ProductKernel::Tiled)
  {
    SVDLR_CUDA_CHECK(LaunchTiledLowRankProduct(arguments, stream.Get()));
  }
  else
  {
    SVDLR_CUDA_CHECK(LaunchNaiveLowRankProduct(arguments, stream.Get()));
  }
  SVDLR_CUDA_CHECK(cudaStreamSynchronize(stream.Get()));

  std::vector<TOut> result(outputSize);
  SVDLR_CUDA_CHECK(cudaMemcpy(result.data(), deviceOutput.Data(), deviceOutput.Bytes(), cudaMemcpyDeviceToHost));
  return result;
}

template SVDLR_CUDA_EXPORT std::vector<float>
RunLowRankProduct<float>(ProductKernel, const std::vector<double> &, const std::vector<double> &,
                         const std::vector<int> &, std::int64_t, std::int64_t, std::int64_t, int);
template SVDLR_CUDA_EXPORT std::vector<double>
RunLowRankProduct<double>(ProductKernel, const std::vector<double> &, const std::vector<double> &,
                          const std::vector<int> &, std::int64_t, std::int64_t, std::int64_t, int);

std::vector<double>
RunOrthonormalize(const std::vector<double> & z, std::int64_t n, std::int64_t w, std::int64_t count, int deviceId)
{
  const ScopedDevice  device(deviceId);
  const StreamOwner   stream = CreateStream();
  const CublasOwner   cublas = CreateCublas(stream.Get());
  const std::size_t   ucount = static_cast<std::size_t>(count);
  DeviceBuffer<double> memory;
  memory.Allocate(SubspaceWorkspace::Doubles(n, w, ucount));
  const SubspaceWorkspace workspace = SubspaceWorkspace::Within(memory.Data(), n, w, ucount);
  SVDLR_CUDA_CHECK(cudaMemcpy(workspace.image, z.data(), z.size() * sizeof(double), cudaMemcpyHostToDevice));
  Orthonormalize(cublas.Get(), stream.Get(), workspace.image, workspace.basis, workspace, n, w, count);
  std::vector<double> q(z.size());
  SVDLR_CUDA_CHECK(cudaStreamSynchronize(stream.Get()));
  SVDLR_CUDA_CHECK(cudaMemcpy(q.data(), workspace.basis, q.size() * sizeof(double), cudaMemcpyDeviceToHost));
  return q;
}

template <typename T>
CudaPipelineTrace
ReconstructWithTrace(const MatrixBatch<const T> & input, const MatrixBatch<T> & output, const Options & options,
                     Report & report, const CudaPipelineTuning & tuning)
{
  CudaPipelineTrace trace;
  RunCudaInstrumented(input, output, options, report, &trace, tuning);
  return trace;
}

template SVDLR_CUDA_EXPORT CudaPipelineTrace
ReconstructWithTrace<float>(const MatrixBatch<const float> &, const MatrixBatch<float> &, const Options &, Report &,
                            const CudaPipelineTuning &);
template SVDLR_CUDA_EXPORT CudaPipelineTrace
ReconstructWithTrace<double>(const MatrixBatch<const double> &, const MatrixBatch<double> &, const Options &, Report &,
                             const CudaPipelineTuning &);

namespace
{

template <typename T>
std::size_t
SpanElements(const MatrixBatch<T> & batch)
{
  return (batch.count - 1) * batch.matrixStride + batch.MatrixSize();
}

/** Keeps its stream busy for about `nanoseconds` (single thread). */
__global__ void
SpinKernel(unsigned long long nanoseconds)
{
  unsigned long long start = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  for (unsigned long long now = start; now - start < nanoseconds;)
  {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  }
}

} // namespace

template <typename T>
Report
ReconstructThroughDevice(const MatrixBatch<const T> & input, const MatrixBatch<T> & output, const Options & options,
                         const DeviceRun & run)
{
  if (run.inPlace && output.matrixStride != input.matrixStride)
  {
    throw Error(ErrorCode::InvalidArgument, "svdlr test hook: in place, output needs the input's stride");
  }
  const ScopedDevice device(options.deviceId);
  const std::size_t  inputElements = SpanElements(input);

  DeviceBuffer<T> deviceInput;
  DeviceBuffer<T> deviceOutput;
  DeviceBuffer<T> staged; // the input, before the caller's stream moves it into deviceInput
  StreamOwner     stream;
  deviceInput.Allocate(inputElements);
  if (!run.inPlace)
  {
    deviceOutput.Allocate(SpanElements(output));
    svdlr::test::PoisonDeviceBytes(deviceOutput.Data(), deviceOutput.Bytes()); // NaN: unwritten shows
  }
  if (run.callerStream)
  {
    stream = CreateStream();
    staged.Allocate(inputElements);
    SVDLR_CUDA_CHECK(cudaMemcpy(staged.Data(), input.data, staged.Bytes(), cudaMemcpyHostToDevice));
    svdlr::test::PoisonDeviceBytes(deviceInput.Data(), deviceInput.Bytes());
    SpinKernel<<<1, 1, 0, stream.Get()>>>(20000000ULL);
    SVDLR_CUDA_CHECK(cudaGetLastError());
    SVDLR_CUDA_CHECK(
      cudaMemcpyAsync(deviceInput.Data(), staged.Data(), staged.Bytes(), cudaMemcpyDeviceToDevice, stream.Get()));
  }
  else
  {
    SVDLR_CUDA_CHECK(cudaMemcpy(deviceInput.Data(), input.data, deviceInput.Bytes(), cudaMemcpyHostToDevice));
    // A copy from pageable memory may return before its DMA lands, and the engine's non-blocking streams do not wait
    // for the legacy stream it ran on (svdlrDevicePoison.h).
    SVDLR_CUDA_CHECK(cudaDeviceSynchronize());
  }

  const MatrixBatch<const T> deviceIn{ deviceInput.Data(), input.count, input.rows, input.cols, input.matrixStride };
  const MatrixBatch<T>       deviceOut{ run.inPlace ? deviceInput.Data() : deviceOutput.Data(),
                                  output.count,
                                  output.rows,
                                  output.cols,
                                  output.matrixStride };
  const Report report = ReconstructOnDevice(deviceIn, deviceOut, options, stream.Get());
  SVDLR_CUDA_CHECK(cudaMemcpy(output.data, deviceOut.data, SpanElements(output) * sizeof(T), cudaMemcpyDeviceToHost));
  return report;
}

template SVDLR_CUDA_EXPORT Report
ReconstructThroughDevice<float>(const MatrixBatch<const float> &, const MatrixBatch<float> &, const Options &,
                                const DeviceRun &);
template SVDLR_CUDA_EXPORT Report
ReconstructThroughDevice<double>(const MatrixBatch<const double> &, const MatrixBatch<double> &, const Options &,
                                 const DeviceRun &);

} // namespace testing
} // namespace detail
} // namespace svdlr
