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

// Optional instrumentation of the CUDA pipeline for tests: the plan and the subspace check's data of one run, and
// overrides. The engine itself never fills or reads these; RunCuda passes no trace and default tuning.

#include <cstddef>
#include <vector>

namespace svdlr
{
namespace detail
{

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

} // namespace detail
} // namespace svdlr

#endif
