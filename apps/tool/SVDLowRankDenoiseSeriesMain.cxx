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

// SVDLowRankDenoiseSeries's entry: the command line parsed, one series (SVDLowRankDenoiseRun.h's three steps) or a
// batch (SVDLowRankDenoiseBatch.h) run, and every error turned into its exit code (docs/command-line.md).
#include "SVDLowRankCommonOptions.h"
#include "SVDLowRankDenoiseBatch.h"
#include "SVDLowRankDenoiseOptions.h"
#include "SVDLowRankDenoiseRun.h"
#include "SVDLowRankDenoiseSummary.h"
#include "SVDLowRankProvenance.h"

#include "svdlr/Engine.h"

#include <future>
#include <iostream>
#include <string>

using namespace svdlr_tools;

namespace
{

/** The start line, then one series, the three steps one after the other, and the summary (or --json's document); or
 * a batch. */
int
RunTool(const DenoiseToolOptions & options)
{
  if (!options.run.quiet)
  {
    // Before any work, so that a pipeline's log shows at once what runs; on stderr with the progress lines, so that
    // stdout holds the summary (or --json's document) alone.
    std::cerr << "start:    " << DenoiseToolName << ", "
              << (options.batch.enabled ? "batch of " + std::to_string(options.inputs.size()) + " input(s)"
                                        : options.input)
              << " -> " << options.output << ", policy " << options.policyName << ", backend "
              << svdlr::Name(static_cast<svdlr::Backend>(options.backend)) << std::endl;
  }
  if (options.batch.enabled)
  {
    return RunDenoiseBatch(options);
  }
  const bool talk = !options.run.quiet && !options.run.json;
  const auto series = PrepareSeriesDenoising(options, talk, true);
  series->Denoise(options.backend, options.deviceId, talk);
  // Done with the GPU: its contexts are torn down beside the write instead of at the exit, which then ends ~50 ms
  // sooner on the H200 (96x96x60x65: 105 against 155 ms from the summary to the exit). The future waits when it
  // goes, the write's exceptions included.
  const auto released = std::async(std::launch::async, svdlr::ReleaseCudaDevices);
  const Json provenance = series->Write();
  if (options.run.json)
  {
    std::cout << JsonText(provenance);
  }
  else if (!options.run.quiet)
  {
    PrintDenoiseSummary(std::cout, series->Summary());
  }
  return ExitSuccess;
}

} // namespace

int
main(int argc, char * argv[])
{
  RunStartedUtc(); // the provenance's clock starts here
  return ToolMain(DenoiseToolName, argc, argv, ParseDenoiseToolOptions, RunTool);
}
