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
#ifndef svdlr_CudaPipelineTrace_h
#define svdlr_CudaPipelineTrace_h

// Optional instrumentation of the CUDA pipeline for benchmarks and tests: where the host's wall-clock time
// of one run goes, and knobs to try other staging configurations. The engine itself never fills or reads
// these; RunCuda passes no trace and default tuning.

#include "svdlrSubspacePlan.h"

#include <chrono>
#include <cstddef>
#include <vector>

namespace svdlr
{
namespace detail
{

/** Host wall-clock milliseconds per phase of one run, summed over batches. */
struct CudaPipelineTrace
{
  double      handles{ 0 };      // streams, events, cuBLAS and cuSOLVER handles
  double      deviceAlloc{ 0 };  // batch planning and device buffers
  double      stagingAlloc{ 0 }; // pinned staging chunks
  double      upload{ 0 };       // pageable -> pinned copies and enqueueing the host -> device copies
  double      launch{ 0 };       // enqueueing conversion, Gram matrices and the eigen-solver
  double      waitEigen{ 0 };    // host waiting for the eigenvalues (the GPU's solve shows up here)
  double      finish{ 0 };       // ranks and enqueueing the reconstruction
  double      download{ 0 };     // waiting for the reconstruction, device -> pinned -> caller copies
  double      teardown{ 0 };     // waiting for the streams and freeing everything
  std::size_t batches{ 0 };
  std::size_t batchSize{ 0 };
  std::size_t slots{ 0 };
  std::size_t stagingLanes{ 0 };
  std::size_t stagingChunkBytes{ 0 };
  // The subspace solver's check, per matrix in run order: checkWidth Ritz residual norms (largest Ritz value
  // first) and tr(G), as CheckSubspaceOptimality reads them (svdlrSubspaceCheck.h).
  std::vector<double> subspaceCheck;
  std::vector<double> ritzValues; // per matrix in run order: the checkWidth Ritz values, ascending
  std::size_t         checkWidth{ 0 };
};

/** Overrides for experiments; 0 keeps the pipeline's own choice. */
struct CudaPipelineTuning
{
  std::size_t    stagingLanes{ 0 };
  std::size_t    stagingChunkBytes{ 0 };
  SubspaceTuning subspace{};
  bool           forceRedo{ false }; // tests: every matrix fails the subspace check and is redone exactly
  bool           skipCheck{ false }; // benchmarks: no subspace check (and no redo), to measure what it costs
};

/** Adds the time from construction to destruction to `*target` (nothing when target is null). */
class TraceSpan
{
public:
  explicit TraceSpan(double * target)
    : m_Target(target)
    , m_Start(target != nullptr ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{})
  {}
  ~TraceSpan()
  {
    if (m_Target != nullptr)
    {
      *m_Target += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - m_Start).count();
    }
  }
  TraceSpan(const TraceSpan &) = delete;
  TraceSpan &
  operator=(const TraceSpan &) = delete;

private:
  double *                              m_Target;
  std::chrono::steady_clock::time_point m_Start;
};

} // namespace detail
} // namespace svdlr

#endif
