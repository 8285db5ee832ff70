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
#include "SVDLowRankReconstructBatch.h"

#include "SVDLowRankBatchPipeline.h"
#include "SVDLowRankBatchReport.h"
#include "SVDLowRankNiftiHeader.h"
#include "SVDLowRankProvenance.h"
#include "SVDLowRankReconstructRun.h"
#include "SVDLowRankStagedOutput.h"

#include "svdlr/Names.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace svdlr_tools
{
namespace
{

svdlr::Backend
BackendOf(ToolBackend backend)
{
  switch (backend)
  {
    case ToolBackend::CPU:
      return svdlr::Backend::CPU;
    case ToolBackend::CUDA:
      return svdlr::Backend::CUDA;
    default:
      return svdlr::Backend::Auto;
  }
}

svdlr::Solver
SolverOf(ToolSolver solver)
{
  switch (solver)
  {
    case ToolSolver::Exact:
      return svdlr::Solver::Exact;
    case ToolSolver::Subspace:
      return svdlr::Solver::Subspace;
    default:
      return svdlr::Solver::Auto;
  }
}

/** What a NIfTI output of the batch gets beside it, as a single volume's does: the input's header fields that ITK's
 * writer drops, and the provenance sidecar. Runs on the pipeline's thread as each volume finishes. */
void
CompleteNiftiOutput(const ToolOptions & options, const svdlr_batch::VolumeResult & result)
{
  if (const auto header = ReadNiftiHeaderFields(result.input))
  {
    WriteNiftiHeaderFields(result.output, *header, options.compressionLevel);
  }
  Provenance provenance = RunProvenance(options, result);
  provenance.inputs = { result.input };
  provenance.rankRange = std::make_pair(static_cast<double>(result.rankMin), static_cast<double>(result.rankMax));
  provenance.sigmaRange = std::make_pair(result.sigmaMin, result.sigmaMax);
  provenance.backend = result.device >= 0 ? "CUDA" : "CPU";
  provenance.device = result.device;
  provenance.seconds = result.readSeconds + result.solveSeconds + result.writeSeconds;
  WriteTextAtomically(ProvenanceJson(provenance), SidecarPathFor(result.output));
}

/** --json: the run's table as one JSON document. */
std::string
BatchJson(const svdlr_batch::BatchSummary & summary)
{
  std::ostringstream json;
  json << "{\n  \"tool\": \"SVDLowRankReconstructImage\",\n  \"mode\": \"batch\",\n"
       << "  \"done\": " << summary.done << ",\n  \"skipped\": " << summary.skipped << ",\n  \"failed\": "
       << summary.failed << ",\n  \"seconds\": " << JsonNumber(summary.wallSeconds) << ",\n  \"volumes\": [";
  for (std::size_t i = 0; i < summary.volumes.size(); ++i)
  {
    const auto & volume = summary.volumes[i];
    json << (i == 0 ? "\n" : ",\n") << "    { \"input\": " << JsonString(volume.input)
         << ", \"output\": " << JsonString(volume.output)
         << ", \"status\": " << JsonString(svdlr_batch::ToString(volume.status))
         << ", \"message\": " << JsonString(volume.message) << ", \"slices\": " << volume.slices
         << ", \"rankMin\": " << volume.rankMin << ", \"rankMax\": " << volume.rankMax
         << ", \"sigmaMin\": " << JsonNumber(volume.sigmaMin) << ", \"sigmaMax\": " << JsonNumber(volume.sigmaMax)
         << ", \"device\": " << (volume.device >= 0 ? std::to_string(volume.device) : "null") << " }";
  }
  json << (summary.volumes.empty() ? "]\n}\n" : "\n  ]\n}\n");
  return json.str();
}

} // namespace

int
RunBatchTool(const ToolOptions & options)
{
  for (const std::string & input : options.inputs)
  {
    if (svdlr_io::IsSameOrInside(input, options.output))
    {
      throw UsageError("the input '" + input + "' lies inside the output folder '" + options.output + "'");
    }
  }
  svdlr_batch::InputSelection selection;
  selection.paths = options.inputs;
  selection.patterns = options.globs;
  selection.bids = options.bids;
  selection.dicomSeries = options.dicomSeries;
  selection.exclude = options.output; // an output tree inside an input folder is not searched
  std::vector<svdlr_batch::BatchInput> inputs;
  try
  {
    inputs = svdlr_batch::FindBatchInputs(selection);
  }
  catch (const svdlr_batch::BatchNameClash & error)
  {
    throw UsageError(error.what());
  }
  catch (const svdlr_batch::BatchInputError & error)
  {
    throw InputError(error.what());
  }

  svdlr_batch::BatchOptions batch;
  batch.policy = RankPolicyOf(options);
  batch.backend = BackendOf(options.backend);
  batch.solver = SolverOf(options.solver);
  batch.devices = options.devices;
  batch.readers = options.readers;
  batch.writers = options.writers;
  batch.memoryBudget = static_cast<std::size_t>(options.memoryMiB * 1024.0 * 1024.0);
  batch.overwrite = options.overwrite;
  batch.compressionLevel = options.compressionLevel;
  batch.threads = options.run.threads;
  batch.onVolume = [&options](const svdlr_batch::VolumeResult & result, std::size_t finished, std::size_t total) {
    std::string problem;
    if (result.status == svdlr_batch::VolumeStatus::Done && IsNiftiPath(result.output))
    {
      try
      {
        CompleteNiftiOutput(options, result);
      }
      catch (const std::exception & error)
      {
        problem = std::string(" (") + error.what() + ")";
      }
    }
    const bool failed = result.status == svdlr_batch::VolumeStatus::Failed;
    if (failed || !problem.empty() || (!options.run.quiet && !options.run.json))
    {
      std::ostream & out = failed || !problem.empty() ? std::cerr : std::cout;
      out << "[" << finished << "/" << total << "] " << svdlr_batch::DescribeVolume(result) << problem << std::endl;
    }
  };
  std::ostream & log = options.run.json ? std::cerr : std::cout; // under --json, stdout is the document's
  if (!options.run.quiet)
  {
    log << inputs.size() << (inputs.size() == 1 ? " volume" : " volumes") << " -> " << options.output << std::endl;
  }
  const auto summary = svdlr_batch::RunBatch(inputs, options.output, batch);

  if (options.run.json)
  {
    std::cout << BatchJson(summary);
  }
  else if (!options.run.quiet)
  {
    if (!summary.notes.empty())
    {
      std::cout << "note:     " << summary.notes << "\n";
    }
    svdlr_batch::PrintBatchSummary(std::cout, summary);
  }
  if (!options.table.empty())
  {
    std::ofstream table(options.table);
    svdlr_batch::WriteBatchTable(table, summary);
    if (!table)
    {
      std::cerr << "SVDLowRankReconstructImage: could not write the table to " << options.table << "\n";
      return ExitFailure;
    }
    if (!options.run.quiet && !options.run.json)
    {
      std::cout << "table:    " << options.table << "\n";
    }
  }
  if (summary.failed > 0)
  {
    std::cerr << "SVDLowRankReconstructImage: " << summary.failed << " of " << summary.volumes.size()
              << " volumes failed (listed above); the others are done\n";
    return ExitSomeFailed;
  }
  return ExitSuccess;
}

} // namespace svdlr_tools
