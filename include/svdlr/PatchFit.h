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
#ifndef svdlr_PatchFit_h
#define svdlr_PatchFit_h

// Whether a requested patch, cuboid or sphere, fits the image: one rule for the engine (DenoiseLocalLowRank, so the
// ITK filter and Python), and the denoiser tool, which checks it up front in its options' words. ITK-free.

#include "svdlr/DenoiseChoices.h"

#include <array>
#include <cstddef>

namespace svdlr
{

/** The box a requested patch spans along x, y, z before it meets an image: `patchSize` for a cuboid, 2 floor(radius)
 * + 1 along every axis for a sphere of radius > 0 (saturated, so that a radius of 1e9 or 1e300 spans more than any
 * image), and 0 where the default is asked for (a cuboid of {0, 0, 0}, a sphere of radius 0: fitted to the image). */
std::array<std::size_t, 3>
RequestedPatchBox(PatchShape shape, const std::array<std::size_t, 3> & patchSize, double radius);

/** The first axis (0, 1 or 2) along which a patch spanning `box` (RequestedPatchBox) is larger than an image of `size`
 * voxels, or 3 when it fits. One rule for cuboids and spheres alike: a requested patch larger than the image is
 * refused (a sphere is not cut down to it, which would make it the whole image), by DenoiseLocalLowRank before it
 * allocates anything and, up front, by the tools. Only the default sphere is fitted to a thin image. */
unsigned int
PatchAxisBeyondImage(const std::array<std::size_t, 3> & size, const std::array<std::size_t, 3> & box);

} // namespace svdlr

#endif
