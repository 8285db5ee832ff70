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
#ifndef svdlr_SmallEigenTestHooks_h
#define svdlr_SmallEigenTestHooks_h

// Entry points for tests and benchmarks into the batched eigen-solvers, host vectors in and out, so that the test
// code needs neither CUDA headers nor nvcc. Not part of the engine's API.

#include "svdlrCudaExport.h"

#include <cstdint>
#include <vector>

namespace svdlr
{
namespace detail
{
namespace testing
{

struct EigenResult
{
  std::vector<double> eigenvalues; // (count, n), ascending
  std::vector<double> vectors;     // (count, n, maxVectors) column-major, column c for the (c+1)-th largest
  std::vector<int>    info;        // (count)
  double              milliseconds{ 0 }; // device time of the solve alone (CUDA events), for benchmarks
};

/** Our solver (svdlrSmallEigenSolver.h) on `count` column-major n x n symmetric matrices. vectorCounts: empty
 * (maxVectors each) or one count per matrix. The vectors' columns not asked for are NaN. */
SVDLR_CUDA_EXPORT EigenResult
RunSmallEigenSolver(const std::vector<double> & matrices, std::int64_t n, std::int64_t count, std::int64_t maxVectors,
                    const std::vector<int> & vectorCounts, int deviceId);

/** cuSOLVER's XsyevBatched (svdlrEigenSolver.h) on the same input: all n eigenvectors, reordered to the layout
 * above (column c for the (c+1)-th largest eigenvalue). */
SVDLR_CUDA_EXPORT EigenResult
RunCusolverEigenSolver(const std::vector<double> & matrices, std::int64_t n, std::int64_t count, int deviceId);

} // namespace testing
} // namespace detail
} // namespace svdlr

#endif
