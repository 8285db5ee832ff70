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
#include "denoise/svdlrPatchCentres.h"

#include "denoise/svdlrPatchGeometry.h"

#include <algorithm>

namespace svdlr
{
namespace detail
{

namespace
{

bool
OnGrid(std::size_t i, std::size_t n, std::size_t stride)
{
  return i % stride == 0 || i + 1 == n;
}

/** The centre of a cell of the grid, along one axis (a cell at the end that the grid's last point {n - 1} cuts short
 * keeps it too). */
bool
InCellCentre(std::size_t i, std::size_t stride)
{
  return i % stride == stride / 2;
}

} // namespace

std::vector<std::uint8_t>
PatchCentres(const std::array<std::size_t, 3> & size, const std::array<std::size_t, 3> & patch, std::size_t stride,
             const std::uint8_t * mask)
{
  const std::size_t         nx = size[0], ny = size[1], nz = size[2];
  const std::size_t         voxels = nx * ny * nz;
  std::vector<std::uint8_t> centres(voxels, 0);
  const auto                inside = [mask](std::size_t v) { return mask == nullptr || mask[v] != 0; };

  for (std::size_t z = 0, v = 0; z < nz; ++z)
  {
    for (std::size_t y = 0; y < ny; ++y)
    {
      for (std::size_t x = 0; x < nx; ++x, ++v)
      {
        const bool corner = OnGrid(x, nx, stride) && OnGrid(y, ny, stride) && OnGrid(z, nz, stride);
        const bool body = stride > 1 && InCellCentre(x, stride) && InCellCentre(y, stride) && InCellCentre(z, stride);
        centres[v] = inside(v) && (corner || body);
      }
    }
  }
  if (stride == 1 || mask == nullptr)
  {
    return centres;
  }

  // With a mask, grid points outside it leave holes: centre a patch on each voxel inside the mask that no patch
  // covers. Scanning in voxel order and covering each new patch at once keeps the added centres few.
  std::vector<std::uint8_t> covered(voxels, 0);
  const auto                cover = [&](std::size_t x, std::size_t y, std::size_t z) {
    const auto sx = static_cast<std::size_t>(PatchStart(x, patch[0], nx));
    const auto sy = static_cast<std::size_t>(PatchStart(y, patch[1], ny));
    const auto sz = static_cast<std::size_t>(PatchStart(z, patch[2], nz));
    for (std::size_t k = sz; k < sz + patch[2]; ++k)
    {
      for (std::size_t j = sy; j < sy + patch[1]; ++j)
      {
        std::uint8_t * row = covered.data() + nx * (j + ny * k);
        std::fill(row + sx, row + sx + patch[0], std::uint8_t{ 1 });
      }
    }
  };
  for (std::size_t z = 0, v = 0; z < nz; ++z)
  {
    for (std::size_t y = 0; y < ny; ++y)
    {
      for (std::size_t x = 0; x < nx; ++x, ++v)
      {
        if (centres[v])
        {
          cover(x, y, z);
        }
      }
    }
  }
  for (std::size_t z = 0, v = 0; z < nz; ++z)
  {
    for (std::size_t y = 0; y < ny; ++y)
    {
      for (std::size_t x = 0; x < nx; ++x, ++v)
      {
        if (inside(v) && !covered[v])
        {
          centres[v] = 1;
          cover(x, y, z);
        }
      }
    }
  }
  return centres;
}

} // namespace detail
} // namespace svdlr
