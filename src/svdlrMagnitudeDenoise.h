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

#include <chrono>

namespace svdlr
{

struct MagnitudeTransform; // svdlrMagnitudeTransform.h

namespace detail
{

/** Seconds since `start`, and restarts it: the magnitude path's steps are timed back to back. */
inline double
Lap(std::chrono::steady_clock::time_point & start)
{
  const auto   now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - start).count();
  start = now;
  return seconds;
}

enum class TransformDirection
{
  Stabilise, // StabilisedValue
  Invert     // UnstabilisedValue
};

/** `transform` applied to every voxel of `in` into `out` (which may be `in`), on the host. InvalidArgument on
 * mismatched sizes, a null or negative sigma. */
void
ApplyMagnitudeTransform(const SeriesView<const float> & in, const MagnitudeTransform & transform,
                        TransformDirection direction, const SeriesView<float> & out, unsigned threads);

/** DenoiseLocalLowRank's low-rank pass on the chosen backend, once the front end has checked the views and taken
 * its detours (the g-factor, the magnitude model): `options` without them. With a `transform` (and no volume
 * groups), the series is stabilised on its way in and inverted on its way out: the CUDA backend does it as it
 * unpacks and finalises each slab; the CPU backend on the host, into the output, around a run in place there; the
 * report's magnitudeSeconds then hold the CPU's two host steps (0 on the GPU). */
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
