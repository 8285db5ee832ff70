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
#ifndef SVDLowRankCommonOptions_h
#define SVDLowRankCommonOptions_h

// The options every tool of apps/tool shares, defined once for CLI11: the backend, the CUDA device, the GPU
// solver and the noise rank policies, each validated against the names the engine, the filters and Python share
// (svdlr/Names.h); the output type, threads and reporting (--quiet, --json); the validators that word range errors
// for people; MRtrix3 dwidenoise's single-dash spellings; the parse step that turns CLI11's errors into
// UsageError (exit code 2); and the main both tools share (ToolMain), which turns every error into its exit code.

#include "SVDLowRankExitCodes.h"
#include "SVDLowRankInterruptCleanup.h"
#include "svdlr/CpuThreads.h"

#include "itkSVDLowRankReconstructionEnums.h"

#include <exception>
#include <functional>
#include <iostream>
#include <optional>
#include <cstddef>
#include <string>
#include <vector>

namespace CLI
{
class App;
class Option;
class Validator;
} // namespace CLI

namespace svdlr_tools
{

using ToolBackend = itk::SVDLowRankReconstructionEnums::Backend;
using ToolSolver = itk::SVDLowRankReconstructionEnums::Solver;

/** `flags` (e.g. "-b,--backend"): auto, cpu or cuda, stored in `backend`. */
CLI::Option *
AddBackendOption(CLI::App & app, ToolBackend & backend, const std::string & flags, const std::string & help);

/** `flags` (e.g. "-d,--device"): a CUDA device number >= 0. */
CLI::Option *
AddDeviceOption(CLI::App & app, int & deviceId, const std::string & flags);

/** `flags` (e.g. "--gpu-memory-limit"): a device memory limit as svdlr::ParseDeviceMemoryLimit reads it ("8G", or
 * "free" for whatever is free), stored in `bytes`. */
CLI::Option *
AddDeviceMemoryLimitOption(CLI::App & app, std::size_t & bytes, const std::string & flags, const std::string & help);

/** `flags`: auto, exact or subspace, stored in `solver`. */
CLI::Option *
AddSolverOption(CLI::App & app, ToolSolver & solver, const std::string & flags, const std::string & help);

/** `flags`: a noise rank policy name (gd, mp, mp-cg), plus `extraNames` (e.g. "fixed") when not empty. */
CLI::Option *
AddRankPolicyOption(CLI::App &         app,
                    std::string &      name,
                    const std::string & flags,
                    const std::string & help,
                    const std::string & extraName = "");

/** How a run reports and how many threads it takes: both tools have these options. */
struct RunOptions
{
  bool     quiet{ false };  // --quiet: errors only (no start line, progress, summary or notes)
  bool     json{ false };   // --json: stdout carries one JSON document (the sidecar's content), nothing else
  unsigned threads{ 0 };    // --nthreads: CPU threads; 0: every core
  std::vector<std::string> commandLine; // argv, as given, for the provenance sidecar
};

/** --quiet, --json and --nthreads. */
void
AddRunOptions(CLI::App & app, RunOptions & run);

/** From --nthreads (0: left as they are): caps svdlr::UsableCpuThreads for the whole process (the engine, gzip, the
 * NIfTI conversion, the batch's readers and writers), and sets ITK's global thread counts, which the filters hand to
 * the engine. */
void
ApplyThreads(unsigned threads);

/** --output-type: svdlr::kDefaultOutputTypeName (float32, the default) or svdlr::kSameAsInputOutputTypeName. */
CLI::Option *
AddOutputTypeOption(CLI::App & app, std::string & name);

/** `option` (a list option such as --echo FILE) takes one value each time it is given, and collects them over repeats:
 * CLI11 2.1's list options otherwise take every word that follows, so `--echo e2.nii.gz in.nii.gz out.nii.gz` would
 * read INPUT and OUTPUT as further echoes and leave none for the positionals. Returns `option`. */
CLI::Option *
OneValuePerUse(CLI::Option * option);

/** A CLI11 validator for a number: "must be `what`, got 'TEXT'" when the text is no number or `accept` refuses it.
 * CLI11's own range checks print the type's limits (300 digits for a double); these say what is expected. */
CLI::Validator
NumberValidator(const std::string & what, const std::function<bool(double)> & accept);

/** A sigma given on the command line (--noise-sigma): a finite float32 > 0 (at most 3.4e38). */
CLI::Validator
SigmaValidator();

/** A whole number in [minimum, maximum]: "must be a whole number >= 1, got '0'" (or "from 1 to 9"). */
CLI::Validator
WholeNumberValidator(double minimum, double maximum);

/** One of MRtrix3 dwidenoise's single-dash spellings and the option it stands for: { "-extent", "--patch" }. CLI11
 * 2.1 refuses long names with one dash ("-extent" would read as the flags -e -x -t ...), so ParseCommandLine
 * rewrites a word that is exactly such a spelling before CLI11 sees it. */
struct SingleDashAlias
{
  const char * spelling;
  const char * option;
};

/** The spellings both tools take: -force, -nthreads, -quiet. */
std::vector<SingleDashAlias>
CommonSingleDashAliases();

/** "  -force      = --overwrite\n..." for --help. */
std::string
DescribeSingleDashAliases(const std::vector<SingleDashAlias> & aliases);

/** "a,b,c" (or "a"): integers in [minimum, maximum], each item read whole (std::stol, nothing left over); std::nullopt
 * when an item is empty or not such an integer. The tools' list options (--patch, --devices) say what they expect. */
std::optional<std::vector<long>>
ParseIntegerList(const std::string & text, long minimum, long maximum);

/** Parses the command line, with `aliases` rewritten to the options they stand for. Returns the help text when
 * -h/--help was given (the caller prints it and exits with 0), "" otherwise. Throws UsageError with CLI11's message
 * for anything CLI11 or a validator refuses, and with the usage line when no argument was given at all. */
std::string
ParseCommandLine(CLI::App &                           app,
                 int                                  argc,
                 const char * const                   argv[],
                 const std::vector<SingleDashAlias> & aliases = {});

/** "TOOL: message" on stderr for the error a run threw, and its exit code: ExitUsage for a UsageError or an output
 * in the way, ExitInputError for an InputError or the read path's judgement of a file, ExitFailure otherwise. */
int
ExitCodeOf(const char * toolName, std::exception_ptr thrown);

/** Both tools' main, after the provenance's clock is started (RunStartedUtc): the cleanup of partial outputs on an
 * interrupt; the options from `parse(argc, argv)` (a UsageError: the message and a pointer to --help, exit 2;
 * --help: the help text, exit 0); ApplyThreads; then `run(options)`'s exit code, or ExitCodeOf the error it threw. */
template <typename TParse, typename TRun>
int
ToolMain(const char * toolName, int argc, char * argv[], TParse parse, TRun run)
{
  svdlr_io::InstallInterruptCleanup(toolName, ExitInterrupted);
  std::cout << std::unitbuf; // every line reaches a pipeline's log as it is written, and none is lost to a signal
  decltype(parse(argc, argv)) options;
  try
  {
    options = parse(argc, argv);
  }
  catch (const UsageError & error)
  {
    std::cerr << toolName << ": " << error.what() << "\nRun '" << toolName << " --help' for the options.\n";
    return ExitUsage;
  }
  if (!options.helpText.empty())
  {
    std::cout << options.helpText;
    return ExitSuccess;
  }
  ApplyThreads(options.run.threads);
  try
  {
    return run(options);
  }
  catch (...)
  {
    return ExitCodeOf(toolName, std::current_exception());
  }
}

} // namespace svdlr_tools

#endif
