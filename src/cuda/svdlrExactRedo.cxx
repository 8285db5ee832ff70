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
#include "svdlrSubspaceIteration.h"

#include "svdlrCudaCheck.h"
#include "svdlrDeviceBuffer.h"
#include "svdlrEigenSolver.h"
#include "svdlrFactorKernels.cuh"
#include "svdlrLowRankProduct.h"
#include "noise/svdlrRankSelection.h"

#include <algorithm>
#include <string>

namespace svdlr
{
namespace detail
{
namespace
{

// Matrices per sub-batch: enough to keep the eigen-solver busy when many fail, few enough that the buffers
// (about n^2 + 3 rows cols doubles per matrix plus cuSOLVER's workspace) fit beside the pipeline's own.
constexpr std::size_t kRedoChunk = 32;

template <typename T>
struct RedoBuffers
{
  DeviceBuffer<double>        gram;
  DeviceBuffer<double>        a;
  DeviceBuffer<double>        eigenvalues;
  DeviceBuffer<double>        factors; // P (chunk, rows, n) | Q (chunk, cols, n)
  DeviceBuffer<int>           status; // info | ranks
  DeviceBuffer<unsigned char> workspace;
  std::vector<unsigned char>  hostWorkspace;

  cudaError_t
  TryAllocate(std::size_t chunk, std::size_t n, std::size_t rows, std::size_t cols, const EigenWorkspaceSize & size)
  {
    cudaError_t result = gram.TryReserve(chunk * n * n);
    result = result == cudaSuccess ? a.TryReserve(chunk * rows * cols) : result;
    result = result == cudaSuccess ? eigenvalues.TryReserve(chunk * n) : result;
    result = result == cudaSuccess ? factors.TryReserve(chunk * (rows + cols) * n) : result;
    result = result == cudaSuccess ? status.TryReserve(2 * chunk) : result;
    result = result == cudaSuccess ? workspace.TryReserve(std::max<std::size_t>(size.deviceBytes, 1)) : result;
    if (result == cudaSuccess)
    {
      hostWorkspace.assign(size.hostBytes, 0);
    }
    return result;
  }
};

/** Redoes `count` matrices into `target` (count, rows, cols). */
template <typename T>
void
RedoChunk(const ExactRedoArguments<T> & arguments, const std::size_t * matrices, std::size_t count, T * target,
          RedoBuffers<T> & buffers, const EigenWorkspaceSize & size, const RankPolicy & policy, Report & report)
{
  const cudaStream_t stream = arguments.stream;
  const std::size_t  rows = static_cast<std::size_t>(arguments.rows);
  const std::size_t  cols = static_cast<std::size_t>(arguments.cols);
  const std::size_t  n = std::min(rows, cols);
  const std::size_t  elements = rows * cols;
  for (std::size_t j = 0; j < count; ++j)
  {
    SVDLR_CUDA_CHECK(cudaMemcpyAsync(buffers.gram.Data() + j * n * n,
                                     arguments.gram + matrices[j] * n * n,
                                     n * n * sizeof(double),
                                     cudaMemcpyDeviceToDevice,
                                     stream));
    SVDLR_CUDA_CHECK(cudaMemcpyAsync(buffers.a.Data() + j * elements,
                                     arguments.a + matrices[j] * elements,
                                     elements * sizeof(double),
                                     cudaMemcpyDeviceToDevice,
                                     stream));
  }
  int * info = buffers.status.Data();
  int * ranks = buffers.status.Data() + count;
  SolveSymmetricEigenBatched(arguments.cusolver,
                             arguments.cusolverParams,
                             buffers.gram.Data(),
                             buffers.eigenvalues.Data(),
                             info,
                             static_cast<std::int64_t>(n),
                             static_cast<std::int64_t>(count),
                             buffers.workspace.Data(),
                             size.deviceBytes,
                             buffers.hostWorkspace.empty() ? nullptr : buffers.hostWorkspace.data(),
                             size.hostBytes);
  std::vector<double> eigenvalues(count * n);
  std::vector<int>    hostStatus(2 * count);
  SVDLR_CUDA_CHECK(cudaMemcpyAsync(
    eigenvalues.data(), buffers.eigenvalues.Data(), eigenvalues.size() * sizeof(double), cudaMemcpyDeviceToHost, stream));
  SVDLR_CUDA_CHECK(cudaMemcpyAsync(hostStatus.data(), info, count * sizeof(int), cudaMemcpyDeviceToHost, stream));
  SVDLR_CUDA_CHECK(cudaStreamSynchronize(stream));

  std::size_t kmax = 0;
  for (std::size_t j = 0; j < count; ++j)
  {
    const std::size_t matrix = arguments.first + matrices[j];
    if (hostStatus[j] != 0)
    {
      throw Error(hostStatus[j] > 0 ? ErrorCode::NumericalFailure : ErrorCode::DeviceFailure,
                  "svdlr CUDA backend: the exact solver's redo of matrix " + std::to_string(matrix) +
                    " failed (cusolverDnXsyevBatched info " + std::to_string(hostStatus[j]) + ")",
                  static_cast<std::ptrdiff_t>(matrix));
    }
    std::vector<double> & singular = report.singularValues[matrix];
    SingularValuesFromGramEigenvalues(eigenvalues.data() + j * n, n, singular);
    const RankChoice choice = SelectRank(policy, singular.data(), n, rows, cols);
    report.ranks[matrix] = choice.rank;
    report.noiseSigmas[matrix] = choice.noiseSigma;
    hostStatus[count + j] = static_cast<int>(choice.rank);
    kmax = std::max(kmax, choice.rank);
  }
  SVDLR_CUDA_CHECK(cudaMemcpyAsync(ranks, hostStatus.data() + count, count * sizeof(int), cudaMemcpyHostToDevice, stream));

  const bool         tall = cols <= rows;
  double *           p = buffers.factors.Data();
  double *           q = buffers.factors.Data() + count * rows * kmax;
  const std::int64_t chunk = static_cast<std::int64_t>(count);
  const std::int64_t components = static_cast<std::int64_t>(kmax);
  LaunchExtractLeadingEigenvectors(
    buffers.gram.Data(), tall ? q : p, static_cast<std::int64_t>(n), components, chunk, stream);
  ComputeLargeSideFactor(
    arguments.cublas, buffers.a.Data(), tall ? q : p, tall ? p : q, arguments.rows, arguments.cols, components, chunk);
  LowRankProductArguments<T> product;
  product.rows = arguments.rows;
  product.cols = arguments.cols;
  product.count = chunk;
  product.components = components;
  product.p = p;
  product.q = q;
  product.ranks = ranks;
  product.output = target;
  std::string why;
  if (!CanImplementLowRankProduct(product, why))
  {
    throw Error(ErrorCode::InvalidArgument, "svdlr CUDA backend: " + why);
  }
  SVDLR_CUDA_CHECK(LaunchTiledLowRankProduct(product, stream));
  // The host vectors above and the buffers of the next chunk must not go before the stream is done with them.
  SVDLR_CUDA_CHECK(cudaStreamSynchronize(stream));
  for (std::size_t j = 0; j < count; ++j)
  {
    report.redoneMatrices.push_back(arguments.first + matrices[j]);
  }
  report.slicesRedone = report.redoneMatrices.size();
}

} // namespace

template <typename T>
void
ExactRedo<T>::Solve(const std::vector<std::size_t> & matrices, const RankPolicy & policy, Report & report)
{
  m_Matrices = matrices;
  if (matrices.empty())
  {
    return;
  }
  const std::size_t rows = static_cast<std::size_t>(m_Arguments.rows);
  const std::size_t cols = static_cast<std::size_t>(m_Arguments.cols);
  const std::size_t n = std::min(rows, cols);
  SVDLR_CUDA_CHECK(m_Output.TryReserve(matrices.size() * rows * cols));
  std::size_t    chunk = std::min(kRedoChunk, matrices.size());
  RedoBuffers<T> buffers;
  for (;;)
  {
    const EigenWorkspaceSize size = QueryEigenWorkspace(
      m_Arguments.cusolver, m_Arguments.cusolverParams, static_cast<std::int64_t>(n), static_cast<std::int64_t>(chunk));
    const cudaError_t status = buffers.TryAllocate(chunk, n, rows, cols, size);
    if (status == cudaSuccess)
    {
      break;
    }
    if (status != cudaErrorMemoryAllocation || chunk == 1)
    {
      SVDLR_CUDA_CHECK(status);
    }
    buffers = RedoBuffers<T>{};
    (void)cudaGetLastError();
    chunk /= 2;
  }
  for (std::size_t start = 0; start < matrices.size(); start += chunk)
  {
    const std::size_t        count = std::min(chunk, matrices.size() - start);
    const EigenWorkspaceSize size = QueryEigenWorkspace(
      m_Arguments.cusolver, m_Arguments.cusolverParams, static_cast<std::int64_t>(n), static_cast<std::int64_t>(count));
    if (size.deviceBytes > buffers.workspace.Size() || size.hostBytes > buffers.hostWorkspace.size())
    {
      throw Error(ErrorCode::DeviceFailure,
                  "svdlr CUDA backend: cusolverDnXsyevBatched asks for more workspace for " + std::to_string(count) +
                    " matrices than for " + std::to_string(chunk));
    }
    RedoChunk(
      m_Arguments, matrices.data() + start, count, m_Output.Data() + start * rows * cols, buffers, size, policy, report);
  }
}

template <typename T>
void
ExactRedo<T>::Scatter()
{
  const std::size_t elements = static_cast<std::size_t>(m_Arguments.rows * m_Arguments.cols);
  for (std::size_t j = 0; j < m_Matrices.size(); ++j)
  {
    SVDLR_CUDA_CHECK(cudaMemcpyAsync(m_Arguments.output + m_Matrices[j] * elements,
                                     m_Output.Data() + j * elements,
                                     elements * sizeof(T),
                                     cudaMemcpyDeviceToDevice,
                                     m_Arguments.stream));
  }
  SVDLR_CUDA_CHECK(cudaStreamSynchronize(m_Arguments.stream)); // before m_Output goes
}

template class ExactRedo<float>;
template class ExactRedo<double>;

} // namespace detail
} // namespace svdlr
