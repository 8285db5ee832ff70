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
#ifndef svdlr_LocalDenoisePatchPlace_cuh
#define svdlr_LocalDenoisePatchPlace_cuh

// Where a patch lies in the series and in a slab window, for the kernels that read patches from the slab
// (svdlrLocalDenoiseGramKernels.cu, svdlrLocalDenoiseApproximationKernels.cu). Device code only; no ITK header.

#include "svdlrLocalDenoiseKernels.cuh"
#include "svdlrPatchGeometry.h"

#include <cstdint>

namespace svdlr
{
namespace detail
{

/** Where a patch lies: its start and its centre's row. */
struct PatchPlace
{
  std::int64_t sx, sy, sz;
  std::int64_t centreRow;
};

__device__ inline PatchPlace
PlacePatch(const DenoiseGeometry & g, std::int64_t centre)
{
  const std::int64_t plane = g.PlaneVoxels();
  const std::int64_t cz = centre / plane;
  const std::int64_t cy = (centre - cz * plane) / g.nx;
  const std::int64_t cx = centre - cz * plane - cy * g.nx;
  PatchPlace         p;
  p.sx = PatchStart(cx, g.ex, g.nx);
  p.sy = PatchStart(cy, g.ey, g.ny);
  p.sz = PatchStart(cz, g.ez, g.nz);
  p.centreRow = PatchRow(cx, cy, cz, p.sx, p.sy, p.sz, g.ex, g.ey);
  return p;
}

/** Index, within the slab window, of row r of the patch that starts at p (its voxel; times volumes for the slab).
 * 32-bit divisions: a patch has far fewer than 2^31 voxels. */
__device__ inline std::int64_t
WindowVoxel(const DenoiseGeometry & g, const SlabWindow & w, const PatchPlace & p, int r)
{
  const int ex = static_cast<int>(g.ex);
  const int ey = static_cast<int>(g.ey);
  const int dx = r % ex;
  const int dy = (r / ex) % ey;
  const int dz = r / (ex * ey);
  return ((p.sz + dz - w.first) * g.ny + (p.sy + dy)) * g.nx + (p.sx + dx);
}

} // namespace detail
} // namespace svdlr

#endif
