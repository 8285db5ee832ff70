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
#ifndef SVDLowRankBatchOptions_h
#define SVDLowRankBatchOptions_h

// Batch mode as both tools spell it (docs/batch.md): the options (--batch, --glob, --devices, --readers,
// --writers, --memory, --compression-level, --table), defined once for CLI11; what they give the pipeline; and what
// a batch run prints: a line per item as it finishes, the summary, the table, and the exit code.

#include "SVDLowRankCommonOptions.h"

#include "SVDLowRankBatchInputs.h"
#include "SVDLowRankBatchStages.h"

#include <string>
#include <vector>

namespace svdlr_tools
{

struct BatchToolOptions
{
  bool                     enabled{ false };       // --batch, or implied by an option that only batch mode has
  std::vector<std::string> globs;                  // --glob: patterns a folder's files must match
  std::vector<int>         devices;                // --devices 0,1; empty: every GPU
  unsigned int             readers{ 0 };           // 0: the pipeline's default
  unsigned int             writers{ 0 };
  double                   memoryMiB{ 0 };         // 0: the pipeline's default budget
  std::string              table;                  // --table: the per-item table as TSV
  int                      compressionLevel{ 0 };  // --compression-level: the writers' gzip level; 0: kDefaultGzipLevel
};

/** The help group of batch mode's options. */
extern const char * const BatchGroup;

/** Adds --batch (described by `batchHelp`), --glob and the pipeline's options to `app`, in BatchGroup;
 * --compression-level for a tool whose writers take it. */
void
AddBatchOptions(CLI::App & app, BatchToolOptions & batch, const std::string & batchHelp,
                bool withCompressionLevel = true);

/** After parsing: --glob implies --batch; outside batch mode the pipeline's options are a usage error. */
void
CheckBatchOptions(BatchToolOptions & batch);

/** The inputs `selection` finds, the output tree excluded from the search: a UsageError for an input inside the
 * output folder or two inputs with one output name, an InputError for inputs that cannot be listed. */
std::vector<svdlr_batch::BatchInput>
ListBatchInputs(svdlr_batch::InputSelection selection, const std::string & outputRoot);

/** The pipeline's options from the command line's. */
svdlr_batch::PipelineOptions
PipelineOptionsOf(const BatchToolOptions & batch, ToolBackend backend, bool overwrite);

/** "[3/20] done: in -> out (ranks 4-12, sigma 10.2-31)", on stdout, or on stderr for a failure or a `problem`. */
void
PrintBatchItem(const svdlr_batch::VolumeResult & result, std::size_t finished, std::size_t total,
               const RunOptions & run, const std::string & problem = "");

/** What ends a batch run: the summary (or --json's document), the table, the failures' count on stderr. Returns
 * ExitSuccess when every item was written or skipped, ExitSomeFailed when some failed, ExitFailure when the table
 * cannot be written. `items` names the items in the last line ("volumes", "series"). */
int
FinishBatchRun(const svdlr_batch::BatchSummary & summary, const BatchToolOptions & batch, const RunOptions & run,
               const char * toolName, const char * items);

} // namespace svdlr_tools

#endif
