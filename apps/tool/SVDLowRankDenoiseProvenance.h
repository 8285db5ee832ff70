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
#ifndef SVDLowRankDenoiseProvenance_h
#define SVDLowRankDenoiseProvenance_h

// The denoiser's sidecar record (SVDLowRankProvenance.h's Provenance) from its options and its run's summary: the
// single-series tool and its --batch mode write the same one.

#include "SVDLowRankDenoiseOptions.h"
#include "SVDLowRankDenoiseSummary.h"
#include "SVDLowRankProvenance.h"

namespace svdlr_tools
{

/** The sidecar's record: the options, and what the filter found (`rank` and `sigma` inside the mask). */
Provenance
DenoiseProvenance(const char * tool, const DenoiseToolOptions & options, const DenoiseSummary & summary);

/** The sidecar beside `target`, one of the run's outputs: the noise and rank maps' describe their map
 * (MapSidecarJson, the series as "Sources"); the series' (and each echo's) is the run's document `provenanceJson`. */
Json
DenoiseSidecarJson(const std::string & target, const DenoiseToolOptions & options, const Json & provenanceJson);

} // namespace svdlr_tools

#endif
