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
#include "SVDLowRankMethodLabels.h"

#include <algorithm>
#include <cmath>

namespace svdlr_io
{

std::string
DescribeRange(const std::vector<double> & values)
{
  bool   any = false;
  double low = 0.0, high = 0.0;
  for (const double v : values)
  {
    if (std::isfinite(v))
    {
      low = any ? std::min(low, v) : v;
      high = any ? std::max(high, v) : v;
      any = true;
    }
  }
  std::ostringstream text;
  if (any)
  {
    text << low;
    if (high != low)
    {
      text << " to " << high;
    }
  }
  return text.str();
}

#ifdef SVDLR_HAVE_DCMTK
DicomWriteOptions
DerivedSeriesOptions(const svdlr::RankPolicy &        policy,
                     const std::vector<std::size_t> & ranks,
                     const DicomVolume *              source,
                     const std::string &              nameWithoutSource,
                     DicomOutputSyntax                transferSyntax)
{
  DicomWriteOptions write;
  write.source = source;
  write.transferSyntax = transferSyntax;
  write.seriesDescription = svdlr::PolicyDescription(policy);
  const std::string & of = source != nullptr ? source->seriesDescription : nameWithoutSource;
  if (!of.empty())
  {
    write.seriesDescription += " of " + of;
  }
  write.derivationDescription =
    svdlr::SliceDerivationDescription(policy) + " (SVDLowRankReconstructImage; ranks " + DescribeRanks(ranks) + ")";
  return write;
}
#endif

} // namespace svdlr_io
