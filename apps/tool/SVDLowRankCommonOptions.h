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
// (svdlr/Names.h); and the parse step that turns CLI11's errors into UsageError (exit code 2).

#include "SVDLowRankExitCodes.h"

#include "itkSVDLowRankReconstructionEnums.h"

#include <optional>
#include <string>
#include <vector>

namespace CLI
{
class App;
class Option;
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

/** "a,b,c" (or "a"): integers in [minimum, maximum], each item read whole (std::stol, nothing left over); std::nullopt
 * when an item is empty or not such an integer. The tools' list options (--patch, --devices) say what they expect. */
std::optional<std::vector<long>>
ParseIntegerList(const std::string & text, long minimum, long maximum);

/** Parses the command line. Returns the help text when -h/--help was given (the caller prints it and exits with 0),
 * "" otherwise. Throws UsageError with CLI11's message for anything CLI11 or a validator refuses. */
std::string
ParseCommandLine(CLI::App & app, int argc, const char * const argv[]);

} // namespace svdlr_tools

#endif
