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
#ifndef SVDLowRankReconstructionResult_h
#define SVDLowRankReconstructionResult_h

// What one reconstruction produced, as every path of SVDLowRankReconstructImage reports it: the single-volume
// path prints it as the summary and titles its figure with it, the batch path prints one line per volume from
// it and writes it as a row of the run's table, and both name a derived DICOM series from its ranks.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

namespace svdlr_io
{

struct ReconstructionResult
{
  std::string              input;  // what was read, as the summary and the table name it
  std::string              output; // where it was written
  std::vector<std::size_t> ranks;  // the rank of each slice, in the order of the input's slices
  std::vector<double>      noiseSigmas; // the σ of each slice's noise; NaN where the policy models none
  // Derived from the two lists by AddSlices, for the table and the one-line reports.
  std::size_t slices{ 0 };
  std::size_t rankMin{ 0 };
  std::size_t rankMax{ 0 };
  double      sigmaMin{ 0 }; // NaN when the policy does not estimate noise
  double      sigmaMax{ 0 };
  std::string backend; // the backend that did the work, as the filter names it; "" in batch
  std::string solver;  // the solver, likewise
  std::size_t slicesRedone{ 0 }; // slices the subspace solver's check sent to the exact solver
  std::string notes;             // the filter's notes on the backend, e.g. why the CPU was used
  // Seconds of the thread that did each step; readSeconds is 0 where reading was not timed apart.
  double readSeconds{ 0 };
  double solveSeconds{ 0 };
  double writeSeconds{ 0 };
  int    device{ -1 }; // the GPU that solved it; -1: the CPU (or not told)

  /** Appends the ranks and σ of the next slices (one reconstruction may run in several batches). */
  template <typename TRank>
  void
  AddSlices(const std::vector<TRank> & sliceRanks, const std::vector<double> & sliceSigmas)
  {
    if (slices == 0)
    {
      sigmaMin = sigmaMax = std::numeric_limits<double>::quiet_NaN();
    }
    for (const TRank rank : sliceRanks)
    {
      rankMin = slices == 0 ? rank : std::min<std::size_t>(rankMin, rank);
      rankMax = slices == 0 ? rank : std::max<std::size_t>(rankMax, rank);
      ranks.push_back(rank);
      ++slices;
    }
    for (const double sigma : sliceSigmas)
    {
      noiseSigmas.push_back(sigma);
      if (std::isfinite(sigma))
      {
        sigmaMin = std::isnan(sigmaMin) ? sigma : std::min(sigmaMin, sigma);
        sigmaMax = std::isnan(sigmaMax) ? sigma : std::max(sigmaMax, sigma);
      }
    }
  }
};

} // namespace svdlr_io

#endif
