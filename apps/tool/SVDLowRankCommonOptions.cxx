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

#include "svdlr/Names.h"

#include <CLI/CLI.hpp>

#include <sstream>

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

/** A CLI11 validator for one of the engine's enums: CLI11 reports "OPTION: must be NAMES, got 'X'". */
template <typename TEngineEnum>
CLI::Validator
EngineNameValidator(const std::string & names)
{
  return CLI::Validator(
    [names](std::string & text) -> std::string {
      TEngineEnum value{};
      return svdlr::ParseName(text, value) ? std::string() : "must be " + names + ", got '" + text + "'";
    },
    "", "EngineName");
}

} // namespace

CLI::Option *
AddBackendOption(CLI::App & app, ToolBackend & backend, const std::string & flags, const std::string & help)
{
  return app
    .add_option_function<std::string>(
      flags,
      [&backend](const std::string & text) {
        svdlr::Backend value{};
        svdlr::ParseName(text, value); // checked by the validator
        backend = static_cast<ToolBackend>(value);
      },
      help)
    ->type_name("NAME")
    ->check(EngineNameValidator<svdlr::Backend>(svdlr::BackendNames()));
}

CLI::Option *
AddDeviceOption(CLI::App & app, int & deviceId, const std::string & flags)
{
  return app.add_option(flags, deviceId, "CUDA device (default 0)")->type_name("N")->check(CLI::NonNegativeNumber);
}

CLI::Option *
AddSolverOption(CLI::App & app, ToolSolver & solver, const std::string & flags, const std::string & help)
{
  return app
    .add_option_function<std::string>(
      flags,
      [&solver](const std::string & text) {
        svdlr::Solver value{};
        svdlr::ParseName(text, value); // checked by the validator
        solver = static_cast<ToolSolver>(value);
      },
      help)
    ->type_name("NAME")
    ->check(EngineNameValidator<svdlr::Solver>(svdlr::SolverNames()));
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
ParseCommandLine(CLI::App & app, int argc, const char * const argv[])
{
  try
  {
    app.parse(argc, argv);
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

} // namespace svdlr_tools
