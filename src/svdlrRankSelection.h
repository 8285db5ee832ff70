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
#ifndef svdlr_RankSelection_h
#define svdlr_RankSelection_h

#include "svdlr/Engine.h"

#include <cstddef>
#include <vector>

namespace svdlr
{
namespace detail
{

/** Effective rank for one matrix under `policy`, given its singular values in descending order.
 * Fixed ranks are clamped to the number of singular values. For an energy fraction f the result is the
 * fewest leading values whose squares sum to at least f of the total; a zero matrix gets rank 0. */
std::size_t
SelectRank(const RankPolicy & policy, const double * singularValuesDescending, std::size_t count);

/** A matrix's singular values, descending, from the `count` eigenvalues of its Gram matrix in ascending
 * order: sqrt(max(eigenvalue, 0)), since round-off can leave those of a rank-deficient matrix slightly
 * negative. Both backends' Gram paths use it. */
void
SingularValuesFromGramEigenvalues(const double * ascending, std::size_t count, std::vector<double> & singularValues);

} // namespace detail
} // namespace svdlr

#endif
