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
#ifndef svdlrLocalDenoiseSeriesShape_h
#define svdlrLocalDenoiseSeriesShape_h

// The synthetic series the local denoiser's CPU suites draw (svdlrLocalDenoiseGTest.cxx and
// svdlrLocalDenoiseProgressGTest.cxx), written once: their measured bounds hold for this shape and this noise.

#include <array>
#include <cstddef>

namespace svdlr
{
namespace test
{
namespace local_denoise_series
{

/** 12x11x10 voxels: a 5x5x5 patch (125 voxels) has more voxels than the volumes, a 3x3x3 one (27) fewer. */
constexpr std::array<std::size_t, 3> kSize{ 12, 11, 10 };
constexpr std::size_t                kVolumes = 30;
/** The noise's standard deviation in every volume. */
constexpr double kSigma = 1.5;

} // namespace local_denoise_series
} // namespace test
} // namespace svdlr

#endif
