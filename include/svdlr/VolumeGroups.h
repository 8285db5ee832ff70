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
#ifndef svdlr_VolumeGroups_h
#define svdlr_VolumeGroups_h

// The groups of volumes whose per-voxel mean the local denoiser subtracts before its low-rank step (Demean,
// DenoiseChoices.h; LocalDenoiseOptions::volumeGroups): one rule for the engine, the ITK filter, the tools and
// Python, so that a series is split into the same shells and echoes everywhere. ITK-free and CUDA-free.

#include "svdlr/Defaults.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace svdlr
{

/** The b-value shell of each volume: the b-values sorted, a new shell wherever one is more than `tolerance` s/mm²
 * above the one before it (MRtrix3's rule, whose BValueEpsilon is kShellBValueTolerance), shells numbered from the
 * lowest b-value (0 is b = 0 when the series has one). InvalidArgument for no b-value, a negative or non-finite
 * one, or a tolerance that is not positive. */
std::vector<std::uint32_t>
ShellGroups(const std::vector<double> & bvalues, double tolerance = kShellBValueTolerance);

/** The group of each of `volumes` volumes for `demean`, or an empty vector for Demean::None:
 *  - All: one group;
 *  - Shells: ShellGroups(bvalues), which must hold one b-value per volume;
 *  - Echoes: `echoes` consecutive blocks of volumes / echoes volumes (a series stacked echo after echo, as a 5D
 *    (x, y, z, t, echo) image's buffer is), which needs echoes >= 2 dividing `volumes`.
 * InvalidArgument, naming the counts, otherwise. */
std::vector<std::uint32_t>
DemeanGroups(Demean demean, std::size_t volumes, std::size_t echoes, const std::vector<double> & bvalues);

/** The number of groups of a per-volume group list whose indices are 0 .. count - 1 (its largest index + 1; 0 for an
 * empty list). */
std::size_t
GroupCount(const std::vector<std::uint32_t> & groups);

} // namespace svdlr

#endif
