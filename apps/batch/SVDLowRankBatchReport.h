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
#ifndef SVDLowRankBatchReport_h
#define SVDLowRankBatchReport_h

// What a batch run tells its user: one line per failed volume, the totals, the throughput and where the
// time went, and (on request) the whole table as tab-separated values.

#include "SVDLowRankBatchPipeline.h"

#include <ostream>
#include <string>

namespace svdlr_batch
{

/** One line for a finished volume, as the tool prints it while the run goes on. */
std::string
DescribeVolume(const VolumeResult & result);

/** The run's summary: counts, items per second, the time per step and the workers' busy share. `items` names the
 * items ("volumes", "series"). */
void
PrintBatchSummary(std::ostream & out, const BatchSummary & summary, const std::string & items = "volumes");

/** The table (input, output, status, slices, ranks, sigma, seconds per step, device, message) as TSV. */
void
WriteBatchTable(std::ostream & out, const BatchSummary & summary);

} // namespace svdlr_batch

#endif
