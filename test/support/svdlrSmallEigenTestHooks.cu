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
#include "svdlrSmallEigenTestHooks.h"

#include "svdlrCudaCheck.h"
#include "svdlrDevicePoison.h"
#include "svdlrCudaDevice.h"
#include "svdlrCudaHandles.h"
#include "svdlrDeviceBuffer.h"
#include "svdlrEigenSolver.h"
#include "svdlrSmallEigenSolver.h"

#include <algorithm>

namespace svdlr
{
namespace detail
{
namespace testing
{

namespace
{

/** Milliseconds between two events recorded around the solve. */
class EventTimer
{
public:
  explicit EventTimer(cudaStream_t stream)
    : m_Stream(stream)
  {
    SVDLR_CUDA_CHECK(cudaEventCreate(&m_Start));
    SVDLR_CUDA_CHECK(cudaEventCreate(&m_Stop));
    SVDLR_CUDA_CHECK(cudaEventRecord(m_Start, m_Stream));
  }
  ~EventTimer()
  {
    (void)cudaEventDestroy(m_Start);
    (void)cudaEventDestroy(m_Stop);
  }
  EventTimer(const EventTimer &) = delete;
  EventTimer &
  operator=(const EventTimer &) = delete;

  double
  Stop()
  {
    SVDLR_CUDA_CHECK(cudaEventRecord(m_Stop, m_Stream));
    SVDLR_CUDA_CHECK(cudaEventSynchronize(m_Stop));
    float milliseconds = 0;
    SVDLR_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, m_Start, m_Stop));
    return milliseconds;
  }

private:
  cudaStream_t m_Stream;
  cudaEvent_t  m_Start{ nullptr };
  cudaEvent_t  m_Stop{ nullptr };
};

template <typename T>
void
Download(std::vector<T> & host, const DeviceBuffer<T> & device, std::size_t size)
{
  host.resize(size);
  if (size > 0)
  {
    SVDLR_CUDA_CHECK(cudaMemcpy(host.data(), device.Data(), size * sizeof(T), cudaMemcpyDeviceToHost));
  }
}

} // namespace

EigenResult
RunSmallEigenSolver(const std::vector<double> & matrices, std::int64_t n, std::int64_t count, std::int64_t maxVectors,
                    const std::vector<int> & vectorCounts, int deviceId)
{
  const ScopedDevice   device(deviceId);
  const StreamOwner    stream = CreateStream();
  const std::size_t    ucount = static_cast<std::size_t>(count);
  const std::size_t    un = static_cast<std::size_t>(n);
  DeviceBuffer<double> deviceMatrices;
  DeviceBuffer<double> eigenvalues;
  DeviceBuffer<double> vectors;
  DeviceBuffer<int>    counts;
  DeviceBuffer<int>    info;
  DeviceBuffer<unsigned char> workspace;
  deviceMatrices.Allocate(matrices.size());
  eigenvalues.Allocate(ucount * un);
  vectors.Allocate(std::max<std::size_t>(ucount * un * static_cast<std::size_t>(maxVectors), 1));
  info.Allocate(ucount);
  const std::size_t workspaceBytes = SmallEigenSolver::WorkspaceBytes(n, count, maxVectors);
  workspace.Allocate(workspaceBytes);
  SVDLR_CUDA_CHECK(
    cudaMemcpy(deviceMatrices.Data(), matrices.data(), deviceMatrices.Bytes(), cudaMemcpyHostToDevice));
  // Poison what the solver must write (all bits set: NaN), and the workspace too.
  svdlr::test::PoisonDeviceBytes(eigenvalues.Data(), eigenvalues.Bytes());
  svdlr::test::PoisonDeviceBytes(vectors.Data(), vectors.Bytes());
  svdlr::test::PoisonDeviceBytes(info.Data(), info.Bytes());
  svdlr::test::PoisonDeviceBytes(workspace.Data(), workspace.Bytes());
  if (!vectorCounts.empty())
  {
    counts.Allocate(ucount);
    SVDLR_CUDA_CHECK(cudaMemcpy(counts.Data(), vectorCounts.data(), counts.Bytes(), cudaMemcpyHostToDevice));
  }

  SmallEigenSolver::Arguments arguments;
  arguments.n = n;
  arguments.count = count;
  arguments.matrices = deviceMatrices.Data();
  arguments.eigenvalues = eigenvalues.Data();
  arguments.vectors = vectors.Data();
  arguments.maxVectors = maxVectors;
  arguments.vectorCounts = vectorCounts.empty() ? nullptr : counts.Data();
  arguments.info = info.Data();
  arguments.workspace = workspace.Data();
  arguments.workspaceBytes = workspaceBytes;

  EigenResult result;
  EventTimer  timer(stream.Get());
  SmallEigenSolver::RunEigenvalues(arguments, stream.Get());
  SmallEigenSolver::RunEigenvectors(arguments, stream.Get());
  result.milliseconds = timer.Stop();
  SVDLR_CUDA_CHECK(cudaStreamSynchronize(stream.Get()));
  Download(result.eigenvalues, eigenvalues, ucount * un);
  Download(result.vectors, vectors, ucount * un * static_cast<std::size_t>(maxVectors));
  Download(result.info, info, ucount);
  return result;
}

EigenResult
RunCusolverEigenSolver(const std::vector<double> & matrices, std::int64_t n, std::int64_t count, int deviceId)
{
  const ScopedDevice        device(deviceId);
  const StreamOwner         stream = CreateStream();
  const CusolverOwner       cusolver = CreateCusolver(stream.Get());
  const CusolverParamsOwner params = CreateCusolverParams();
  const std::size_t         ucount = static_cast<std::size_t>(count);
  const std::size_t         un = static_cast<std::size_t>(n);
  const EigenWorkspaceSize  size = QueryEigenWorkspace(cusolver.Get(), params.Get(), n, count);
  DeviceBuffer<double>        deviceMatrices;
  DeviceBuffer<double>        eigenvalues;
  DeviceBuffer<int>           info;
  DeviceBuffer<unsigned char> workspace;
  std::vector<unsigned char>  hostWorkspace(size.hostBytes);
  deviceMatrices.Allocate(matrices.size());
  eigenvalues.Allocate(ucount * un);
  info.Allocate(ucount);
  workspace.Allocate(std::max<std::size_t>(size.deviceBytes, 1));
  SVDLR_CUDA_CHECK(
    cudaMemcpy(deviceMatrices.Data(), matrices.data(), deviceMatrices.Bytes(), cudaMemcpyHostToDevice));

  EigenResult result;
  EventTimer  timer(stream.Get());
  SolveSymmetricEigenBatched(cusolver.Get(),
                             params.Get(),
                             deviceMatrices.Data(),
                             eigenvalues.Data(),
                             info.Data(),
                             n,
                             count,
                             workspace.Data(),
                             size.deviceBytes,
                             hostWorkspace.data(),
                             hostWorkspace.size());
  result.milliseconds = timer.Stop();
  SVDLR_CUDA_CHECK(cudaStreamSynchronize(stream.Get()));
  Download(result.eigenvalues, eigenvalues, ucount * un);
  Download(result.info, info, ucount);
  std::vector<double> ascendingVectors;
  Download(ascendingVectors, deviceMatrices, ucount * un * un);
  result.vectors.resize(ascendingVectors.size());
  for (std::size_t b = 0; b < ucount; ++b)
  {
    for (std::size_t c = 0; c < un; ++c)
    {
      const double * from = ascendingVectors.data() + (b * un + (un - 1 - c)) * un;
      std::copy(from, from + un, result.vectors.data() + (b * un + c) * un);
    }
  }
  return result;
}

} // namespace testing
} // namespace detail
} // namespace svdlr
