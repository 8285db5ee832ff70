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
#ifndef svdlr_GFactor_h
#define svdlr_GFactor_h

// DenoiseLocalLowRank with a g-factor map (LocalDenoiseOptions::gfactor), NORDIC's normalisation (Moeller et al.
// 2021, Vizioli et al. 2021): the series divided by g, so that its thermal noise is uniform; the low-rank step with
// one sigma, on either backend; the result multiplied by g, and the sigma map too, so that both are in the input's
// units. Host code around the backends, like the demeaning (svdlrVolumeGroupMeans.h).

#include "svdlr/LocalDenoise.h"

namespace svdlr
{
namespace detail
{

/** DenoiseLocalLowRank with options.gfactor set: checks the map (GFactorMapProblem) and that no magnitude noise model
 * is active, divides the input by g into the output, denoises the output in place without the map, and multiplies
 * the output and the sigma map by g; maps.gfactor, if asked, gets the map. When the backend throws, the output is multiplied back first, so that an
 * in-place input is left as it was up to the rounding of dividing and multiplying. */
LocalDenoiseReport
DenoiseWithGFactor(const SeriesView<const float> & input, const SeriesView<float> & output,
                   const LocalDenoiseMaps & maps, const LocalDenoiseOptions & options);

} // namespace detail
} // namespace svdlr

#endif
