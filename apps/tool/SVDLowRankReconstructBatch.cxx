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
#include "SVDLowRankReconstructRun.h"
#include "SVDLowRankStagedOutput.h"

#include "svdlr/Names.h"

#include <filesystem>
#include <fstream>
#include <iostream>

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
  batch.onVolume = [](const svdlr_batch::VolumeResult & result, std::size_t finished, std::size_t total) {
    std::ostream & out = result.status == svdlr_batch::VolumeStatus::Failed ? std::cerr : std::cout;
    out << "[" << finished << "/" << total << "] " << svdlr_batch::DescribeVolume(result) << std::endl;
  };
  std::cout << inputs.size() << (inputs.size() == 1 ? " volume" : " volumes") << " -> " << options.output << "\n";
  const auto summary = svdlr_batch::RunBatch(inputs, options.output, batch);

  if (!summary.notes.empty())
  {
    std::cout << "note:     " << summary.notes << "\n";
  }
  svdlr_batch::PrintBatchSummary(std::cout, summary);
  if (!options.table.empty())
  {
    std::ofstream table(options.table);
    svdlr_batch::WriteBatchTable(table, summary);
    if (!table)
    {
      std::cerr << "SVDLowRankReconstructImage: could not write the table to " << options.table << "\n";
      return ExitFailure;
    }
    std::cout << "table:    " << options.table << "\n";
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
