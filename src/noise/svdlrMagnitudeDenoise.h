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

#include <functional>

namespace svdlr
{

struct MagnitudeTransform; // svdlrMagnitudeTransform.h

namespace detail
{

/** A magnitude transform on the host, around a low-rank pass that cannot apply it itself (the CPU backend, or a pass
 * that demeans volume groups): `input` stabilised into `output`, `denoise()` run on `output` in place, `output`
 * inverted; the three steps' seconds into `seconds` (sigmaPass untouched). InvalidArgument on mismatched sizes, a
 * null or negative sigma. */
void
DenoiseBetweenHostTransforms(const SeriesView<const float> & input, const SeriesView<float> & output,
                             const MagnitudeTransform & transform, unsigned threads,
                             LocalDenoiseReport::MagnitudeSteps & seconds, const std::function<void()> & denoise);

/** DenoiseLocalLowRank's low-rank pass on the chosen backend, once the front end has checked the views and taken
 * its detours (the g-factor, the magnitude model): `options` without them. With a `transform` (and no volume
 * groups), the series is stabilised on its way in and inverted on its way out: the CUDA backend does it as it
 * unpacks and finalises each slab; the CPU backend on the host (DenoiseBetweenHostTransforms), whose steps' times
 * the report's magnitudeSeconds then hold (0 on the GPU). An output view with null data (and the input's size and
 * strides) asks for the maps alone, a σ pass: no eigenvector and no approximation is formed, and nothing is written
 * but the maps; not with a transform nor volume groups (std::logic_error). */
LocalDenoiseReport
DenoiseLowRankPass(const SeriesView<const float> & input, const SeriesView<float> & output,
                   const LocalDenoiseMaps & maps, const LocalDenoiseOptions & options,
                   const MagnitudeTransform * transform);

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
