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
#ifndef SVDLowRankMethodLabels_h
#define SVDLowRankMethodLabels_h

// What an output says about how it was made, the same on the single-volume and the batch path: the sentence a
// derived DICOM series carries as its DerivationDescription, and the options of that series' writer. The words
// for the policy itself (its description and output tag) are svdlr/RankPolicy.h's.

#include "svdlr/RankPolicy.h"

#include <sstream>
#include <string>
#include <vector>
#ifdef SVDLR_HAVE_DCMTK
#  include "SVDLowRankDicomWriter.h"
#endif

namespace svdlr_io
{

/** "20 (all 181 slices)" or a run-length list such as "0 x5, 3, 4 x2, ...". */
template <typename TRank>
std::string
DescribeRanks(const std::vector<TRank> & ranks)
{
  std::ostringstream text;
  for (std::size_t i = 0; i < ranks.size();)
  {
    std::size_t j = i;
    while (j < ranks.size() && ranks[j] == ranks[i])
    {
      ++j;
    }
    if (i == 0 && j == ranks.size())
    {
      text << ranks[i] << " (all " << ranks.size() << " slices)";
      return text.str();
    }
    text << (i > 0 ? ", " : "") << ranks[i];
    if (j - i > 1)
    {
      text << " x" << (j - i);
    }
    i = j;
  }
  return text.str();
}

/** "9.87 to 10.3" (the range of the finite values), "10" when they are all equal, "" when none is finite. */
std::string
DescribeRange(const std::vector<double> & values);

#ifdef SVDLR_HAVE_DCMTK
/** The writer's options for a series derived by `policy` with `ranks`: named "<svdlr::PolicyDescription> of <the
 * source's SeriesDescription>" (of `nameWithoutSource` when there is no source), in `transferSyntax`, its
 * DerivationDescription svdlr::SliceDerivationDescription with the tool and the ranks: "Each slice replaced by its
 * rank-20 truncated SVD reconstruction (SVDLowRankReconstructImage; ranks 20 (all 181 slices))". `source` is also the
 * options' source (null for a volume that did not come from DICOM). */
DicomWriteOptions
DerivedSeriesOptions(const svdlr::RankPolicy &        policy,
                     const std::vector<std::size_t> & ranks,
                     const DicomVolume *              source,
                     const std::string &              nameWithoutSource,
                     DicomOutputSyntax                transferSyntax);
#endif

} // namespace svdlr_io

#endif
