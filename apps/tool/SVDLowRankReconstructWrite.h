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
#ifndef SVDLowRankReconstructWrite_h
#define SVDLowRankReconstructWrite_h

// How SVDLowRankReconstructImage's single-volume paths write: the output planned and checked before the work
// starts (so that a taken or misplaced output fails fast), then written as planned and labelled from the policy.

#include "SVDLowRankMethodLabels.h"
#include "SVDLowRankNiftiWrite.h"
#include "SVDLowRankPngStack.h"
#include "SVDLowRankProvenance.h"
#include "SVDLowRankReconstructOutput.h"
#include "SVDLowRankReconstructRun.h"
#include "SVDLowRankReconstructionResult.h"
#include "SVDLowRankStagedOutput.h"
#ifdef SVDLR_HAVE_DCMTK
#  include "SVDLowRankDicomFrames.h"
#  include "SVDLowRankDicomWriter.h"
#endif

#include "itkImageFileWriter.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace svdlr_tools
{

/** Whether this build reads and writes DICOM, and the source a derived series is written from. */
#ifdef SVDLR_HAVE_DCMTK
constexpr bool DicomSupport = true;
using DicomSource = svdlr_io::DicomVolume;
#else
constexpr bool DicomSupport = false;
struct DicomSource
{};
#endif

/** Where the output goes, checked before the work starts so that a taken or misplaced output fails fast. */
struct OutputPlan
{
  OutputKind                                 kind{ OutputKind::File };
  std::string                                path;
  std::unique_ptr<svdlr_io::StagedDirectory> staged; // folder outputs
  /** An output file and its provenance sidecar (a NIfTI output's), renamed together by CommitOutputFile, the image
   * last: an image at its name means its sidecar is there too. */
  std::unique_ptr<svdlr_io::StagedFiles>     files;
  std::string                                imageTemporary;
  std::string                                sidecarTemporary; // "" when the output has no sidecar
  std::optional<svdlr_io::NiftiHeaderFields> niftiHeader; // the input's, for a NIfTI output file
#ifdef SVDLR_HAVE_DCMTK
  svdlr_io::DicomOutputSyntax transferSyntax{ svdlr_io::DicomOutputSyntax::Keep };
#endif
};

/** The plan for `resolved` (ResolveOutput's kind and path): checked against the options and the inputs, with
 * --transfer-syntax checked, an output file and the figure checked up front (SVDLowRankUpFrontChecks.h) and a
 * folder output staged. Throws UsageError, InputError or svdlr_io::OutputInTheWay. */
OutputPlan
PlanOutput(const ToolOptions & options, const std::pair<OutputKind, std::string> & resolved);

/** Writes `output` as `plan` says (a derived DICOM series labelled from `policy` and the result's ranks) and
 * commits a folder output (an output file waits for its sidecar: CommitOutputFile); says in `text` what was
 * written. */
template <typename TImage>
void
WriteOutput(const TImage *                         output,
            OutputPlan &                           plan,
            const svdlr::RankPolicy &              policy,
            const svdlr_io::ReconstructionResult & result,
            const ToolOptions &                    options,
            const DicomSource *                    dicomSource,
            SummaryText &                          text)
{
  if (plan.kind == OutputKind::File)
  {
    svdlr_io::ImageWriteSettings settings;
    settings.niftiFields = plan.niftiHeader; // the fields ITK's writer drops, set as it is written
    svdlr_io::WriteStagedFile(plan.imageTemporary, plan.path, [&](const std::string & temporary) {
      svdlr_io::WriteImageFile(output, temporary, settings);
    });
  }
  else if (plan.kind == OutputKind::PngStack)
  {
    const std::size_t clamped = svdlr_io::WritePngStackAsUnsigned(output, plan.staged->Path());
    text.outputKind = " (folder of PNG slices)";
    if (clamped > 0)
    {
      text.notes.push_back(std::to_string(clamped) + " values outside [0, 65535] were clamped to fit 16-bit PNG");
    }
  }
  else
  {
#ifdef SVDLR_HAVE_DCMTK
    const auto write =
      svdlr_io::DerivedSeriesOptions(policy, result.ranks, dicomSource, StemOf(options.Input()), plan.transferSyntax);
    const auto files =
      svdlr_io::WriteDicomSeries(svdlr_io::AsVolume<float>(output).GetPointer(), plan.staged->Path(), write);
    const std::string sourceSyntax = dicomSource != nullptr ? dicomSource->slices.front().transferSyntaxUID : "";
    text.outputKind = DicomOutputText(files.size(),
                                      write.seriesDescription,
                                      svdlr_io::ResolveDicomOutputSyntax(plan.transferSyntax, sourceSyntax),
                                      "");
#else
    (void)policy, (void)result, (void)options, (void)dicomSource;
#endif
  }
  if (plan.staged)
  {
    plan.staged->Commit();
  }
}

/** Writes the sidecar `provenance` of an output file (when it has one) and renames both into place, the image last
 * (StagedFiles::Commit, which verifies them). Does nothing for a folder output. */
void
CommitOutputFile(OutputPlan & plan, const Json & provenance);

} // namespace svdlr_tools

#endif
