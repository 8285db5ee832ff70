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
#ifndef SVDLowRankBatchPipeline_h
#define SVDLowRankBatchPipeline_h

// Many volumes reconstructed in one process: the batch pipeline (SVDLowRankBatchStages.h, docs/batch.md draws it)
// with volumes as its items:
//
//   readers (threads)  --queue-->  solvers (one per GPU, or one CPU solver)  --queue-->  writers (threads)
//   decode a file into a          svdlr::Reconstruct in place on the buffer,              compress and write
//   leased (pinned) buffer        on the worker's device                                   atomically, give the
//                                                                                           buffer back
//
// While a GPU works on one volume, readers decode the next ones and writers compress the previous ones.

#include "SVDLowRankBatchInputs.h"
#include "SVDLowRankBatchStages.h"

#include "svdlr/Engine.h"

#include <functional>
#include <string>
#include <vector>

namespace svdlr_batch
{

struct BatchOptions : PipelineOptions
{
  svdlr::RankPolicy policy{};
  svdlr::Solver     solver{ svdlr::Solver::Auto };
  int               compressionLevel{ 0 }; // the writers' (gzip 1-9 for .nii.gz); 0: svdlr_io::kDefaultGzipLevel
  unsigned          threads{ 0 };          // the CPU solver's threads (--nthreads); 0: every core
  /** What the caller writes beside a volume's output once it is written (its provenance sidecar): part of the
   * volume's set, which a resume checks whole (BatchJob::OutputSet). */
  std::function<std::vector<std::string>(const std::string & output)> companions;
};

/** Runs the pipeline over `inputs`, writing under `outputRoot` with names from OutputPathFor and MethodTag.
 * Never throws for one volume's failure; throws svdlr::Error for options the engine refuses before any work
 * (a CUDA device that does not exist). */
BatchSummary
RunBatch(const std::vector<BatchInput> & inputs, const std::string & outputRoot, const BatchOptions & options);

} // namespace svdlr_batch

#endif
