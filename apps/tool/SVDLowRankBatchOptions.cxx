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
#include "SVDLowRankBatchOptions.h"

#include "SVDLowRankBatchReport.h"
#ifdef SVDLR_HAVE_DCMTK
#  include "SVDLowRankBatchDicomInputs.h"
#endif
#include "SVDLowRankProvenance.h"
#include "SVDLowRankStagedOutput.h"

#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>

namespace svdlr_tools
{
namespace
{

/** --json: the run's table as one JSON document. */
Json
BatchJson(const svdlr_batch::BatchSummary & summary, const char * toolName)
{
  Json volumes = Json::array();
  for (const auto & volume : summary.volumes)
  {
    volumes.push_back({ { "input", volume.input },
                        { "output", volume.output },
                        { "status", svdlr_batch::ToString(volume.status) },
                        { "message", volume.message },
                        { "slices", volume.slices },
                        { "rankMin", volume.rankMin },
                        { "rankMax", volume.rankMax },
                        { "sigmaMin", JsonNumber(volume.sigmaMin) },
                        { "sigmaMax", JsonNumber(volume.sigmaMax) },
                        { "device", volume.device >= 0 ? Json(volume.device) : Json() } });
  }
  return { { "tool", toolName },
           { "mode", "batch" },
           { "done", summary.done },
           { "skipped", summary.skipped },
           { "failed", summary.failed },
           { "seconds", JsonNumber(summary.wallSeconds) },
           { "volumes", volumes } };
}

} // namespace

const char * const BatchGroup = "Batch mode (many inputs in one run; docs/batch.md)";

void
AddBatchOptions(CLI::App & app, BatchToolOptions & batch, const std::string & batchHelp, bool withCompressionLevel)
{
  app.add_flag("--batch", batch.enabled, batchHelp)->group(BatchGroup);
  OneValuePerUse(app.add_option("--glob", batch.globs,
                 "(implies --batch) take a folder's files that match PATTERN: with a\n"
                 "'/' the path under the folder ('sub-*/anat/*.nii.gz'), else the\n"
                 "file name at any depth ('*.nrrd'); repeatable. Default: NIfTI,\n"
                 "NRRD, MetaImage and Analyze files"))
    ->type_name("PATTERN")
    ->group(BatchGroup);
  // One comma-separated word ("0,1"), parsed here: CLI11 2.1's list options take every following word, so
  // `--devices 0 folder` would read the folder as a second device.
  app
    .add_option_function<std::string>(
      "--devices",
      [&batch](const std::string & text) {
        const auto devices = ParseIntegerList(text, 0, 999999);
        if (!devices)
        {
          throw CLI::ValidationError("--devices",
                                     "must be device numbers separated by commas, e.g. 0,1; got '" + text + "'");
        }
        batch.devices.assign(devices->begin(), devices->end());
      },
      "the CUDA devices to use, one worker each, e.g. 0,1 (default: all)")
    ->type_name("0,1,...")
    ->group(BatchGroup);
  app.add_option("--readers", batch.readers,
                 "reader threads (default: a quarter of the cores, at least 2 per\n"
                 "GPU, at most half the cores)")
    ->type_name("N")
    ->check(WholeNumberValidator(1, 256))
    ->group(BatchGroup);
  app.add_option("--writers", batch.writers, "writer threads (default: the cores the readers leave)")
    ->type_name("N")
    ->check(WholeNumberValidator(1, 256))
    ->group(BatchGroup);
  app.add_option("--memory", batch.memoryMiB,
                 "MiB of inputs in flight (default: 1024 or 1/8 of the RAM; series:\n"
                 "1/4 of the RAM)")
    ->type_name("MIB")
    // Used as a byte count (a size_t): at least one byte, and at most 2^40 MiB, far below where the conversion
    // would overflow.
    ->check(NumberValidator("a number > 0 and at most 2^40 (1099511627776)",
                            [](double m) { return m * 1048576.0 >= 1.0 && m <= 1099511627776.0; }))
    ->group(BatchGroup);
  if (withCompressionLevel)
  {
    app.add_option("--compression-level", batch.compressionLevel,
                   "gzip level of .nii.gz outputs, 1 (fastest) to 9 (default: 1, about the smallest on noisy MRI too)")
      ->type_name("N")
      ->check(WholeNumberValidator(1, 9))
      ->group(BatchGroup);
  }
  app.add_option("--table", batch.table, "write the per-input table (tab-separated) to FILE")
    ->type_name("FILE")
    ->group(BatchGroup);
}

void
CheckBatchOptions(BatchToolOptions & batch)
{
  batch.enabled = batch.enabled || !batch.globs.empty();
  if (!batch.enabled && (!batch.devices.empty() || !batch.table.empty() || batch.readers > 0 || batch.writers > 0 ||
                         batch.memoryMiB > 0 || batch.compressionLevel > 0))
  {
    throw UsageError(
      "--devices, --readers, --writers, --memory, --compression-level and --table are for batch mode (--batch)");
  }
}

std::vector<svdlr_batch::BatchInput>
ListBatchInputs(svdlr_batch::InputSelection selection, const std::string & outputRoot)
{
  for (const std::string & input : selection.paths)
  {
    if (svdlr_io::IsSameOrInside(input, outputRoot))
    {
      throw UsageError("the input '" + input + "' lies inside the output folder '" + outputRoot + "'");
    }
  }
  selection.exclude = outputRoot; // an output tree inside an input folder is not searched
#ifdef SVDLR_HAVE_DCMTK
  selection.addDicomSeries = svdlr_batch::AddDicomSeries;
#endif
  try
  {
    return svdlr_batch::FindBatchInputs(selection);
  }
  catch (const svdlr_batch::BatchNameClash & error)
  {
    throw UsageError(error.what());
  }
  catch (const svdlr_batch::BatchInputError & error)
  {
    throw InputError(error.what());
  }
}

svdlr_batch::PipelineOptions
PipelineOptionsOf(const BatchToolOptions & batch, ToolBackend backend, bool overwrite)
{
  svdlr_batch::PipelineOptions pipeline;
  pipeline.backend = static_cast<svdlr::Backend>(backend); // the same values (SVDLowRankCommonOptions.cxx)
  pipeline.devices = batch.devices;
  pipeline.readers = batch.readers;
  pipeline.writers = batch.writers;
  pipeline.memoryBudget = static_cast<std::size_t>(batch.memoryMiB * 1024.0 * 1024.0);
  pipeline.overwrite = overwrite;
  return pipeline;
}

void
PrintBatchItem(const svdlr_batch::VolumeResult & result, std::size_t finished, std::size_t total,
               const RunOptions & run, const std::string & problem)
{
  const bool failed = result.status == svdlr_batch::VolumeStatus::Failed;
  if (failed || !problem.empty() || (!run.quiet && !run.json))
  {
    std::ostream & out = failed || !problem.empty() ? std::cerr : std::cout;
    out << "[" << finished << "/" << total << "] " << svdlr_batch::DescribeVolume(result) << problem << std::endl;
  }
}

int
FinishBatchRun(const svdlr_batch::BatchSummary & summary, const BatchToolOptions & batch, const RunOptions & run,
               const char * toolName, const char * items)
{
  if (run.json)
  {
    std::cout << JsonText(BatchJson(summary, toolName));
  }
  else if (!run.quiet)
  {
    if (!summary.notes.empty())
    {
      std::cout << "note:     " << summary.notes << "\n";
    }
    svdlr_batch::PrintBatchSummary(std::cout, summary, items);
  }
  if (!batch.table.empty())
  {
    std::ofstream table(batch.table);
    svdlr_batch::WriteBatchTable(table, summary);
    if (!table)
    {
      std::cerr << toolName << ": could not write the table to " << batch.table << "\n";
      return ExitFailure;
    }
    if (!run.quiet && !run.json)
    {
      std::cout << "table:    " << batch.table << "\n";
    }
  }
  if (summary.failed > 0)
  {
    std::cerr << toolName << ": " << summary.failed << " of " << summary.volumes.size() << " " << items
              << " failed (listed above); the others are done\n";
    return ExitSomeFailed;
  }
  return ExitSuccess;
}

} // namespace svdlr_tools
