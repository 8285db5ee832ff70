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
#ifndef SVDLowRankReconstructRun_h
#define SVDLowRankReconstructRun_h

// What every path of SVDLowRankReconstructImage (an image file, PNG slices, a DICOM volume, a DICOM series read
// part by part) shares once its pixels are read: how the filter is set up for the policy (RankPolicyOf, which the
// batch path runs too), the figure, and what is reported from the run's svdlr_io::ReconstructionResult: the
// summary, the provenance sidecar and --json's document.

#include "SVDLowRankFigure.h"
#include "SVDLowRankProvenance.h"
#include "SVDLowRankReconstructOptions.h"
#include "SVDLowRankReconstructionResult.h"
#include "SVDLowRankStagedOutput.h"

#include "itkSVDLowRankEngineBridge.h"
#include "itkSVDLowRankReconstructionImageFilter.h"
#include "svdlr/RankPolicy.h"

#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace svdlr_tools
{

/** Sets the filter's rank policy (RankPolicyOf(options), which the batch path runs too), backend, solver, device
 * and slice axis. */
template <typename TFilter>
void
ConfigureFilter(TFilter * filter, const svdlr::RankPolicy & policy, const ToolOptions & options, unsigned int axis)
{
  itk::SVDLowRankEngineBridge::SetRankPolicy(filter, policy);
  filter->SetSliceDimension(axis);
  filter->SetBackend(options.backend);
  filter->SetSolver(options.solver);
  filter->SetDeviceId(options.deviceId);
  filter->WarnOnBackendFallbackOff(); // the summary prints it as a note of ours (ReconstructionResult::notes)
}

/** Whether the run prints progress and a summary (not under --quiet or --json, whose stdout is the document). */
inline bool
ReportsProgress(const ToolOptions & options)
{
  return !options.run.quiet && !options.run.json;
}

/** Adds what an updated filter reports (its slices' ranks and σ, the backend, the solver, the slices redone) to
 * `result`; a run in several batches adds each one in turn. */
template <typename TFilter>
void
AddFilterResult(const TFilter * filter, svdlr_io::ReconstructionResult & result)
{
  result.AddSlices(filter->GetEffectiveRanks(), filter->GetNoiseSigmas());
  std::ostringstream backend, solver;
  backend << filter->GetBackendUsed();
  solver << filter->GetSolverUsed();
  result.backend = backend.str();
  result.solver = solver.str();
  result.slicesRedone += filter->GetNumberOfSlicesRedone();
  result.notes = filter->GetBackendNotes();
}

/** The figure's title line: the input, which slice it shows (`where`), its rank, the policy, the backend. */
std::string
FigureTitle(const ToolOptions &                    options,
            const svdlr::RankPolicy &              policy,
            const std::string &                    where,
            std::size_t                            rank,
            const svdlr_io::ReconstructionResult & result);

/** Writes the figure of slice `slice` along `axis` of an updated filter to `path`, atomically and verified
 * (svdlr_io::WriteFileAtomically, which replaces a file there only with --overwrite), titled by FigureTitle. */
template <typename TImage, typename TFilter>
void
WriteFigure(const std::string &                    path,
            const ToolOptions &                    options,
            const svdlr::RankPolicy &              policy,
            const std::string &                    where,
            const svdlr_io::ReconstructionResult & result,
            const TImage *                         input,
            const TFilter *                        filter,
            unsigned int                           axis,
            std::size_t                            slice)
{
  const std::string title = FigureTitle(options, policy, where, filter->GetEffectiveRanks()[slice], result);
  svdlr_io::WriteFileAtomically(path, options.overwrite, [&](const std::string & temporary) {
    WriteSliceFigure(temporary,
                     title,
                     MiddleSlice(input, axis),
                     MiddleSlice(filter->GetOutput(), axis),
                     filter->GetSingularValues()[slice],
                     filter->GetEffectiveRanks()[slice]);
  });
}

/** The summary's lines that only the path knows; the rest comes from the result. */
struct SummaryText
{
  std::vector<std::string> inputDetails; // whole lines after "input:", e.g. the layout of a DICOM series
  std::string              slices;       // "181 along axis 2"
  std::string              outputKind;   // after the output's path: " (DICOM series, ...)"
  std::string              sidecar;      // the provenance sidecar's path; "" when none was written
  std::vector<std::string> notes;
  std::string              figure; // the figure's path and what it shows; "" when none was written
};

/** " (DICOM series, 7 files: "<description>", <transfer syntax><more>)". */
std::string
DicomOutputText(std::size_t files, const std::string & seriesDescription, const std::string & transferSyntaxUID,
                const std::string & more);

/** The summary of a single-volume run, as the tool prints it. */
void
PrintSummary(std::ostream &                         out,
             const svdlr_io::ReconstructionResult & result,
             const svdlr::RankPolicy &              policy,
             const SummaryText &                    text);

/** The provenance record of a run (its sidecar and --json's document): the tool, the command line, the parameters
 * as resolved (the defaults filled in), the inputs, the start time, and what `result` found. The batch path adds
 * its own times and input. */
Provenance
RunProvenance(const ToolOptions & options, const svdlr_io::ReconstructionResult & result);

/** The end of a single-volume run: --json prints `provenanceJson`, --quiet nothing, else the summary. */
int
ReportRun(const ToolOptions &                    options,
          const svdlr_io::ReconstructionResult & result,
          const svdlr::RankPolicy &              policy,
          const SummaryText &                    text,
          const Json &                           provenanceJson);

/** The line printed before any work, on stderr with the progress lines (stdout holds the summary or --json's
 * document alone), so that a pipeline's log shows at once what runs. Not under --quiet or --list-series. */
void
PrintStartLine(const ToolOptions & options);

} // namespace svdlr_tools

#endif
