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
#ifndef svdlr_Names_h
#define svdlr_Names_h

// One table of the engine's names and limits, and one statement of the rules that a request must follow, for
// every layer that names, parses, checks or documents them: the engine's front end, the ITK filters, the
// command-line tools and the Python module. ITK-free, like Engine.h. The rank policy's own names and labels are
// svdlr/RankPolicy.h.

#include "svdlr/Engine.h"

#include <cstddef>
#include <string>

namespace svdlr
{

/** The widest block of the subspace solver: it runs for fixed ranks k whose block max(2k, k + 16) fits, so
 * for k below this (Solver::Auto falls back to Exact above it; Solver::Subspace refuses). */
constexpr std::size_t kMaxSubspaceWidth = 160;

/** Lower-case names, as the command-line tools and Python spell them: "auto", "cpu", "cuda". */
const char *
Name(Backend backend);
/** "auto", "exact", "subspace". */
const char *
Name(Solver solver);

/** Sets `value` from its lower-case name and returns true; returns false (value untouched) for any other text. */
bool
ParseName(const std::string & name, Backend & value);
bool
ParseName(const std::string & name, Solver & value);

/** Every name of the type, for messages and help texts: "auto, cpu or cuda". */
std::string
BackendNames();
std::string
SolverNames();

/** A memory size as the tools and Python take it: a whole or decimal number of bytes, optionally followed by K, M,
 * G or T (binary: 1024, 1024^2, ...), case-insensitive, with an optional "iB" or "B" after the letter: "8G",
 * "8GiB", "1.5g", "512M", "4096". Returns 0 for anything else, for a size below one byte and for one that does not
 * fit std::size_t; callers say so with ByteSizeSyntax(). */
std::size_t
ParseByteSize(const std::string & text);

/** A device memory limit as the tools and Python take it: kNoDeviceMemoryLimitName ("free": whatever is free, 0) or
 * a size ParseByteSize reads. False for anything else. */
bool
ParseDeviceMemoryLimit(const std::string & text, std::size_t & bytes);

/** The syntax ParseByteSize takes, for messages and help texts. */
const char *
ByteSizeSyntax();

/** What is wrong with running `policy` under `solver` (RankPolicyProblem, then the rules that tie a policy to a
 * solver), in one sentence that names the engine's parameters (callers add their own spelling of them), or "" when
 * the request is valid. The engine's front end, the filters,
 * the tools and Python all check requests through this. */
std::string
PolicyProblem(const RankPolicy & policy, Solver solver);

} // namespace svdlr

#endif
