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
#include "SVDLowRankDenoiseBatch.h"

#include "SVDLowRankBatchOptions.h"
#include "SVDLowRankDenoiseRun.h"
#include "SVDLowRankDenoiseSummary.h"
#include "SVDLowRankReadableFile.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>

namespace svdlr_tools
{
namespace
{
namespace fs = std::filesystem;

/** One series of a batch, its companions, and where its outputs go. */
struct DenoiseBatchRun
{
  svdlr_batch::BatchInput series;        // the series file; `problem` says why it cannot be read, if known early
  std::string             mask;          // "" when none
  std::string             knownSigmaMap; // ""
};

std::string
Trimmed(const std::string & text)
{
  const auto first = text.find_first_not_of(" \r\n");
  const auto last = text.find_last_not_of(" \r\n");
  return first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
}

/** The runs of a list file: a series per line, then optionally its mask and its known-sigma map, tab-separated
 * ("" or "-": none); '#' starts a comment line; a first line whose first field is "series" is a header. */
std::vector<DenoiseBatchRun>
ReadSeriesList(const std::string & listPath)
{
  std::ifstream list(listPath);
  if (!list)
  {
    throw InputError("cannot read the list '" + listPath + "'");
  }
  const fs::path folder = fs::path(listPath).parent_path();
  const auto     resolve = [&folder](const std::string & field) -> std::string {
    if (field.empty() || field == "-")
    {
      return {};
    }
    const fs::path path(field);
    return (path.is_absolute() ? path : folder / path).lexically_normal().generic_string();
  };
  std::vector<DenoiseBatchRun> runs;
  std::string                  line;
  for (std::size_t number = 1; std::getline(list, line); ++number)
  {
    const std::string content = Trimmed(line);
    if (content.empty() || content[0] == '#')
    {
      continue;
    }
    std::vector<std::string> fields;
    std::stringstream        split(content);
    for (std::string field; std::getline(split, field, '\t');)
    {
      fields.push_back(Trimmed(field));
    }
    if (runs.empty() && fields[0] == "series")
    {
      continue; // a header line
    }
    if (fields.size() > 3 || fields[0].empty() || fields[0] == "-")
    {
      throw InputError("'" + listPath + "' line " + std::to_string(number) +
                       ": expected a series, then optionally its mask and known-sigma map, separated by tabs");
    }
    DenoiseBatchRun run;
    run.series.path = resolve(fields[0]);
    // Mirrored under the output folder: the path under the list's folder, or the file's name for a path outside it.
    const fs::path relative = fs::path(fields[0]).lexically_normal();
    const bool     inside = !relative.is_absolute() && !relative.empty() && *relative.begin() != "..";
    run.series.relative = inside ? relative.generic_string() : relative.filename().string();
    run.mask = fields.size() > 1 ? resolve(fields[1]) : "";
    run.knownSigmaMap = fields.size() > 2 ? resolve(fields[2]) : "";
    runs.push_back(std::move(run));
  }
  if (runs.empty())
  {
    throw InputError("the list '" + listPath + "' names no series");
  }
  return runs;
}

/** Whether `path` is a list of series (a file named .txt, .tsv or .list) rather than a series. */
bool
IsSeriesList(const std::string & path)
{
  const std::string extension = svdlr_io::LowerCase(fs::path(path).extension().string());
  return extension == ".txt" || extension == ".tsv" || extension == ".list";
}

/** The runs `options.inputs` names: a list's lines (series, then optionally mask and known-sigma map, separated by
 * tabs; '#' comments; paths relative to the list's folder), and the files and folders (searched as the
 * reconstruction's batch searches, --glob included). Throws UsageError (two series with one output name), or
 * InputError (a list or folder that cannot be read). A series file named in a list that does not exist is a run
 * that fails by name, not an error of the whole run. */
std::vector<DenoiseBatchRun>
ListDenoiseBatchRuns(const DenoiseToolOptions & options)
{
  std::vector<DenoiseBatchRun> runs;
  for (const std::string & path : options.inputs)
  {
    std::error_code error;
    if (IsSeriesList(path) && fs::is_regular_file(path, error))
    {
      const auto listed = ReadSeriesList(path);
      runs.insert(runs.end(), listed.begin(), listed.end());
      continue;
    }
    svdlr_batch::InputSelection selection;
    selection.paths = { path };
    selection.patterns = options.batch.globs;
    for (auto & input : ListBatchInputs(selection, options.outputDir))
    {
      runs.push_back({ std::move(input), "", "" });
    }
  }
  std::vector<svdlr_batch::BatchInput> series;
  for (const auto & run : runs)
  {
    series.push_back(run.series);
  }
  try
  {
    svdlr_batch::CheckDistinctOutputs(series);
  }
  catch (const svdlr_batch::BatchNameClash & error)
  {
    throw UsageError(error.what());
  }
  return runs;
}

/** One series' options: `options` with the run's input, mask, map and outputs under `outputDir`. */
DenoiseToolOptions
SeriesOptions(const DenoiseToolOptions & options, const DenoiseBatchRun & run)
{
  DenoiseToolOptions series = options;
  series.batch = BatchToolOptions{};
  series.inputs.clear();
  series.input = run.series.path;
  series.mask = run.mask;
  series.noiseSigmaMap = run.knownSigmaMap;
  series.output = svdlr_batch::OutputPathFor(run.series, options.outputDir, svdlr_batch::DenoisedTag);
  if (options.maps)
  {
    series.noiseMap = svdlr_batch::OutputPathFor(run.series, options.outputDir, svdlr_batch::SigmaMapTag);
    series.rankMap = svdlr_batch::OutputPathFor(run.series, options.outputDir, svdlr_batch::RankMapTag);
  }
  // The pipeline redoes a series only when its set is incomplete (or --overwrite): what is left of it (maps, sidecars;
  // the series is renamed last) is from a run that stopped before the series appeared, and is replaced.
  series.overwrite = true;
  series.run.quiet = true;
  series.run.json = false;
  return series;
}

/** A series between the pipeline's stages: the tool's steps for it, and the budget its images take. */
struct StagedSeries : svdlr_batch::StagedItem
{
  svdlr_batch::BufferLease         budget;
  std::unique_ptr<SeriesDenoising> steps;
};

class DenoiseJob : public svdlr_batch::BatchJob
{
public:
  DenoiseJob(const std::vector<DenoiseBatchRun> & runs, const DenoiseToolOptions & options)
    : m_Runs(runs)
  {
    for (const auto & run : runs)
    {
      m_SeriesOptions.push_back(SeriesOptions(options, run));
    }
  }

  std::size_t
  Count() const override
  {
    return m_Runs.size();
  }
  std::string
  InputName(std::size_t item) const override
  {
    return m_Runs[item].series.path;
  }
  std::string
  OutputPath(std::size_t item) const override
  {
    return m_SeriesOptions[item].output;
  }
  std::vector<std::string>
  OutputSet(std::size_t item) const override
  {
    std::vector<std::string> set;
    for (const SetOutput & output : DenoiseOutputSet(m_SeriesOptions[item]))
    {
      set.push_back(output.path);
    }
    return set;
  }
  std::unique_ptr<svdlr_batch::StagedItem>
  Read(std::size_t item, svdlr_batch::HostBufferPool & pool, svdlr_batch::VolumeResult &) override
  {
    if (!m_Runs[item].series.problem.empty()) // found while listing the inputs (BatchInput::problem)
    {
      throw InputError(m_Runs[item].series.problem);
    }
    const DenoiseToolOptions & options = m_SeriesOptions[item];
    auto                       staged = std::make_unique<StagedSeries>();
    // The series and its denoised copy (float32) count against the budget before the series is read. A header that
    // cannot be read counts nothing here: the tool's first step names the problem.
    std::size_t bytes = 0;
    try
    {
      bytes = 2 * SeriesFloatBytes(options.input);
    }
    catch (const std::exception &)
    {
    }
    staged->budget = pool.Reserve(bytes);
    // The output's folder before the first step, which checks that it can be written. It stays when the series
    // fails: another series may be reading into it meanwhile.
    std::error_code error;
    fs::create_directories(fs::path(options.output).parent_path(), error);
    staged->steps = PrepareSeriesDenoising(options, false, false);
    return staged;
  }
  void
  Work(svdlr_batch::StagedItem & staged, const svdlr_batch::Worker & worker, svdlr_batch::VolumeResult & result) override
  {
    SeriesDenoising & steps = *static_cast<StagedSeries &>(staged).steps;
    const bool        onGpu = worker.backend == svdlr::Backend::CUDA;
    steps.Denoise(onGpu ? ToolBackend::CUDA : ToolBackend::CPU, onGpu ? worker.device : 0, false);
    const DenoiseSummary & summary = steps.Summary();
    const std::size_t      voxels = summary.grid[0] * summary.grid[1] * summary.grid[2];
    const auto             ranks = ValuesInMask(summary.rank, summary.mask, voxels);
    const auto             sigmas = ValuesInMask(summary.sigma, summary.mask, voxels);
    if (!ranks.empty())
    {
      const auto [low, high] = std::minmax_element(ranks.begin(), ranks.end());
      result.rankMin = static_cast<std::size_t>(*low);
      result.rankMax = static_cast<std::size_t>(*high);
    }
    result.sigmaMin = result.sigmaMax = std::numeric_limits<double>::quiet_NaN(); // no noise modelled
    if (!sigmas.empty() && *std::max_element(sigmas.begin(), sigmas.end()) > 0.0)
    {
      const auto [low, high] = std::minmax_element(sigmas.begin(), sigmas.end());
      result.sigmaMin = *low;
      result.sigmaMax = *high;
    }
  }
  void
  Write(svdlr_batch::StagedItem & staged, std::size_t, svdlr_batch::VolumeResult &) override
  {
    static_cast<StagedSeries &>(staged).steps->Write();
  }

private:
  const std::vector<DenoiseBatchRun> & m_Runs;
  std::vector<DenoiseToolOptions>      m_SeriesOptions;
};

} // namespace

void
CheckDenoiseBatchCommandLine(DenoiseToolOptions & options, const std::vector<std::string> & paths)
{
  if (!options.batch.enabled)
  {
    if (!options.outputDir.empty() || options.maps)
    {
      throw UsageError("--output-dir and --maps are for batch mode (--batch)");
    }
    if (paths.size() != 2)
    {
      // --echo and --echo-output take one FILE each (OneValuePerUse): a second file after one is a path here.
      const std::string repeat = options.multiEcho.echoes.empty() && options.multiEcho.echoOutputs.empty()
                                   ? " (several series go with --batch)"
                                   : " (each --echo and --echo-output takes one FILE: repeat the option per echo)";
      throw UsageError(paths.size() < 2 ? "INPUT and OUTPUT are required"
                                        : "expected INPUT and OUTPUT, got " + std::to_string(paths.size()) +
                                            " paths" + repeat);
    }
    options.input = paths[0];
    options.output = paths[1];
    return;
  }
  if (paths.empty())
  {
    throw UsageError("batch mode needs at least one INPUT (series files, folders or lists of series)");
  }
  if (options.outputDir.empty())
  {
    throw UsageError("batch mode needs the output folder: --output-dir DIR");
  }
  if (!options.noiseMap.empty() || !options.rankMap.empty())
  {
    throw UsageError("--noise-map and --rank-map name one series' maps: batch mode writes every series' maps with "
                     "--maps");
  }
  if (!options.mask.empty() || !options.noiseSigmaMap.empty())
  {
    throw UsageError("--mask and --known-sigma-map are one series' inputs: in batch mode a list gives each series its "
                     "own (series, mask, known-sigma map, separated by tabs)");
  }
  options.inputs = paths;
  options.output = options.outputDir; // what the start line and the provenance name as the output
}

int
RunDenoiseBatch(const DenoiseToolOptions & options)
{
  const auto runs = ListDenoiseBatchRuns(options);
  auto       pipeline = PipelineOptionsOf(options.batch, options.backend, options.overwrite);
  pipeline.onVolume = [&options](const svdlr_batch::VolumeResult & result, std::size_t finished, std::size_t total) {
    PrintBatchItem(result, finished, total, options.run);
  };
  std::ostream & log = options.run.json ? std::cerr : std::cout; // under --json, stdout is the document's
  if (!options.run.quiet)
  {
    log << runs.size() << " series -> " << options.outputDir << std::endl;
  }
  DenoiseJob job(runs, options); // never throws for one series' failure
  const auto summary = svdlr_batch::RunPipeline(job, pipeline);
  return FinishBatchRun(summary, options.batch, options.run, DenoiseToolName, "series");
}

} // namespace svdlr_tools
