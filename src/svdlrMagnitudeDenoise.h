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
#ifndef svdlr_MagnitudeDenoise_h
#define svdlr_MagnitudeDenoise_h

#include "svdlr/LocalDenoise.h"

namespace svdlr
{
namespace detail
{

/** DenoiseLocalLowRank with options.magnitudeNoise active: sigma (given, or from a first pass over the magnitude),
 * the series stabilised, denoised on the chosen backend, and inverted; or, without stabilisation, the magnitude
 * denoised, its sigma map corrected for the floor (sigmaFloorCorrection) and the floor removed (noiseFloor), each if
 * asked. Voxels outside the mask are copied. The report is the low-rank pass's. */
LocalDenoiseReport
DenoiseMagnitudeSeries(const SeriesView<const float> & input, const SeriesView<float> & output,
                       const LocalDenoiseMaps & maps, const LocalDenoiseOptions & options);

} // namespace detail
} // namespace svdlr

#endif
