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
#ifndef SVDLowRankDenoiseRun_h
#define SVDLowRankDenoiseRun_h

// One series through SVDLowRankDenoiseSeries, in three steps that the single-series tool runs one after the other
// and the batch pipeline (SVDLowRankDenoiseBatch.h) runs on its reader, GPU worker and writer threads: the same
// code either way, so a series denoised in a batch is the series the tool alone writes, bit for bit.
//   PrepareSeriesDenoising: checks the inputs, reserves the outputs, reads the series, the mask and the known-sigma
//                           map, checks them, and sets the filter up;
//   Denoise:                runs the filter (on the CPU, or on a CUDA device);
//   Write:                  writes the series and the maps asked for, the NIfTI header fields and the sidecars under
//                           temporary names, then renames them all into place.
// The sidecar's record (SVDLowRankDenoiseProvenance.cxx) is the same for the single-series tool and its --batch mode.

#include "SVDLowRankDenoiseOptions.h"
#include "SVDLowRankDenoiseSummary.h"
#include "SVDLowRankProvenance.h"
#include "SVDLowRankUpFrontChecks.h"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace svdlr_tools
{

class SeriesDenoising
{
public:
  virtual ~SeriesDenoising() = default;

  /** Runs the filter with `backend` on `deviceId` (both recorded in the sidecar); a progress bar when `progress`. */
  virtual void
  Denoise(ToolBackend backend, int deviceId, bool progress) = 0;

  /** Writes every output and commits them together. Returns the provenance record (the sidecar's JSON). */
  virtual Json
  Write() = 0;

  /** What the run found, for the summary; valid after Denoise (its pointers while this object lives). */
  virtual const DenoiseSummary &
  Summary() const = 0;
};

/** The first step for `options` (input, outputs, maps and the filter's parameters). Throws UsageError (an output in
 * the way, a patch larger than the image), svdlr_io::OutputInTheWay, or InputError (an input that cannot be read,
 * is not a series, or holds NaN or Inf). `announce`: print the volumes of a DICOM series as they are grouped. `warmDevice`: start
 * the GPU's set-up (svdlr::StartCudaDenoiseWarmUp) once the series' header is read, so that it overlaps the reading
 * (one series run; batch mode's workers warm their own devices). The sidecar's checksums of a series file's inputs
 * start here too, once it is checked, beside its read. */
std::unique_ptr<SeriesDenoising>
PrepareSeriesDenoising(const DenoiseToolOptions & options, bool announce, bool warmDevice);

/** The outputs one series' run writes together, the series first (the last StagedFiles::Commit renames): the
 * series, the noise, rank and g-factor maps asked for and the further echoes' files, each NIfTI one followed by its
 * provenance sidecar. Batch mode's resume checks the whole set (a series whose set is incomplete is redone). */
std::vector<SetOutput>
DenoiseOutputSet(const DenoiseToolOptions & options);

/** The bytes a series file's pixels take as float32 (read from its header), 0 when not known (a DICOM folder). */
std::size_t
SeriesFloatBytes(const std::string & path);

/** The sidecar's record (SVDLowRankProvenance.h's Provenance): the options, and what the filter found (`rank` and
 * `sigma` inside the mask). */
Provenance
DenoiseProvenance(const char * tool, const DenoiseToolOptions & options, const DenoiseSummary & summary);

/** The sidecar beside `target`, one of the run's outputs: the noise and rank maps' describe their map
 * (MapSidecarJson, the series as "Sources"); the series' (and each echo's) is the run's document `provenanceJson`. */
Json
DenoiseSidecarJson(const std::string & target, const DenoiseToolOptions & options, const Json & provenanceJson);

} // namespace svdlr_tools

#endif
