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
#include "SVDLowRankCommonOptions.h"
#include "SVDLowRankImageFileErrors.h"
#include "SVDLowRankStagedOutput.h"

#include "svdlr/Defaults.h"
#include "svdlr/CpuThreads.h"
#include "svdlr/Engine.h"
#include "svdlr/Names.h"

#include "itkMacro.h"
#include "itkMultiThreaderBase.h"

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <thread>

namespace svdlr_tools
{

// The filter's enums list the engine's values in the same order, so the engine's names serve the tools too.
static_assert(static_cast<int>(ToolBackend::Auto) == static_cast<int>(svdlr::Backend::Auto) &&
                static_cast<int>(ToolBackend::CPU) == static_cast<int>(svdlr::Backend::CPU) &&
                static_cast<int>(ToolBackend::CUDA) == static_cast<int>(svdlr::Backend::CUDA),
              "the filter's and the engine's Backend enums must list the same values in the same order");
static_assert(static_cast<int>(ToolSolver::Auto) == static_cast<int>(svdlr::Solver::Auto) &&
                static_cast<int>(ToolSolver::Exact) == static_cast<int>(svdlr::Solver::Exact) &&
                static_cast<int>(ToolSolver::Subspace) == static_cast<int>(svdlr::Solver::Subspace),
              "the filter's and the engine's Solver enums must list the same values in the same order");

namespace
{

/** `flags`: one of `names`, the names of an enum of the engine (TEngineEnum), stored in `value` (the filter's enum of
 * the same values). CLI11 reports another word as "OPTION: must be NAMES, got 'X'". */
template <typename TEngineEnum, typename TToolEnum>
CLI::Option *
AddEngineNameOption(CLI::App &          app,
                    TToolEnum &         value,
                    const std::string & flags,
                    const std::string & help,
                    const std::string & names)
{
  return app
    .add_option_function<std::string>(
      flags,
      [&value](const std::string & text) {
        TEngineEnum engine{};
        svdlr::ParseName(text, engine); // checked by the validator
        value = static_cast<TToolEnum>(engine);
      },
      help)
    ->type_name("NAME")
    ->check(CLI::Validator(
      [names](std::string & text) -> std::string {
        TEngineEnum engine{};
        return svdlr::ParseName(text, engine) ? std::string() : "must be " + names + ", got '" + text + "'";
      },
      "", "EngineName"));
}

} // namespace

CLI::Option *
AddBackendOption(CLI::App & app, ToolBackend & backend, const std::string & flags, const std::string & help)
{
  return AddEngineNameOption<svdlr::Backend>(app, backend, flags, help, svdlr::BackendNames());
}

CLI::Option *
AddDeviceOption(CLI::App & app, int & deviceId, const std::string & flags)
{
  return app.add_option(flags, deviceId, "CUDA device (default " + std::to_string(svdlr::kDefaultDeviceId) + ")")
    ->type_name("N")
    ->check(WholeNumberValidator(0, 999999));
}

CLI::Option *
AddDeviceMemoryLimitOption(CLI::App & app, std::size_t & bytes, const std::string & flags, const std::string & help)
{
  return app
    .add_option_function<std::string>(
      flags, [&bytes](const std::string & text) { svdlr::ParseDeviceMemoryLimit(text, bytes); }, help)
    ->type_name("SIZE")
    ->check(CLI::Validator(
      [](std::string & text) -> std::string {
        std::size_t bytes = 0;
        return svdlr::ParseDeviceMemoryLimit(text, bytes)
                 ? std::string()
                 : "must be " + std::string(svdlr::ByteSizeSyntax()) + " or '" + svdlr::kNoDeviceMemoryLimitName +
                     "', got '" + text + "'";
      },
      ""));
}

CLI::Option *
OneValuePerUse(CLI::Option * option)
{
  return option->take_all()->allow_extra_args(false);
}

CLI::Validator
NumberValidator(const std::string & what, const std::function<bool(double)> & accept)
{
  return CLI::Validator(
    [what, accept](std::string & text) -> std::string {
      char *       end = nullptr;
      const double value = std::strtod(text.c_str(), &end);
      const bool   good = !text.empty() && *end == '\0' && accept(value);
      return good ? std::string() : "must be " + what + ", got '" + text + "'";
    },
    "");
}

CLI::Validator
SigmaValidator()
{
  // A sigma becomes a float map: the number must lie in float32's range (1e308 would become inf after the read),
  // tested before the conversion, which beyond that range is undefined behaviour, not inf; and the float32 value
  // it becomes must be > 0 (1e-50 becomes 0), so that the check up front tests the value the run uses.
  return NumberValidator("a finite number > 0 (at most 3.4e38, float32's largest)", [](double value) {
    return std::isfinite(value) && std::fabs(value) <= std::numeric_limits<float>::max() &&
           static_cast<float>(value) > 0.0f;
  });
}

CLI::Validator
WholeNumberValidator(double minimum, double maximum)
{
  std::ostringstream what;
  what << "a whole number ";
  if (maximum >= 999999)
  {
    what << ">= " << minimum;
  }
  else
  {
    what << "from " << minimum << " to " << maximum;
  }
  return NumberValidator(what.str(), [minimum, maximum](double value) {
    return value >= minimum && value <= maximum && value == std::floor(value);
  });
}

void
AddRunOptions(CLI::App & app, RunOptions & run)
{
  app.add_flag("-q,--quiet", run.quiet, "print errors only: no start line, progress, summary or notes");
  app.add_flag("--json", run.json,
               "print the summary as one JSON document on stdout (what the .json\n"
               "sidecar of a NIfTI output holds), and nothing else there");
  app.add_option("--nthreads", run.threads, "CPU threads to use (default: every core)")
    ->type_name("N")
    ->check(WholeNumberValidator(1, 4096));
}

void
ApplyThreads(unsigned threads)
{
  // --nthreads bounds every parallel step, not ITK's alone: the engine's own threads, gzip, the NIfTI conversion and
  // scans, and the batch's readers and writers count their cores with svdlr::UsableCpuThreads, which this caps.
  if (threads > 0)
  {
    svdlr::LimitCpuThreads(threads);
  }
  // Without --nthreads: the CPUs this process may run on (svdlr::UsableCpuThreads: SLURM's, taskset's), which ITK's
  // own default, the machine's count, does not see; ITK_GLOBAL_DEFAULT_NUMBER_OF_THREADS still decides when set.
  // ITK's globals are left untouched unless the process has fewer CPUs than the machine: set this early, they are
  // the suspect of a hang seen once at exit (an ITK SingletonIndex destructor looping, in a randomized CI repeat).
  if (threads == 0 && std::getenv("ITK_GLOBAL_DEFAULT_NUMBER_OF_THREADS") == nullptr &&
      svdlr::UsableCpuThreads() < std::thread::hardware_concurrency())
  {
    threads = svdlr::UsableCpuThreads();
  }
  if (threads > 0)
  {
    itk::MultiThreaderBase::SetGlobalMaximumNumberOfThreads(threads);
    itk::MultiThreaderBase::SetGlobalDefaultNumberOfThreads(threads);
  }
}

CLI::Option *
AddOutputTypeOption(CLI::App & app, std::string & name)
{
  name = svdlr::kDefaultOutputTypeName;
  return app
    .add_option("--output-type", name,
                std::string("pixel type of the outputs: ") + svdlr::kDefaultOutputTypeName + " (default) or " +
                  svdlr::kSameAsInputOutputTypeName + " (the input's,\nrounded and clamped)")
    ->type_name("TYPE")
    ->check(CLI::IsMember(std::vector<std::string>{ svdlr::kDefaultOutputTypeName, svdlr::kSameAsInputOutputTypeName })
             .description(""));
}

std::vector<SingleDashAlias>
CommonSingleDashAliases()
{
  return { { "-force", "--overwrite" }, { "-nthreads", "--nthreads" }, { "-quiet", "--quiet" } };
}

std::string
DescribeSingleDashAliases(const std::vector<SingleDashAlias> & aliases)
{
  std::ostringstream text;
  for (const auto & alias : aliases)
  {
    const std::string spelling = alias.spelling;
    text << "  " << spelling << std::string(spelling.size() < 12 ? 12 - spelling.size() : 1, ' ') << "= "
         << alias.option << "\n";
  }
  return text.str();
}

CLI::Option *
AddSolverOption(CLI::App & app, ToolSolver & solver, const std::string & flags, const std::string & help)
{
  return AddEngineNameOption<svdlr::Solver>(app, solver, flags, help, svdlr::SolverNames());
}

CLI::Option *
AddRankPolicyOption(CLI::App &          app,
                    std::string &       name,
                    const std::string & flags,
                    const std::string & help,
                    const std::string & extraName)
{
  const std::string names = extraName.empty() ? svdlr::NoiseRankNames() : extraName + ", " + svdlr::NoiseRankNames();
  return app.add_option(flags, name, help)
    ->type_name("NAME")
    ->check(CLI::Validator(
      [names, extraName](std::string & text) -> std::string {
        svdlr::RankPolicy policy;
        return (!extraName.empty() && text == extraName) || svdlr::ParseNoiseRank(text, policy)
                 ? std::string()
                 : "must be " + names + ", got '" + text + "'";
      },
      "", "RankPolicyName"));
}

std::string
ParseCommandLine(CLI::App & app, int argc, const char * const argv[], const std::vector<SingleDashAlias> & aliases)
{
  if (argc <= 1)
  {
    throw UsageError("no arguments given\n" + CLI::Formatter().make_usage(&app, app.get_name()));
  }
  std::vector<std::string> words(argv, argv + argc);
  for (std::size_t i = 1; i < words.size(); ++i)
  {
    for (const auto & alias : aliases)
    {
      if (words[i] == alias.spelling)
      {
        words[i] = alias.option;
      }
    }
  }
  std::vector<const char *> rewritten;
  for (const std::string & word : words)
  {
    rewritten.push_back(word.c_str());
  }
  try
  {
    app.parse(static_cast<int>(rewritten.size()), rewritten.data());
  }
  catch (const CLI::CallForHelp &)
  {
    return app.help();
  }
  catch (const CLI::ParseError & error)
  {
    throw UsageError(error.what());
  }
  return {};
}

std::optional<std::vector<long>>
ParseIntegerList(const std::string & text, long minimum, long maximum)
{
  std::vector<long> values;
  std::stringstream stream(text);
  std::string       item;
  while (std::getline(stream, item, ','))
  {
    std::size_t parsed = 0;
    long        value = 0;
    try
    {
      value = std::stol(item, &parsed);
    }
    catch (const std::exception &)
    {
      return std::nullopt;
    }
    if (parsed != item.size() || value < minimum || value > maximum)
    {
      return std::nullopt;
    }
    values.push_back(value);
  }
  return values;
}

int
ExitCodeOf(const char * toolName, std::exception_ptr thrown)
{
  try
  {
    std::rethrow_exception(thrown);
  }
  catch (const std::exception & error)
  {
    const auto * itkError = dynamic_cast<const itk::ExceptionObject *>(&error); // its description, not its location
    std::cerr << toolName << ": " << (itkError ? itkError->GetDescription() : error.what()) << "\n";
    if (dynamic_cast<const UsageError *>(&error) || dynamic_cast<const svdlr_io::OutputInTheWay *>(&error))
    {
      return ExitUsage;
    }
    // An ImageFileError: the read path's own judgement of a file, wherever it was made.
    const bool input =
      dynamic_cast<const InputError *>(&error) || dynamic_cast<const svdlr_io::ImageFileError *>(&error);
    return input ? ExitInputError : ExitFailure;
  }
}

} // namespace svdlr_tools
