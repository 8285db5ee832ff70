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
// Each voxel's mean over each group of volumes, subtracted before the local denoiser's low-rank step and added back
// after (svdlrLocalDenoiseBackends.h).
#include "denoise/svdlrLocalDenoiseBackends.h"

#include "svdlr/Engine.h"

#include <string>

namespace svdlr
{
namespace detail
{

namespace
{

/** Element (voxel (x, y, z), volume t) of a view. */
template <typename T>
T &
At(const SeriesView<T> & view, std::size_t x, std::size_t y, std::size_t z, std::size_t t)
{
  const auto & s = view.strides;
  return view.data[static_cast<std::ptrdiff_t>(x) * s[0] + static_cast<std::ptrdiff_t>(y) * s[1] +
                   static_cast<std::ptrdiff_t>(z) * s[2] + static_cast<std::ptrdiff_t>(t) * s[3]];
}

} // namespace

std::size_t
CheckedGroupCount(const std::uint32_t * groups, std::size_t volumes)
{
  std::vector<std::size_t> members;
  for (std::size_t t = 0; t < volumes; ++t)
  {
    if (groups[t] >= volumes)
    {
      throw Error(ErrorCode::InvalidArgument, "svdlr: volume " + std::to_string(t) + " is in group " +
                                                std::to_string(groups[t]) + ", beyond the series' " +
                                                std::to_string(volumes) + " volumes");
    }
    if (groups[t] >= members.size())
    {
      members.resize(groups[t] + 1, 0);
    }
    ++members[groups[t]];
  }
  for (std::size_t g = 0; g < members.size(); ++g)
  {
    if (members[g] == 0)
    {
      throw Error(ErrorCode::InvalidArgument, "svdlr: volume group " + std::to_string(g) +
                                                " holds no volume: groups must be numbered 0 .. count - 1");
    }
  }
  return members.size();
}

VolumeGroupMeans::VolumeGroupMeans(const SeriesView<const float> & input, const std::uint32_t * groups,
                                   const ParallelFor & parallelFor)
  : m_Groups(groups, groups + input.volumes)
  , m_Count(CheckedGroupCount(groups, input.volumes))
  , m_Size(input.size)
  , m_Means(input.VoxelCount() * m_Count, 0.0)
  , m_ParallelFor(parallelFor)
{
  std::vector<double> members(m_Count, 0.0);
  for (const std::uint32_t g : m_Groups)
  {
    members[g] += 1.0;
  }
  const std::size_t nx = m_Size[0], ny = m_Size[1];
  m_ParallelFor(m_Size[2], [&](std::size_t z) {
    for (std::size_t y = 0; y < ny; ++y)
    {
      for (std::size_t x = 0; x < nx; ++x)
      {
        double * means = m_Means.data() + (x + nx * (y + ny * z)) * m_Count;
        for (std::size_t t = 0; t < input.volumes; ++t)
        {
          means[m_Groups[t]] += At(input, x, y, z, t);
        }
        for (std::size_t g = 0; g < m_Count; ++g)
        {
          means[g] /= members[g];
        }
      }
    }
  });
}

void
VolumeGroupMeans::Subtract(const SeriesView<const float> & input, const SeriesView<float> & output) const
{
  const std::size_t nx = m_Size[0], ny = m_Size[1];
  m_ParallelFor(m_Size[2], [&](std::size_t z) {
    for (std::size_t y = 0; y < ny; ++y)
    {
      for (std::size_t x = 0; x < nx; ++x)
      {
        const double * means = m_Means.data() + (x + nx * (y + ny * z)) * m_Count;
        for (std::size_t t = 0; t < input.volumes; ++t)
        {
          At(output, x, y, z, t) = static_cast<float>(At(input, x, y, z, t) - means[m_Groups[t]]);
        }
      }
    }
  });
}

void
VolumeGroupMeans::AddBack(const SeriesView<float> & output, const std::uint8_t * mask,
                          const SeriesView<const float> * original) const
{
  const std::size_t nx = m_Size[0], ny = m_Size[1];
  m_ParallelFor(m_Size[2], [&](std::size_t z) {
    for (std::size_t y = 0; y < ny; ++y)
    {
      for (std::size_t x = 0; x < nx; ++x)
      {
        const std::size_t voxel = x + nx * (y + ny * z);
        const bool        copy = original != nullptr && mask != nullptr && mask[voxel] == 0;
        const double *    means = m_Means.data() + voxel * m_Count;
        for (std::size_t t = 0; t < output.volumes; ++t)
        {
          float & value = At(output, x, y, z, t);
          value = copy ? At(*original, x, y, z, t) : static_cast<float>(value + means[m_Groups[t]]);
        }
      }
    }
  });
}

} // namespace detail
} // namespace svdlr
