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
#ifndef svdlr_GramTiles_h
#define svdlr_GramTiles_h

// The Gram matrix of a patch (AddOuterProductsLower's sum of weighted outer products) in register tiles, where the
// CPU has AVX2 and FMA. The column-by-column loop of svdlrPatchKernels.cxx loads and stores each element of G once
// per four vectors; a tile of 8 x 4 elements stays in registers over all of them, so that the loop runs on the
// multiply-add units instead of the loads: a 65 x 65 Gram matrix of 125 vectors took 15.8 us against 23 us on an
// EPYC core (microbenchmark).

#include <cstddef>

namespace svdlr
{
namespace detail
{

/** G += sum over r < count of weights[r] v_r v_rᵀ for the columns of G in whole tiles of four (the lower triangle
 * only; G of order n, leading dimension n; v_r the n values at vectors + r * stride). Returns how many leading
 * columns it added (a multiple of 4, or 0 where the CPU lacks AVX2 or FMA): the caller adds the rest. The sums run
 * over r in order with fused multiply-adds, so they round differently from AddOuterProductsLower's. */
int
AddOuterProductsLowerInTiles(int n, int count, const double * weights, const double * vectors, std::ptrdiff_t stride,
                             double * g);

} // namespace detail
} // namespace svdlr

#endif
