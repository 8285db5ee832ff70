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
#ifndef SVDLowRankDenoiseBatch_h
#define SVDLowRankDenoiseBatch_h

// SVDLowRankDenoiseSeries's batch mode (docs/batch.md): many series in one process, through the batch pipeline of
// the reconstruction (apps/batch: SVDLowRankBatchStages.h) with series as its items. Readers run the tool's first
// step (read and check a series, its mask and its known-sigma map), one worker per GPU (or one CPU worker) runs the
// filter on its device, writers write and commit the outputs: the steps of SVDLowRankDenoiseRun.h, so each output
// is what the tool writes for that series alone.

#include "SVDLowRankDenoiseOptions.h"

#include <string>
#include <vector>

namespace svdlr_tools
{

/** After parsing: the positional `paths` become the batch's inputs (batch mode) or INPUT and OUTPUT; the options
 * one mode does not take are usage errors. */
void
CheckDenoiseBatchCommandLine(DenoiseToolOptions & options, const std::vector<std::string> & paths);

/** Batch mode end to end: the runs, the pipeline, a line per series, the summary; the exit code (ExitSomeFailed
 * when some series failed). */
int
RunDenoiseBatch(const DenoiseToolOptions & options);

} // namespace svdlr_tools

#endif
