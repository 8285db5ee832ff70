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
#ifndef svdlr_PatchCentres_h
#define svdlr_PatchCentres_h

// Which voxels DenoiseLocalLowRank centres a patch on. Host code shared by both backends, so that they compute the
// same patches.

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace svdlr
{
namespace detail
{

/** A bitmap of VoxelCount() bytes, x fastest, 1 where a patch is centred:
 *  - stride 1: every voxel inside the mask (every voxel without one);
 *  - stride s > 1: the voxels inside the mask on a body-centred cubic lattice: the grid {0, s, 2s, ...} ∪ {n - 1} of
 *    each axis and the centres of its cells (the voxels whose every coordinate is s/2 modulo s); then every voxel
 *    inside the mask that none of those patches covers, so that each voxel inside the mask lies in at least one
 *    patch. Without a mask the grid alone covers every voxel when s <= the patch extent of every axis, which the
 *    front end requires.
 * Why the cell centres: they double the patches over the plain grid (2 / s³ of the dense count instead of 1 / s³)
 * and spread them evenly, the body-centred lattice being the thinnest covering of space. At stride 2 on 48x48x24
 * phantoms of 30 and 65 volumes the plain grid lost 0.03-0.10 dB of PSNR against the dense run, the lattice
 * 0.002-0.010 dB; a grid thinned along x and y only, at the same cost, 0.01-0.07 dB (docs/denoising.md, "Long
 * series"). */
std::vector<std::uint8_t>
PatchCentres(const std::array<std::size_t, 3> & size, const std::array<std::size_t, 3> & patch, std::size_t stride,
             const std::uint8_t * mask);

} // namespace detail
} // namespace svdlr

#endif
