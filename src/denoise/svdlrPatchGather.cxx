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
#include "denoise/svdlrPatchLowRank.h"

#include <cstdlib>

namespace svdlr
{
namespace detail
{

PatchGather::PatchGather(const SeriesView<const float> & input, const std::array<std::size_t, 3> & patch,
                         const LocalDenoiseOptions & options)
  : m_Input(input)
  , m_Patch(patch)
{
  if (options.patchShape == PatchShape::Sphere)
  {
    m_Voxels = SpherePatchUsed(input.size, input.volumes, options.patchRadius).voxels;
    m_SphereOrder = SphereOffsetOrder(patch);
  }
  else
  {
    m_Voxels = patch[0] * patch[1] * patch[2];
  }
}

void
PatchGather::Sphere(const std::array<std::int64_t, 3> & centre, double * x) const
{
  const auto &      s = m_Input.strides;
  const std::size_t m = m_Voxels;
  const std::size_t volumes = m_Input.volumes;
  ForEachSphereRow(centre, [&](std::int64_t row, std::int64_t vx, std::int64_t vy, std::int64_t vz) {
    const float * series = m_Input.data + vx * s[0] + vy * s[1] + vz * s[2];
    for (std::size_t t = 0; t < volumes; ++t)
    {
      x[static_cast<std::size_t>(row) + t * m] = series[static_cast<std::ptrdiff_t>(t) * s[3]];
    }
  });
}

void
PatchGather::Columns(const std::int64_t (&start)[3], std::size_t x0, std::size_t x1, double * x) const
{
  const std::size_t volumes = m_Input.volumes;
  const auto &      s = m_Input.strides;
  const std::size_t m = m_Voxels;
  const std::size_t ex = m_Patch[0], ey = m_Patch[1], ez = m_Patch[2];
  const float *     origin = m_Input.data + start[1] * s[1] + start[2] * s[2];
  // Column x of the patch is i % ex (a ring over x); kept as a counter that wraps, since a division per element
  // took a tenth of the CPU denoiser's time.
  const std::size_t firstRing = x0 % ex;
  if (std::abs(s[3]) >= std::abs(s[0]))
  {
    // Volumes far apart (itk::Image): runs along x are contiguous, so walk them volume by volume.
    for (std::size_t t = 0; t < volumes; ++t)
    {
      double *      column = x + t * m;
      const float * volume = origin + static_cast<std::ptrdiff_t>(t) * s[3];
      for (std::size_t k = 0; k < ez; ++k)
      {
        for (std::size_t j = 0; j < ey; ++j)
        {
          const float *     run = volume + static_cast<std::ptrdiff_t>(k) * s[2] + static_cast<std::ptrdiff_t>(j) * s[1];
          double *          target = column + j + ey * k;
          std::size_t       ring = firstRing;
          for (std::size_t i = x0; i < x1; ++i)
          {
            target[ring * ey * ez] = run[static_cast<std::ptrdiff_t>(i) * s[0]];
            ring = ring + 1 == ex ? 0 : ring + 1;
          }
        }
      }
    }
    return;
  }
  // Volumes adjacent (itk::VectorImage): each voxel's series is contiguous.
  for (std::size_t k = 0; k < ez; ++k)
  {
    for (std::size_t j = 0; j < ey; ++j)
    {
      std::size_t ring = firstRing;
      for (std::size_t i = x0; i < x1; ++i, ring = ring + 1 == ex ? 0 : ring + 1)
      {
        const float * series = origin + static_cast<std::ptrdiff_t>(k) * s[2] + static_cast<std::ptrdiff_t>(j) * s[1] +
                               static_cast<std::ptrdiff_t>(i) * s[0];
        const std::size_t row = ring * ey * ez + j + ey * k;
        for (std::size_t t = 0; t < volumes; ++t)
        {
          x[row + t * m] = series[static_cast<std::ptrdiff_t>(t) * s[3]];
        }
      }
    }
  }
}

} // namespace detail
} // namespace svdlr
