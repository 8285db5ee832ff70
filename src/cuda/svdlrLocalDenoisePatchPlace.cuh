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
// (svdlrLocalDenoiseGramKernels.cu, svdlrLocalDenoiseApproximationKernels.cu): a cuboid's rows by arithmetic, a
// sphere's by walking its offset table (svdlrSpherePatch.h) a warp at a time. Device code only; no ITK header.

#include "svdlrLocalDenoiseKernels.cuh"
#include "denoise/svdlrPatchGeometry.h"

#include <cstdint>

namespace svdlr
{
namespace detail
{

/** Where a patch lies: its start, the voxel it is centred on and that voxel's row. */
struct PatchPlace
{
  std::int64_t sx, sy, sz;
  std::int64_t cx, cy, cz;
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
  p.cx = cx;
  p.cy = cy;
  p.cz = cz;
  // A sphere's centre voxel is its row 0.
  p.centreRow = g.sphereVoxels > 0 ? 0 : PatchRow(cx, cy, cz, p.sx, p.sy, p.sz, g.ex, g.ey);
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

/** The window voxel of each of the patch's PatchVoxels() rows, into voxelOf (shared memory), by the whole block
 * (blockDim.x >= 32); the caller synchronises before reading it. A sphere's table is walked by the first warp, 32
 * offsets at a time, each kept offset's row being the count of those kept before it: ForEachSphereVoxel's rows. */
__device__ inline void
FillPatchVoxels(const DenoiseGeometry & g, const SlabWindow & w, const PatchPlace & p, std::int64_t * voxelOf)
{
  const int m = static_cast<int>(g.PatchVoxels());
  if (g.sphereVoxels == 0)
  {
    for (int r = threadIdx.x; r < m; r += blockDim.x)
    {
      voxelOf[r] = WindowVoxel(g, w, p, r);
    }
    return;
  }
  if (threadIdx.x >= 32)
  {
    return;
  }
  const unsigned     lane = threadIdx.x;
  const std::int64_t centre[3] = { p.cx, p.cy, p.cz };
  const std::int64_t start[3] = { p.sx, p.sy, p.sz };
  const std::int64_t extent[3] = { g.ex, g.ey, g.ez };
  int                found = 0;
  for (std::int64_t base = 0; base < g.sphereOrderSize && found < m; base += 32)
  {
    const std::int64_t i = base + lane;
    PatchOffset        o{ 0, 0, 0, 0 };
    bool               keep = false;
    if (i < g.sphereOrderSize)
    {
      o = g.sphereOrder[i];
      keep = OffsetInBox(o, centre, start, extent);
    }
    const unsigned kept = __ballot_sync(0xffffffffu, keep);
    const int      row = found + __popc(kept & ((1u << lane) - 1u));
    if (keep && row < m)
    {
      voxelOf[row] = ((p.cz + o.dz - w.first) * g.ny + (p.cy + o.dy)) * g.nx + (p.cx + o.dx);
    }
    found += __popc(kept);
  }
}

/** The squared distance, in voxels², of window voxel v from the voxel patch p is centred on. */
__device__ inline double
DistanceFromCentre2(const DenoiseGeometry & g, const SlabWindow & w, const PatchPlace & p, std::int64_t v)
{
  const std::int64_t plane = g.PlaneVoxels();
  const std::int64_t z = v / plane;
  const std::int64_t y = (v - z * plane) / g.nx;
  const std::int64_t x = v - z * plane - y * g.nx;
  const std::int64_t dx = x - p.cx, dy = y - p.cy, dz = z + w.first - p.cz;
  return static_cast<double>(dx * dx + dy * dy + dz * dz);
}

} // namespace detail
} // namespace svdlr

#endif
