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
#ifndef svdlr_LocalDenoiseBackends_h
#define svdlr_LocalDenoiseBackends_h

// Internal contract between DenoiseLocalLowRank's front end (svdlrLocalDenoise.cxx) and its backends.
// The front end has validated the views, the options and the maps, checked that the input is finite (so a backend
// meets no NaN or Inf), resolved options.patchSize (never {0,0,0} here: `patch` holds the extent to use) and
// filled report.patchSize; it passes options.shrinkage with Auto resolved, but a backend reads it through
// ShrinksOptimally, so that a caller that reaches a backend directly (the CUDA tests' tuned runs, the CUDA
// benchmark) with Auto gets what DenoiseLocalLowRank would have done, not the hard threshold. A backend must:
//  - centre patches where PatchCentres (svdlrPatchCentres.h) says, and place them with svdlrPatchGeometry.h;
//  - write every output voxel (copying those outside the mask) and every map value asked for, or throw;
//  - give the same result as the CPU backend to within float32 rounding of the patch decompositions;
//  - report progress between batches of patches on the calling thread only, and set report.patches;
//  - when the output is the input (in place) and it throws an error after which Auto falls back to the CPU
//    (BackendUnavailable, DeviceFailure, OutOfMemory), not have written any output yet: the CPU reads the input.
// The CUDA backend also takes a magnitude transform (svdlrMagnitudeTransform.h), which it applies to each slab on
// its way in and inverts on its way out; the front end applies it on the host around the CPU backend.
// Below the backends: the front end's host passes around them (demeaning, g-factor, magnitude model).

#include "svdlr/LocalDenoise.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace svdlr
{

struct MagnitudeTransform; // svdlrMagnitudeTransform.h

namespace detail
{

/** Whether the patches' kept components are shrunk (OptimalFrobenius) rather than kept whole (Hard): the options'
 * shrinkage as ResolveShrinkage reads it, which leaves a resolved one as it is. Both backends ask this. */
inline bool
ShrinksOptimally(const LocalDenoiseOptions & options)
{
  return ResolveShrinkage(options.shrinkage, options.policy, options.noiseSigma != nullptr) ==
         Shrinkage::OptimalFrobenius;
}

/** The stride the patches are centred with: the options' as PatchStrideUsed reads it, which leaves a resolved one as
 * it is (a backend reached directly, as by the CUDA benchmark, gets the default kAutoPatchStride). Both backends ask
 * this. */
inline std::size_t
BackendPatchStride(const LocalDenoiseOptions & options, const std::array<std::size_t, 3> & patch)
{
  return PatchStrideUsed(patch, options.patchShape, options.aggregation, options.patchStride);
}

void
RunLocalDenoiseCpu(const SeriesView<const float> & input, const SeriesView<float> & output,
                   const LocalDenoiseMaps & maps, const LocalDenoiseOptions & options,
                   const std::array<std::size_t, 3> & patch, LocalDenoiseReport & report);

/** Same contract on the GPU (src/cuda/; svdlrCudaBackendDisabled.cxx throws BackendUnavailable). The views are
 * host memory; the backend stages slabs of the series through the device. With a `transform`, the output is its
 * inverse of the low-rank approximation of the input stabilised by it. */
void
RunLocalDenoiseCuda(const SeriesView<const float> & input, const SeriesView<float> & output,
                    const LocalDenoiseMaps & maps, const LocalDenoiseOptions & options,
                    const std::array<std::size_t, 3> & patch, LocalDenoiseReport & report,
                    const MagnitudeTransform * transform = nullptr);

// DenoiseLocalLowRank's demeaning (LocalDenoiseOptions::volumeGroups): each voxel's mean over each group of volumes,
// subtracted before the low-rank step and added back after. A voxel's means are the same for every patch that holds
// it, so they are taken once, on the host, for either backend; the backends then see a series whose noise has
// `Groups()` dimensions fewer (removedVolumeDimensions), which their rank rule is told.

/** The number of groups in `groups` (`volumes` values), checked: InvalidArgument unless every group 0 .. count - 1
 * holds a volume. */
std::size_t
CheckedGroupCount(const std::uint32_t * groups, std::size_t volumes);

class VolumeGroupMeans
{
public:
  /** Each voxel's mean of `input` over each group of volumes, summed in float64 on `parallelFor`'s workers. */
  VolumeGroupMeans(const SeriesView<const float> & input, const std::uint32_t * groups,
                   const ParallelFor & parallelFor);

  std::size_t
  Groups() const
  {
    return m_Count;
  }

  /** output = input - the voxel's group mean (output may be the input itself). */
  void
  Subtract(const SeriesView<const float> & input, const SeriesView<float> & output) const;

  /** output += the voxel's group mean; where `mask` is 0 and `original` is not null, the original values instead, so
   * that voxels outside the mask come back bit for bit. */
  void
  AddBack(const SeriesView<float> & output, const std::uint8_t * mask, const SeriesView<const float> * original) const;

private:
  std::vector<std::uint32_t> m_Groups; // per volume
  std::size_t                m_Count{ 0 };
  std::array<std::size_t, 3> m_Size{};
  std::vector<double>        m_Means; // (voxels, groups), groups fastest
  ParallelFor                m_ParallelFor;
};

// DenoiseLocalLowRank with a g-factor map (LocalDenoiseOptions::gfactor), NORDIC's normalisation (Moeller et al.
// 2021, Vizioli et al. 2021): the series divided by g, so that its thermal noise is uniform; the low-rank step with
// one sigma, on either backend; the result multiplied by g, and the sigma map too, so that both are in the input's
// units.

/** DenoiseLocalLowRank with options.gfactor set: checks the map (GFactorMapProblem) and that no magnitude noise model
 * is active, divides the input by g into the output, denoises the output in place without the map, and multiplies
 * the output and the sigma map by g; maps.gfactor, if asked, gets the map. When the backend throws, the output is multiplied back first, so that an
 * in-place input is left as it was up to the rounding of dividing and multiplying. */
LocalDenoiseReport
DenoiseWithGFactor(const SeriesView<const float> & input, const SeriesView<float> & output,
                   const LocalDenoiseMaps & maps, const LocalDenoiseOptions & options);

// DenoiseLocalLowRank with LocalDenoiseOptions::estimateGFactor: the g-factor map estimated from the series, as
// NORDIC does when it is given none (Moeller et al. 2021; NIFTI_NORDIC's first pass of MP-PCA over the series, whose
// local noise level is its g-factor map), then the given-map path (DenoiseWithGFactor) with that map. The first
// pass runs on the chosen backend, the map is made on the host.

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
