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
#ifndef svdlr_CudaPipeline_h
#define svdlr_CudaPipeline_h

// The CUDA pipeline with its instrumentation exposed, for benchmarks and tests. The engine calls RunCuda
// (svdlrBackends.h), which is this with no trace and default tuning.

#include "svdlr/Engine.h"

#include "svdlrCudaExport.h"

#include <cstddef>
#include <vector>

namespace svdlr
{
namespace detail
{

// Optional instrumentation for tests, which the engine never fills or reads: the plan and the subspace check's data
// of one run, and overrides.

/** What one run did. */
struct CudaPipelineTrace
{
  std::size_t batches{ 0 };
  std::size_t batchSize{ 0 };
  // The subspace solver's check, per matrix in run order: checkWidth Ritz residual norms (largest Ritz value
  // first) and tr(G), as CheckSubspaceOptimality reads them (svdlrSubspaceCheck.h).
  std::vector<double> subspaceCheck;
  std::vector<double> ritzValues; // per matrix in run order: the checkWidth Ritz values, ascending
  std::size_t         checkWidth{ 0 };
};

/** Overrides for tests. */
struct CudaPipelineTuning
{
  bool forceRedo{ false }; // every matrix fails the subspace check and is redone exactly
};

/** RunCuda, filling `*trace` (when not null) with what the run did, under `tuning`. */
template <typename T>
SVDLR_CUDA_EXPORT void
RunCudaInstrumented(const MatrixBatch<const T> & input, const MatrixBatch<T> & output, const Options & options,
                    Report & report, CudaPipelineTrace * trace, const CudaPipelineTuning & tuning);

} // namespace detail
} // namespace svdlr

#endif
