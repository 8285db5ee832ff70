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
#include "SVDLowRankReconstructRun.h"

#include "SVDLowRankMethodLabels.h"
#include "SVDLowRankReconstructOutput.h"
#ifdef SVDLR_HAVE_DCMTK
#  include "SVDLowRankDicomCodecs.h"
#endif

#include "svdlr/Names.h"
#include "svdlr/RankPolicy.h"

#include <filesystem>
#include <iostream>

namespace svdlr_tools
{

std::string
FigureTitle(const ToolOptions &                    options,
            const svdlr::RankPolicy &              policy,
            const std::string &                    where,
            std::size_t                            rank,
            const svdlr_io::ReconstructionResult & result)
{
  std::ostringstream title;
  title << (options.inputs.size() == 1
              ? std::filesystem::path(WithoutTrailingSlash(options.Input())).filename().string()
              : std::to_string(options.inputs.size()) + " DICOM files")
        << " | " << where << " | rank " << rank << " (" << svdlr::PolicyDescription(policy) << ") | "
        << result.backend << ", solver " << result.solver;
  return title.str();
}

std::string
DicomOutputText(std::size_t files, const std::string & seriesDescription, const std::string & transferSyntaxUID,
                const std::string & more)
{
#ifdef SVDLR_HAVE_DCMTK
  return " (DICOM series, " + std::to_string(files) + (files == 1 ? " file: \"" : " files: \"") + seriesDescription +
         "\", " + svdlr_io::DescribeTransferSyntax(transferSyntaxUID) + more + ")";
#else
  (void)files, (void)seriesDescription, (void)transferSyntaxUID, (void)more;
  return " (DICOM series)";
#endif
}

void
PrintSummary(std::ostream &                         out,
             const svdlr_io::ReconstructionResult & result,
             const svdlr::RankPolicy &              policy,
             const SummaryText &                    text)
{
  out << "input:    " << result.input << "\n";
  for (const std::string & line : text.inputDetails)
  {
    out << line << "\n";
  }
  out << "slices:   " << text.slices << "\n"
      << "ranks:    " << svdlr_io::DescribeRanks(result.ranks) << "\n";
  if (*svdlr::NoiseRankName(policy) != '\0')
  {
    out << "noise:    sigma " << svdlr_io::DescribeRange(result.noiseSigmas) << " ("
        << svdlr::NoiseRankDescription(policy) << (policy.noiseSigma > 0.0 ? ", given)" : ", estimated per slice)")
        << "\n";
  }
  out << "backend:  " << result.backend << " (solver " << result.solver;
  if (result.slicesRedone > 0) // slices that failed the subspace solver's check, redone exactly
  {
    out << ", " << result.slicesRedone << " slices redone by the exact solver";
  }
  out << ")\n"
      << "time:     " << result.solveSeconds << " s (filter only";
  if (result.readSeconds > 0.0) // only where the pixels are read after the filter has started the device
  {
    out << "; reading the pixels " << result.readSeconds << " s";
  }
  out << "; writing " << result.writeSeconds << " s)\n"
      << "output:   " << result.output << text.outputKind << "\n";
  if (!text.sidecar.empty())
  {
    out << "sidecar:  " << text.sidecar << " (provenance)\n";
  }
  if (!result.notes.empty())
  {
    out << "note:     " << result.notes << "\n";
  }
  for (const std::string & note : text.notes)
  {
    out << "note:     " << note << "\n";
  }
  if (!text.figure.empty())
  {
    out << "figure:   " << text.figure << "\n";
  }
}

Provenance
RunProvenance(const ToolOptions & options, const svdlr_io::ReconstructionResult & result)
{
  Provenance provenance;
  provenance.tool = "SVDLowRankReconstructImage";
  provenance.commandLine = options.run.commandLine;
  // Named as everywhere else, by RankPolicy.h: "fixed", "energy", "gd", "mp" or "mp-cg", and its description.
  const svdlr::RankPolicy policy = RankPolicyOf(options);
  auto &                  parameters = provenance.parameters;
  parameters["policy"] = svdlr::PolicyName(policy);
  parameters["description"] = svdlr::PolicyDescription(policy);
  switch (policy.kind)
  {
    case svdlr::RankPolicy::Kind::FixedRank:
      parameters["rank"] = policy.rank;
      break;
    case svdlr::RankPolicy::Kind::EnergyFraction:
      parameters["energyFraction"] = JsonNumber(policy.energyFraction);
      break;
    default:
      parameters["noiseSigma"] = policy.noiseSigma > 0.0 ? JsonNumber(policy.noiseSigma) : Json();
  }
  parameters["sliceAxis"] = options.sliceAxis >= 0 ? Json(options.sliceAxis) : Json();
  parameters["backend"] = svdlr::Name(static_cast<svdlr::Backend>(options.backend));
  parameters["solver"] = svdlr::Name(static_cast<svdlr::Solver>(options.solver));
  parameters["device"] = options.deviceId;
  parameters["outputType"] = options.outputType;
  parameters["threads"] = options.run.threads > 0 ? Json(options.run.threads) : Json();
  provenance.inputs = options.inputs;
  provenance.started = RunStartedUtc();
  provenance.outputs = { result.output };
  provenance.ranks.assign(result.ranks.begin(), result.ranks.end());
  provenance.sigmas = result.noiseSigmas;
  provenance.backend = result.backend;
  provenance.solver = result.solver;
  provenance.device = result.device;
  provenance.notes = result.notes;
  provenance.seconds = SecondsSinceRunStart();
  return provenance;
}

int
ReportRun(const ToolOptions &                    options,
          const svdlr_io::ReconstructionResult & result,
          const svdlr::RankPolicy &              policy,
          const SummaryText &                    text,
          const Json &                           provenanceJson)
{
  if (options.run.json)
  {
    std::cout << JsonText(provenanceJson);
  }
  else if (!options.run.quiet)
  {
    PrintSummary(std::cout, result, policy, text);
  }
  return ExitSuccess;
}

void
PrintStartLine(const ToolOptions & options)
{
  if (options.run.quiet || options.listSeries)
  {
    return;
  }
  std::cerr << "start:    SVDLowRankReconstructImage, "
            << (options.batch.enabled ? "batch mode, " + std::to_string(options.inputs.size()) +
                                  (options.inputs.size() == 1 ? " input path" : " input paths")
                : options.inputs.size() == 1 ? options.Input()
                                             : std::to_string(options.inputs.size()) + " DICOM files")
            << ", " << svdlr::PolicyDescription(RankPolicyOf(options)) << ", backend "
            << svdlr::Name(static_cast<svdlr::Backend>(options.backend)) << std::endl;
}

} // namespace svdlr_tools
