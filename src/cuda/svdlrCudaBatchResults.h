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
#ifndef svdlr_CudaBatchResults_h
#define svdlr_CudaBatchResults_h

// What the host does with a batch between the GPU's eigen-solve and its reconstruction: reject bad input,
// turn eigenvalues into singular values, and pick each matrix's rank. Plain host code, so that it can be
// tested without a GPU.

#include "svdlrCudaExport.h"
#include "svdlr/Engine.h"

#include <cstddef>

namespace svdlr
{
namespace detail
{

/** For the batch of `count` matrices that starts at matrix `first` of the run:
 * nonFiniteFlags: (count), non-zero for a matrix that held NaN or Inf;
 * solverInfo:     (count), cuSOLVER's info per matrix (> 0: no convergence, < 0: bad parameter);
 * eigenvalues:    (count, n), each matrix's Gram eigenvalues in ascending order;
 * rows, cols:     the matrices' shape (n = min(rows, cols) except with the subspace solver, which fixes the rank).
 * Throws Error(NonFiniteInput) naming the first flagged matrix; otherwise Error(NumericalFailure) naming the
 * first matrix the solver failed on, or Error(DeviceFailure) for a rejected parameter. Then fills
 * report.singularValues[first + i] with sqrt(max(eigenvalue, 0)) in descending order (rounding can make a
 * zero eigenvalue slightly negative), report.ranks[first + i] and report.noiseSigmas[first + i] with SelectRank's choice, and ranks (count)
 * with the same ranks for the device. Returns the largest rank in the batch. */
SVDLR_CUDA_EXPORT std::size_t
CollectBatchResults(const int * nonFiniteFlags, const int * solverInfo, const double * eigenvalues, std::size_t first,
                    std::size_t count, std::size_t n, std::size_t rows, std::size_t cols, const RankPolicy & policy,
                    Report & report, int * ranks);

} // namespace detail
} // namespace svdlr

#endif
