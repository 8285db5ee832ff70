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
#ifndef svdlr_PatchGather_h
#define svdlr_PatchGather_h

// The CPU denoiser's gathering of a patch's Casorati matrix X (column-major (voxels, volumes), float64) from the
// series: a cuboid by columns of voxels (rows as the CPU denoiser's CasoratiRow numbers them, so that its sliding Gram
// update can replace one column), a sphere voxel by voxel in the order of its offset table (svdlrSpherePatch.h).

#include "svdlr/LocalDenoise.h"

#include "denoise/svdlrPatchGeometry.h"
#include "denoise/svdlrSphereOrder.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace svdlr
{
namespace detail
{

class PatchGather
{
public:
  /** For patches of box `patch` (the sphere's box for PatchShape::Sphere) of `input`. */
  PatchGather(const SeriesView<const float> & input, const std::array<std::size_t, 3> & patch,
              const LocalDenoiseOptions & options);

  /** Voxels per patch: X's rows. */
  std::size_t
  Voxels() const
  {
    return m_Voxels;
  }

  /** Cuboids: the columns [x0, x1) of the patch starting at `start` into X; the rows of column i are
   * (i mod ex) ey ez + j + ey k for its voxel (i, j, k) of the box. */
  void
  Columns(const std::int64_t (&start)[3], std::size_t x0, std::size_t x1, double * x) const;

  /** Spheres: X of the sphere centred on `centre`. */
  void
  Sphere(const std::array<std::int64_t, 3> & centre, double * x) const;

  /** Spheres: take(row, x, y, z) for every voxel of the sphere centred on `centre`, row 0 (the centre) first. */
  template <typename TTake>
  void
  ForEachSphereRow(const std::array<std::int64_t, 3> & centre, TTake && take) const
  {
    const std::int64_t c[3] = { centre[0], centre[1], centre[2] };
    std::int64_t       start[3], extent[3];
    for (int axis = 0; axis < 3; ++axis)
    {
      extent[axis] = static_cast<std::int64_t>(m_Patch[axis]);
      start[axis] = PatchStart(c[axis], extent[axis], static_cast<std::int64_t>(m_Input.size[axis]));
    }
    ForEachSphereVoxel(m_SphereOrder.data(), static_cast<std::int64_t>(m_SphereOrder.size()),
                       static_cast<std::int64_t>(m_Voxels), c, start, extent, take);
  }

private:
  const SeriesView<const float> & m_Input;
  const std::array<std::size_t, 3> m_Patch;
  std::size_t                     m_Voxels{ 0 };
  std::vector<PatchOffset>        m_SphereOrder; // spheres: the offsets in the order patches take them
};

} // namespace detail
} // namespace svdlr

#endif
