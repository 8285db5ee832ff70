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

#include "svdlrCudaPipelineTrace.h"
#include "svdlr/Engine.h"

#include "svdlrCudaExport.h"

namespace svdlr
{
namespace detail
{

/** RunCuda, filling `*trace` (when not null) with what the run did, under `tuning`. */
template <typename T>
SVDLR_CUDA_EXPORT void
RunCudaInstrumented(const MatrixBatch<const T> & input, const MatrixBatch<T> & output, const Options & options,
                    Report & report, CudaPipelineTrace * trace, const CudaPipelineTuning & tuning);

} // namespace detail
} // namespace svdlr

#endif
