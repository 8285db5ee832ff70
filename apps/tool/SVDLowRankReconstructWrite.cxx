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
#include "SVDLowRankReconstructWrite.h"
#include "SVDLowRankUpFrontChecks.h"

#include <tuple>

namespace svdlr_tools
{
namespace
{

#ifdef SVDLR_HAVE_DCMTK
/** --transfer-syntax (Keep when not given), or a UsageError for a name unknown or a syntax that cannot be
 * written: called before the work starts. */
svdlr_io::DicomOutputSyntax
OutputSyntaxOf(const ToolOptions & options)
{
  if (options.transferSyntax.empty())
  {
    return svdlr_io::DicomOutputSyntax::Keep;
  }
  svdlr_io::DicomOutputSyntax transferSyntax = svdlr_io::DicomOutputSyntax::Keep;
  try
  {
    transferSyntax = svdlr_io::ParseDicomOutputSyntax(options.transferSyntax);
  }
  catch (const svdlr_io::DicomError & error)
  {
    throw UsageError(std::string("--transfer-syntax: ") + error.what());
  }
  const std::string problem = svdlr_io::DicomOutputSyntaxProblem(transferSyntax);
  if (!problem.empty())
  {
    throw UsageError("--transfer-syntax " + options.transferSyntax + ": " + problem);
  }
  return transferSyntax;
}
#endif

} // namespace

OutputPlan
PlanOutput(const ToolOptions & options, const std::pair<OutputKind, std::string> & resolved)
{
  OutputPlan plan;
  std::tie(plan.kind, plan.path) = resolved;
  if (plan.kind == OutputKind::DicomSeries && !DicomSupport)
  {
    throw UsageError("this build has no DICOM support (DCMTK was not found when it was built): choose another format");
  }
  if (plan.kind != OutputKind::DicomSeries && !options.transferSyntax.empty())
  {
    throw UsageError("--transfer-syntax applies to DICOM output only");
  }
#ifdef SVDLR_HAVE_DCMTK
  plan.transferSyntax = OutputSyntaxOf(options);
#endif
  for (const std::string & in : options.inputs)
  {
    if (svdlr_io::IsSameOrInside(plan.path, in) ||
        (plan.kind != OutputKind::File && svdlr_io::IsSameOrInside(in, plan.path)))
    {
      throw UsageError("the output '" + plan.path + "' would overwrite the input '" + in + "'");
    }
  }
  if (plan.kind == OutputKind::File)
  {
    // Its provenance sidecar and its figure are outputs of its set too, as SVDLowRankDenoiseSeries' are: a re-run
    // that finds only some of them names those missing.
    std::vector<SetOutput> set{ { plan.path, "output" } };
    if (svdlr_io::IsNiftiFileName(plan.path))
    {
      set.push_back({ SidecarPathFor(plan.path), "sidecar" });
    }
    const std::string figure = FigurePathFor(options, plan.path);
    if (!figure.empty() && !svdlr_io::IsSameOrInside(figure, plan.path))
    {
      set.push_back({ figure, "figure" });
    }
    CheckOutputSetUpFront(set, options.overwrite, options.inputs);
    plan.files = std::make_unique<svdlr_io::StagedFiles>(options.overwrite);
    plan.imageTemporary = plan.files->Add(plan.path); // the first added: renamed last
    if (svdlr_io::IsNiftiFileName(plan.path))
    {
      plan.sidecarTemporary = plan.files->Add(SidecarPathFor(plan.path));
    }
  }
  else
  {
    CheckOutputNameLength(plan.path, "output");
    // --overwrite replaces a folder of this writer's files only (the PNG slices or the DICOM files).
#ifdef SVDLR_HAVE_DCMTK
    const svdlr_io::NumberedFiles own =
      plan.kind == OutputKind::PngStack ? svdlr_io::PngStackFiles() : svdlr_io::DicomSeriesFiles();
#else
    const svdlr_io::NumberedFiles own = svdlr_io::PngStackFiles();
#endif
    plan.staged = std::make_unique<svdlr_io::StagedDirectory>(plan.path, options.overwrite, own); // makes its parents
  }
  // After the staged folder, which may have made the folders the figure goes into.
  CheckFigureUpFront(FigurePathFor(options, plan.path), plan.path, options.overwrite, options.inputs);
  return plan;
}

void
CommitOutputFile(OutputPlan & plan, const Json & provenance)
{
  if (!plan.files)
  {
    return;
  }
  if (!plan.sidecarTemporary.empty())
  {
    try
    {
      WriteJsonAtomically(provenance, plan.sidecarTemporary); // a temporary name: Commit() renames it
    }
    catch (...)
    {
      // ITK's NIfTI writer only prints a full disk: an image cut short is named first, not the sidecar's symptom.
      svdlr_io::VerifyWrittenFile(plan.imageTemporary, plan.path);
      throw;
    }
  }
  plan.files->Commit();
}

} // namespace svdlr_tools
