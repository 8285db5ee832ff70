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
#ifndef svdlr_PatchGeometry_h
#define svdlr_PatchGeometry_h

// Where the patch of a voxel lies, for both backends of DenoiseLocalLowRank (host and device code, so no
// exceptions and no std:: containers). Along each axis a patch of odd extent e is centred on its voxel c and
// shifted inward at the borders so that it always lies inside [0, n), as dwidenoise does: a voxel near a border
// is then not at the centre of its own patch, and its row in the Casorati matrix is c - PatchStart(...).

#include "shared/svdlrHostDevice.h"

#include <cstdint>

namespace svdlr
{
namespace detail
{

/** First voxel of the patch of extent `extent` (odd, <= n) around voxel `centre` along an axis of n voxels. */
SVDLR_HOST_DEVICE inline std::int64_t
PatchStart(std::int64_t centre, std::int64_t extent, std::int64_t n)
{
  const std::int64_t start = centre - extent / 2;
  const std::int64_t last = n - extent;
  return start < 0 ? 0 : (start > last ? last : start);
}

/** Row of voxel (x, y, z) in the Casorati matrix of the patch that starts at (sx, sy, sz) with extent
 * (ex, ey, ez): patch voxels are numbered x fastest, then y, then z. */
SVDLR_HOST_DEVICE inline std::int64_t
PatchRow(std::int64_t x, std::int64_t y, std::int64_t z, std::int64_t sx, std::int64_t sy, std::int64_t sz,
         std::int64_t ex, std::int64_t ey)
{
  return (x - sx) + ex * ((y - sy) + ey * (z - sz));
}

} // namespace detail
} // namespace svdlr

#endif
