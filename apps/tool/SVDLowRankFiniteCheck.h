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
#ifndef SVDLowRankFiniteCheck_h
#define SVDLowRankFiniteCheck_h

// The tools refuse an input that holds NaN or Inf before any work, with exit code 3 (SVDLowRankExitCodes.h), and
// name the first such voxel; the filters would refuse it too, but as a processing failure (exit code 1).

#include "SVDLowRankExitCodes.h"

#include <cmath>
#include <cstddef>
#include <limits>
#include <sstream>
#include <string>

namespace svdlr_tools
{

/** The first NaN or Inf of `image`, named by voxel, is an input error (exit code 3), as SVDLowRankDenoiseSeries does for its series. */
template <typename TImage>
void
CheckFinite(const TImage * image, const std::string & path)
{
  if constexpr (!std::numeric_limits<typename TImage::PixelType>::is_integer)
  {
    const auto *      data = image->GetBufferPointer();
    const std::size_t count = image->GetLargestPossibleRegion().GetNumberOfPixels();
    for (std::size_t i = 0; i < count; ++i)
    {
      if (!std::isfinite(data[i]))
      {
        std::ostringstream voxel;
        voxel << image->ComputeIndex(static_cast<typename TImage::OffsetValueType>(i));
        throw InputError("'" + path + "' holds NaN or Inf at voxel " + voxel.str());
      }
    }
  }
}

} // namespace svdlr_tools

#endif
