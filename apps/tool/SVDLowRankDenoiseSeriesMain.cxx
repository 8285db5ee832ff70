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
#include "SVDLowRankImageFileErrors.h"
#include "SVDLowRankDenoiseBatch.h"
#include "SVDLowRankDenoiseOptions.h"
#include "SVDLowRankDenoiseRun.h"
#include "SVDLowRankDenoiseSummary.h"
#include "SVDLowRankExitCodes.h"
#include "SVDLowRankInterruptCleanup.h"
#include "SVDLowRankProvenance.h"
#include "SVDLowRankStagedOutput.h"

#include "itkMacro.h"
#include "svdlr/Engine.h"

#include <exception>
#include <future>
#include <iostream>
#include <string>

using namespace svdlr_tools;

namespace
{

/** One series, the three steps one after the other, then the summary (or --json's document). */
int
RunTool(const DenoiseToolOptions & options)
{
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
  svdlr_io::InstallInterruptCleanup(DenoiseToolName, ExitInterrupted);
  std::cout << std::unitbuf; // every line reaches a pipeline's log as it is written, and none is lost to a signal
  RunStartedUtc();           // the provenance's clock starts here
  DenoiseToolOptions options;
  try
  {
    options = ParseDenoiseToolOptions(argc, argv);
  }
  catch (const UsageError & error)
  {
    std::cerr << DenoiseToolName << ": " << error.what() << "\nRun '" << DenoiseToolName << " --help' for the options.\n";
    return ExitUsage;
  }
  if (!options.helpText.empty())
  {
    std::cout << options.helpText;
    return ExitSuccess;
  }
  ApplyThreads(options.run.threads);
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

  try
  {
    return options.batch.enabled ? RunDenoiseBatch(options) : RunTool(options);
  }
  catch (const UsageError & error)
  {
    std::cerr << DenoiseToolName << ": " << error.what() << "\n";
    return ExitUsage;
  }
  catch (const svdlr_io::OutputInTheWay & error)
  {
    std::cerr << DenoiseToolName << ": " << error.what() << "\n";
    return ExitUsage;
  }
  catch (const InputError & error)
  {
    std::cerr << DenoiseToolName << ": " << error.what() << "\n";
    return ExitInputError;
  }
  catch (const svdlr_io::ImageFileError & error) // the read path's own judgement of a file, wherever it was made
  {
    std::cerr << DenoiseToolName << ": " << error.what() << "\n";
    return ExitInputError;
  }
  catch (const itk::ExceptionObject & error)
  {
    std::cerr << DenoiseToolName << ": " << error.GetDescription() << "\n";
    return ExitFailure;
  }
  catch (const std::exception & error)
  {
    std::cerr << DenoiseToolName << ": " << error.what() << "\n";
    return ExitFailure;
  }
}
