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
#ifndef SVDLowRankExitCodes_h
#define SVDLowRankExitCodes_h

// What the tools' exit codes mean, and the errors that lead to them, for every tool of apps/tool.

#include "SVDLowRankImageFileErrors.h" // SVDLR_DECLARE_ERROR, light: <stdexcept> alone

#include <stdexcept>

namespace svdlr_tools
{

constexpr int ExitSuccess = 0;
constexpr int ExitFailure = 1;    // processing or writing failed
constexpr int ExitUsage = 2;      // bad command line, no arguments, an output in the way, a batch name clash
constexpr int ExitInputError = 3; // an input cannot be read, is not supported or holds NaN or Inf
constexpr int ExitSomeFailed = 4; // batch mode: some volumes (or series) failed, the others were written
constexpr int ExitInterrupted = 128; // + the signal's number (130 SIGINT, 143 SIGTERM): partial outputs removed

/** The table above for people, as both tools' --help and docs/tools show it. */
inline const char *
ExitCodeTable()
{
  return "Exit codes: (the same for both tools)\n"
         "  0  success\n"
         "  1  processing or writing failed\n"
         "  2  bad command line (or none), an output in the way (--overwrite/-force replaces it), a batch name clash\n"
         "  3  an input cannot be read, is not supported, or holds NaN or Inf\n"
         "  4  batch mode: some volumes (or series) failed (the summary lists them), the others were written\n"
         "  128 + N  stopped by signal N (130 SIGINT, 143 SIGTERM), partial outputs removed (docs/reliability.md)\n";
}

/** A bad command line: exit code 2. */
SVDLR_DECLARE_ERROR(UsageError, std::runtime_error);

/** An input that cannot be read or is not supported: exit code 3. */
SVDLR_DECLARE_ERROR(InputError, std::runtime_error);

} // namespace svdlr_tools

#endif
