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
#include "svdlrNoiseThresholdOnDevice.h"

#include "svdlrDeviceBuffer.h"
#include "noise/svdlrNoiseThreshold.h"

namespace svdlr
{
namespace test
{
namespace
{

__global__ void
DecideNoiseRanks(const double * eigenvalues, int count, int rows, int cols, RankPolicy::Kind kind, double knownSigma,
                 MarchenkoPasturEstimator estimator, DeviceNoiseDecision * decisions)
{
  const int matrix = blockIdx.x * blockDim.x + threadIdx.x;
  if (matrix >= count)
  {
    return;
  }
  const int      values = rows < cols ? rows : cols;
  const double * own = eigenvalues + static_cast<long long>(matrix) * values;
  const auto     decided = kind == RankPolicy::Kind::GavishDonoho
                             ? detail::GavishDonohoRank(own, values, rows, cols, knownSigma)
                             : detail::MarchenkoPasturRank(own, values, rows, cols, estimator);
  const double   largest = own[values - 1] > 0.0 ? sqrt(own[values - 1]) : 0.0;
  decisions[matrix] = { decided.rank, decided.sigma,
                        detail::OptimalFrobeniusShrinkage(largest, decided.sigma, rows, cols) };
}

} // namespace

std::vector<DeviceNoiseDecision>
DecideNoiseRanksOnDevice(const std::vector<double> & eigenvalues, int count, int rows, int cols,
                         const RankPolicy & policy)
{
  using detail::CudaBuffer;
  using detail::MemorySpace;
  CudaBuffer<double, MemorySpace::Device>              deviceEigenvalues;
  CudaBuffer<DeviceNoiseDecision, MemorySpace::Device> deviceDecisions;
  deviceEigenvalues.Allocate(eigenvalues.size());
  deviceDecisions.Allocate(count);
  SVDLR_CUDA_CHECK(cudaMemcpy(deviceEigenvalues.Data(), eigenvalues.data(), eigenvalues.size() * sizeof(double),
                              cudaMemcpyHostToDevice));
  constexpr int threads = 64;
  DecideNoiseRanks<<<(count + threads - 1) / threads, threads>>>(
    deviceEigenvalues.Data(), count, rows, cols, policy.kind, policy.noiseSigma, policy.estimator,
    deviceDecisions.Data());
  SVDLR_CUDA_CHECK_LAUNCH("DecideNoiseRanks");
  std::vector<DeviceNoiseDecision> decisions(count);
  SVDLR_CUDA_CHECK(cudaMemcpy(decisions.data(), deviceDecisions.Data(), count * sizeof(DeviceNoiseDecision),
                              cudaMemcpyDeviceToHost));
  return decisions;
}

} // namespace test
} // namespace svdlr
