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
#ifndef svdlr_GFactorEstimate_h
#define svdlr_GFactorEstimate_h

// DenoiseLocalLowRank with LocalDenoiseOptions::estimateGFactor: the g-factor map estimated from the series, as
// NORDIC does when it is given none (Moeller et al. 2021; NIFTI_NORDIC's first pass of MP-PCA over the series, whose
// local noise level is its g-factor map), then the given-map path (svdlrGFactor.h) with that map. Host code around
// either backend: the first pass runs on the chosen backend, the map is made on the host.

#include "svdlr/LocalDenoise.h"

#include <string>
#include <vector>

namespace svdlr
{
namespace detail
{

/** The estimated map and how it was scaled. */
struct GFactorEstimate
{
  std::vector<float> g;                  // VoxelCount() values, x fastest, in [kGFactorEstimateMinimum, ..Maximum]
  double             referenceSigma{ 0 }; // the σ that is g = 1
  bool               referenceGiven{ false }; // the known σ (true) or the percentile of the map (false)
  LocalDenoiseReport firstPass;           // the report of the σ pass
};

/** The σ map of a first pass of DefaultDenoisePolicy() over `input` (options' patch, mask, aggregation, backend;
 * no known σ, no g-factor, no magnitude model), smoothed over one patch extent inside the mask (SmoothSigmaInMask),
 * divided by the reference σ (LocalDenoiseOptions::estimateGFactor's rule) and clamped. InvalidArgument when the
 * first pass finds no noise in the mask. `progress` (may be empty) gets the first pass's patches. */
GFactorEstimate
EstimateGFactor(const SeriesView<const float> & input, const LocalDenoiseOptions & options,
                const ProgressCallback & progress);

/** The mean of `sigma` over the voxels of the box of half-widths `halfWidth` around each voxel that are inside the
 * mask (null: all) and hold a finite σ > 0; NaN where the box holds none. In float64, separable. */
std::vector<double>
SmoothSigmaInMask(const float * sigma, const std::uint8_t * mask, const std::array<std::size_t, 3> & size,
                  const std::array<std::size_t, 3> & halfWidth);

/** DenoiseLocalLowRank with options.estimateGFactor set: GFactorEstimateProblem, EstimateGFactor, then
 * DenoiseWithGFactor with the estimate; maps.gfactor gets the estimate. The progress callback sees both passes as one
 * run of twice the patches. */
LocalDenoiseReport
DenoiseWithEstimatedGFactor(const SeriesView<const float> & input, const SeriesView<float> & output,
                            const LocalDenoiseMaps & maps, const LocalDenoiseOptions & options);

} // namespace detail
} // namespace svdlr

#endif
