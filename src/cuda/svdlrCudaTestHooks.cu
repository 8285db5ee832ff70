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
#include "svdlrCudaDevice.h"
#include "svdlrCudaHandles.h"
#include "svdlrCudaPipeline.h"
#include "svdlrDeviceBuffer.h"
#include "svdlrLowRankProduct.h"

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
  SVDLR_CUDA_CHECK(cudaMemset(deviceOutput.Data(), 0xFF, deviceOutput.Bytes()));

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

} // namespace testing
} // namespace detail
} // namespace svdlr
