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
#ifndef svdlr_PolicyValidation_h
#define svdlr_PolicyValidation_h

#include "svdlr/Engine.h"

namespace svdlr
{
namespace detail
{

/** Throws Error(InvalidArgument) with a message that names the problem when `policy` is out of range: what
 * PolicyProblem (svdlr/Names.h) states for any solver, and the noise policies' parameters (a Gavish-Donoho σ that is
 * negative or not finite, an unknown estimator) and an unknown kind, until PolicyProblem states those too. Shared by
 * every entry point that takes a RankPolicy. */
void
ValidateRankPolicy(const RankPolicy & policy);

} // namespace detail
} // namespace svdlr

#endif
