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
#ifndef svdlr_LocalDenoiseStageClock_h
#define svdlr_LocalDenoiseStageClock_h

// Per-stage GPU time of the local denoiser on its compute stream, for the trace only (LocalDenoiseCudaTrace): a
// timing event after each stage; the time since the previous event is the stage's. Untraced runs record nothing.

#include "svdlrCudaCheck.h"
#include "svdlrLocalDenoiseCuda.h"

#include <cuda_runtime_api.h>

#include <array>
#include <vector>

namespace svdlr
{
namespace detail
{

class StageClock
{
public:
  enum Stage
  {
    Unpack,
    Gram,
    Tridiagonal,
    Eigenvalues,
    Ranks,
    Eigenvectors,
    Approximation,
    Finalise,
    Stages
  };

  StageClock() = default;
  ~StageClock()
  {
    for (const auto & mark : m_Marks)
    {
      (void)cudaEventDestroy(mark.event);
    }
  }
  StageClock(const StageClock &) = delete;
  StageClock &
  operator=(const StageClock &) = delete;

  /** Ends `stage` at this point of `stream` (the first mark is the origin). */
  void
  Mark(Stage stage, cudaStream_t stream)
  {
    cudaEvent_t event = nullptr;
    SVDLR_CUDA_CHECK(cudaEventCreate(&event));
    m_Marks.push_back({ event, stage });
    SVDLR_CUDA_CHECK(cudaEventRecord(event, stream));
  }

  /** After the stream is done: milliseconds per stage. */
  std::array<double, Stages>
  Elapsed() const
  {
    std::array<double, Stages> total{};
    for (std::size_t i = 1; i < m_Marks.size(); ++i)
    {
      float milliseconds = 0;
      SVDLR_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, m_Marks[i - 1].event, m_Marks[i].event));
      total[m_Marks[i].stage] += milliseconds;
    }
    return total;
  }

  /** After the stream is done: adds the stages' milliseconds to the trace's GPU times. */
  void
  AddTo(LocalDenoiseCudaTrace & trace) const
  {
    const auto gpu = Elapsed();
    trace.gpuUnpack += gpu[Unpack];
    trace.gpuGram += gpu[Gram];
    trace.gpuTridiagonal += gpu[Tridiagonal];
    trace.gpuEigenvalues += gpu[Eigenvalues];
    trace.gpuRanks += gpu[Ranks];
    trace.gpuEigenvectors += gpu[Eigenvectors];
    trace.gpuApproximation += gpu[Approximation];
    trace.gpuFinalise += gpu[Finalise];
  }

private:
  struct MarkAt
  {
    cudaEvent_t event;
    Stage       stage;
  };
  std::vector<MarkAt> m_Marks;
};

} // namespace detail
} // namespace svdlr

#endif
