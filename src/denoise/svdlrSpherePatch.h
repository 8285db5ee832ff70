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
#ifndef svdlr_SpherePatch_h
#define svdlr_SpherePatch_h

// Which voxels a spherical patch holds (svdlr::SpherePatch, LocalDenoise.h), for both backends of
// DenoiseLocalLowRank: host and device code, so no exceptions and no std:: containers here.
//
// A sphere's patch is found by walking one table of offsets from the centre voxel, sorted by distance and then by
// (z, y, x), and keeping those that fall inside the patch's box (the cuboid box of the sphere's extent, shifted
// inward at the borders as a cuboid is) until the patch's voxel count is reached. Away from the borders the box is
// centred and the walk keeps exactly the offsets within the radius; near a border it keeps the nearest voxels the
// shifted box holds. The centre voxel (offset 0) is always the first row. The CPU walks the table per patch; the GPU
// walks it a warp at a time (svdlrLocalDenoisePatchPlace.cuh). Same table, same rule: the same rows in the same
// order on both.

#include "shared/svdlrHostDevice.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace svdlr
{
namespace detail
{

/** An offset from a patch's centre voxel, and its squared length. */
struct PatchOffset
{
  std::int32_t dx, dy, dz;
  std::int32_t distance2;
};

/** Whether centre + offset lies in the box [start, start + extent) along every axis. */
SVDLR_HOST_DEVICE inline bool
OffsetInBox(const PatchOffset & offset, const std::int64_t (&centre)[3], const std::int64_t (&start)[3],
            const std::int64_t (&extent)[3])
{
  const std::int64_t x = centre[0] + offset.dx - start[0];
  const std::int64_t y = centre[1] + offset.dy - start[1];
  const std::int64_t z = centre[2] + offset.dz - start[2];
  return x >= 0 && x < extent[0] && y >= 0 && y < extent[1] && z >= 0 && z < extent[2];
}

/** Calls take(row, x, y, z) for each voxel of the spherical patch of `voxels` voxels centred on `centre` whose box
 * starts at `start` with `extent`, row 0 first; `order` is the table SphereOffsetOrder made for that extent. */
template <typename TTake>
SVDLR_HOST_DEVICE inline void
ForEachSphereVoxel(const PatchOffset * order, std::int64_t orderSize, std::int64_t voxels,
                   const std::int64_t (&centre)[3], const std::int64_t (&start)[3], const std::int64_t (&extent)[3],
                   TTake && take)
{
  std::int64_t row = 0;
  for (std::int64_t i = 0; i < orderSize && row < voxels; ++i)
  {
    if (OffsetInBox(order[i], centre, start, extent))
    {
      take(row++, centre[0] + order[i].dx, centre[1] + order[i].dy, centre[2] + order[i].dz);
    }
  }
}

// The host side of spherical patches: the sorted table of offsets both backends walk.

/** Every offset a voxel of a box of `extent` can have from a centre voxel inside that box (each component in
 * [-(e - 1), e - 1]), sorted by squared length, then dz, dy, dx. */
std::vector<PatchOffset>
SphereOffsetOrder(const std::array<std::size_t, 3> & extent);

} // namespace detail
} // namespace svdlr

#endif
