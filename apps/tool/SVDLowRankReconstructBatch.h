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
#ifndef SVDLowRankReconstructBatch_h
#define SVDLowRankReconstructBatch_h

// SVDLowRankReconstructImage's batch mode: the options turned into a run of the batch pipeline
// (apps/batch), a line per volume as it finishes, and the summary.

#include "SVDLowRankReconstructOptions.h"

namespace svdlr_tools
{

/** Runs the batch. Returns ExitSuccess when every volume was written or skipped, ExitSomeFailed when some
 * failed. Throws UsageError for inputs that cannot be listed. */
int
RunBatchTool(const ToolOptions & options);

} // namespace svdlr_tools

#endif
