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
#include "SVDLowRankReconstructOptions.h"

#include "SVDLowRankBatchPipeline.h"
#include "SVDLowRankNiftiRead.h"
#include "SVDLowRankNiftiWrite.h"
#include "SVDLowRankProvenance.h"
#include "SVDLowRankReconstructRun.h"
#include "SVDLowRankStagedOutput.h"

#include "svdlr/Names.h"

#include <iostream>

namespace svdlr_tools
{
namespace
{

/** What a NIfTI output of the batch gets beside it, as a single volume's does: the input's header fields that ITK's
 * writer drops, and the provenance sidecar. Runs on the pipeline's thread as each volume finishes. */
void
CompleteNiftiOutput(const ToolOptions & options, const svdlr_batch::VolumeResult & result)
{
  if (const auto header = svdlr_io::ReadNiftiHeaderFields(result.input))
  {
    svdlr_io::WriteNiftiHeaderFields(result.output, *header, options.batch.compressionLevel);
  }
  Provenance provenance = RunProvenance(options, result);
  provenance.inputs = { result.input };
  provenance.rankRange = std::make_pair(static_cast<double>(result.rankMin), static_cast<double>(result.rankMax));
  provenance.sigmaRange = std::make_pair(result.sigmaMin, result.sigmaMax);
  provenance.backend = result.device >= 0 ? "CUDA" : "CPU";
  provenance.device = result.device;
  provenance.seconds = result.readSeconds + result.solveSeconds + result.writeSeconds;
  WriteJsonAtomically(ProvenanceJson(provenance), SidecarPathFor(result.output));
}

} // namespace

int
RunBatchTool(const ToolOptions & options)
{
  svdlr_batch::InputSelection selection;
  selection.paths = options.inputs;
  selection.patterns = options.batch.globs;
  selection.bids = options.bids;
  selection.dicomSeries = options.dicomSeries;
  const std::vector<svdlr_batch::BatchInput> inputs = ListBatchInputs(selection, options.output);

  svdlr_batch::BatchOptions batch;
  static_cast<svdlr_batch::PipelineOptions &>(batch) = PipelineOptionsOf(options.batch, options.backend, options.overwrite);
  batch.policy = RankPolicyOf(options);
  batch.solver = static_cast<svdlr::Solver>(options.solver); // the same values (SVDLowRankCommonOptions.cxx)
  batch.compressionLevel = options.batch.compressionLevel;
  batch.threads = options.run.threads;
  batch.companions = [](const std::string & output) { // written by CompleteNiftiOutput: a resume checks it too
    return svdlr_io::IsNiftiFileName(output) ? std::vector<std::string>{ SidecarPathFor(output) } : std::vector<std::string>{};
  };
  batch.onVolume = [&options](const svdlr_batch::VolumeResult & result, std::size_t finished, std::size_t total) {
    std::string problem;
    if (result.status == svdlr_batch::VolumeStatus::Done && svdlr_io::IsNiftiFileName(result.output))
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
    PrintBatchItem(result, finished, total, options.run, problem);
  };
  std::ostream & log = options.run.json ? std::cerr : std::cout; // under --json, stdout is the document's
  if (!options.run.quiet)
  {
    log << inputs.size() << (inputs.size() == 1 ? " volume" : " volumes") << " -> " << options.output << std::endl;
  }
  const auto summary = svdlr_batch::RunBatch(inputs, options.output, batch);

  return FinishBatchRun(summary, options.batch, options.run, "SVDLowRankReconstructImage", "volumes");
}

} // namespace svdlr_tools
