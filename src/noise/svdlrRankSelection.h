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

/** What a rank policy decided for one matrix. */
struct RankChoice
{
  std::size_t rank{ 0 };
  double      noiseSigma{ 0.0 }; // σ of each entry's noise, estimated or given; NaN for FixedRank and EnergyFraction
};

/** Effective rank for one rows x cols matrix under `policy`, given its `count` singular values in descending order
 * (all min(rows, cols) of them for every policy but FixedRank): ChooseRank (svdlrChooseRank.h), the rule the
 * denoisers run too, with the slice engine's conventions.
 *  - FixedRank: the rank, clamped to `count`.
 *  - EnergyFraction f: the fewest leading values whose squares sum to at least f of the total; a zero matrix gets 0.
 *  - GavishDonoho, MarchenkoPastur: the values above the noise threshold of svdlrNoiseThreshold.h, from the squared
 *    singular values (the Gram eigenvalues), with the σ found or given. */
RankChoice
SelectRank(const RankPolicy & policy, const double * singularValuesDescending, std::size_t count, std::size_t rows,
           std::size_t cols);

/** A matrix's singular values, descending, from the `count` eigenvalues of its Gram matrix in ascending
 * order: sqrt(max(eigenvalue, 0)), since round-off can leave those of a rank-deficient matrix slightly
 * negative. Both backends' Gram paths use it. */
void
SingularValuesFromGramEigenvalues(const double * ascending, std::size_t count, std::vector<double> & singularValues);

} // namespace detail
} // namespace svdlr

#endif
