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
#ifndef svdlr_VolumeGroupMeans_h
#define svdlr_VolumeGroupMeans_h

// DenoiseLocalLowRank's demeaning (LocalDenoiseOptions::volumeGroups): each voxel's mean over each group of volumes,
// subtracted before the low-rank step and added back after. A voxel's means are the same for every patch that holds
// it, so they are taken once, on the host, for either backend; the backends then see a series whose noise has
// `Groups()` dimensions fewer (removedVolumeDimensions), which their rank rule is told.

#include "svdlr/LocalDenoise.h"

#include <cstddef>
#include <array>
#include <cstdint>
#include <vector>

namespace svdlr
{
namespace detail
{

/** The number of groups in `groups` (`volumes` values), checked: InvalidArgument unless every group 0 .. count - 1
 * holds a volume. */
std::size_t
CheckedGroupCount(const std::uint32_t * groups, std::size_t volumes);

class VolumeGroupMeans
{
public:
  /** Each voxel's mean of `input` over each group of volumes, summed in float64 on `parallelFor`'s workers. */
  VolumeGroupMeans(const SeriesView<const float> & input, const std::uint32_t * groups,
                   const ParallelFor & parallelFor);

  std::size_t
  Groups() const
  {
    return m_Count;
  }

  /** output = input - the voxel's group mean (output may be the input itself). */
  void
  Subtract(const SeriesView<const float> & input, const SeriesView<float> & output) const;

  /** output += the voxel's group mean; where `mask` is 0 and `original` is not null, the original values instead, so
   * that voxels outside the mask come back bit for bit. */
  void
  AddBack(const SeriesView<float> & output, const std::uint8_t * mask, const SeriesView<const float> * original) const;

private:
  std::vector<std::uint32_t> m_Groups; // per volume
  std::size_t                m_Count{ 0 };
  std::array<std::size_t, 3> m_Size{};
  std::vector<double>        m_Means; // (voxels, groups), groups fastest
  ParallelFor                m_ParallelFor;
};

} // namespace detail
} // namespace svdlr

#endif
