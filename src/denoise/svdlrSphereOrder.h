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
#ifndef svdlr_SphereOrder_h
#define svdlr_SphereOrder_h

// The host side of spherical patches: the sorted table of offsets both backends walk (svdlrSpherePatch.h).

#include "denoise/svdlrSpherePatch.h"

#include <array>
#include <cstddef>
#include <vector>

namespace svdlr
{
namespace detail
{

/** Every offset a voxel of a box of `extent` can have from a centre voxel inside that box (each component in
 * [-(e - 1), e - 1]), sorted by squared length, then dz, dy, dx. */
std::vector<PatchOffset>
SphereOffsetOrder(const std::array<std::size_t, 3> & extent);

} // namespace detail
} // namespace svdlr

#endif
