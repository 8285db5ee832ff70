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
#ifndef SVDLowRankReconstructOptions_h
#define SVDLowRankReconstructOptions_h

// The command line of SVDLowRankReconstructImage, parsed by CLI11 (SVDLowRankReconstructOptions.cxx). Rules that
// need only the command line are checked there; where the output goes once the input is known, in
// SVDLowRankReconstructOutput.h. And its batch mode (SVDLowRankReconstructBatch.cxx): the options turned into a
// run of the batch pipeline (apps/batch), a line per volume as it finishes, and the summary.

#include "SVDLowRankBatchOptions.h"
#include "SVDLowRankCommonOptions.h"

#include "svdlr/Defaults.h"

#include "svdlr/RankPolicy.h"

#include <string>
#include <vector>

namespace svdlr_tools
{

struct ToolOptions
{
  std::vector<std::string> inputs;                        // one path, several DICOM files, or batch inputs
  std::string              output;                        // empty: derived from the input
  std::string              format{ "auto" };              // auto, nifti, mha, mhd, nrrd, png, dicom
  std::string              figure;
  unsigned int             rank{ static_cast<unsigned int>(svdlr::kDefaultRank) };
  bool                     rankGiven{ false };    // --rank on the command line
  double                   energyFraction{ 0.0 }; // > 0 selects the energy policy
  std::string              noiseRank;             // gd, mp, mp-cg: the rank from the noise
  double                   noiseSigma{ 0.0 };     // > 0: Gavish-Donoho with this known σ
  int                      sliceAxis{ -1 };       // -1: the last axis
  ToolBackend              backend{ ToolBackend::Auto };
  ToolSolver               solver{ ToolSolver::Auto };
  int                      deviceId{ 0 };
  std::string              series; // DICOM SeriesInstanceUID or number in the list
  std::string              transferSyntax; // DICOM output: svdlr_io::DicomOutputSyntaxNames(); empty: keep
  bool                     listSeries{ false };
  bool                     requireVolume{ false }; // refuse DICOM series that are not one volume
  bool                     overwrite{ false }; // replace an existing output folder
  bool                     noFigure{ false };
  std::string              outputType{ svdlr::kDefaultOutputTypeName }; // --output-type: float32 or same
  RunOptions               run;                                         // --quiet, --json, --nthreads

  // Batch mode (RunBatchTool): many volumes in one run, written to a mirrored tree under -o.
  BatchToolOptions batch;                // --batch (implied by --glob, --bids, --dicom-series), the pipeline's
  bool             bids{ false };        // --bids: sub-*/anat/*.nii[.gz] (and sub-*/ses-*/anat/)
  bool             dicomSeries{ false }; // --dicom-series: each DICOM series of the folders

  std::string helpText; // not empty: --help was given, print this and exit

  const std::string &
  Input() const
  {
    return inputs.front();
  }
};

/** Parses the command line; `dicomSupport` is what --help says about DICOM. Throws UsageError with CLI11's or our
 * own message. */
ToolOptions
ParseToolOptions(int argc, const char * const argv[], bool dicomSupport);

/** The rank policy the options ask for (--noise-rank with --noise-sigma, --energy, or --rank): the one both the
 * single path and the batch path run and label their outputs with. */
svdlr::RankPolicy
RankPolicyOf(const ToolOptions & options);

/** Runs the batch. Returns ExitSuccess when every volume was written or skipped, ExitSomeFailed when some
 * failed. Throws UsageError for inputs that cannot be listed. */
int
RunBatchTool(const ToolOptions & options);

} // namespace svdlr_tools

#endif
