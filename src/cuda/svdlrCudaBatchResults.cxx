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
#include "svdlrCudaPipeline.h"

#include "noise/svdlrRankSelection.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace svdlr
{
namespace detail
{

std::size_t
CollectBatchResults(const int * nonFiniteFlags, const int * solverInfo, const double * eigenvalues, std::size_t first,
                    std::size_t count, std::size_t n, std::size_t rows, std::size_t cols, const RankPolicy & policy,
                    Report & report, int * ranks)
{
  // Non-finite input first: nothing computed from such a matrix may be used, and its solver info is moot.
  for (std::size_t i = 0; i < count; ++i)
  {
    if (nonFiniteFlags[i] != 0)
    {
      const std::size_t matrix = first + i;
      throw Error(ErrorCode::NonFiniteInput,
                  "svdlr: matrix " + std::to_string(matrix) + " contains NaN or Inf values",
                  static_cast<std::ptrdiff_t>(matrix));
    }
  }
  for (std::size_t i = 0; i < count; ++i)
  {
    const int info = solverInfo[i];
    if (info < 0)
    {
      throw Error(ErrorCode::DeviceFailure,
                  "svdlr CUDA backend: cusolverDnXsyevBatched rejected parameter " + std::to_string(-info));
    }
    if (info > 0)
    {
      const std::size_t matrix = first + i;
      throw Error(ErrorCode::NumericalFailure,
                  "svdlr CUDA backend: the eigen-solver did not converge on matrix " + std::to_string(matrix) +
                    " (info " + std::to_string(info) + ")",
                  static_cast<std::ptrdiff_t>(matrix));
    }
  }

  std::size_t largest = 0;
  for (std::size_t i = 0; i < count; ++i)
  {
    std::vector<double> & singular = report.singularValues[first + i];
    SingularValuesFromGramEigenvalues(eigenvalues + i * n, n, singular);
    const RankChoice choice = SelectRank(policy, singular.data(), n, rows, cols);
    const std::size_t rank = choice.rank;
    report.ranks[first + i] = rank;
    report.noiseSigmas[first + i] = choice.noiseSigma;
    ranks[i] = static_cast<int>(rank);
    largest = std::max(largest, rank);
  }
  return largest;
}

} // namespace detail
} // namespace svdlr
