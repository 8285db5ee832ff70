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

#include "SVDLowRankBatchInputs.h"
#include "SVDLowRankBatchStages.h"
#include "SVDLowRankDenoiseOptions.h"

#include <string>
#include <vector>

namespace svdlr_tools
{

/** One series of a batch, its companions, and where its outputs go. */
struct DenoiseBatchRun
{
  svdlr_batch::BatchInput series;        // the series file; `problem` says why it cannot be read, if known early
  std::string             mask;          // "" when none
  std::string             knownSigmaMap; // ""
};

/** After parsing: the positional `paths` become the batch's inputs (batch mode) or INPUT and OUTPUT; the options
 * one mode does not take are usage errors. */
void
CheckDenoiseBatchCommandLine(DenoiseToolOptions & options, const std::vector<std::string> & paths);

/** Whether `path` is a list of series (a file named .txt, .tsv or .list) rather than a series. */
bool
IsSeriesList(const std::string & path);

/** The runs `options.inputs` names: a list's lines (series, then optionally mask and known-sigma map, separated by
 * tabs; '#' comments; paths relative to the list's folder), and the files and folders (searched as the
 * reconstruction's batch searches, --glob included). Throws UsageError (two series with one output name), or
 * InputError (a list or folder that cannot be read). A series file named in a list that does not exist is a run
 * that fails by name, not an error of the whole run. */
std::vector<DenoiseBatchRun>
ListDenoiseBatchRuns(const DenoiseToolOptions & options);

/** One series' options: `options` with the run's input, mask, map and outputs under `outputDir`. */
DenoiseToolOptions
SeriesOptions(const DenoiseToolOptions & options, const DenoiseBatchRun & run);

/** Runs every series through the pipeline; never throws for one series' failure. */
svdlr_batch::BatchSummary
DenoiseBatch(const std::vector<DenoiseBatchRun> & runs, const DenoiseToolOptions & options,
             const svdlr_batch::PipelineOptions & pipeline);

/** Batch mode end to end: the runs, the pipeline, a line per series, the summary; the exit code (ExitSomeFailed
 * when some series failed). */
int
RunDenoiseBatch(const DenoiseToolOptions & options);

} // namespace svdlr_tools

#endif
