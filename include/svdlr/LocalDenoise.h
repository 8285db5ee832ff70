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
#ifndef svdlr_LocalDenoise_h
#define svdlr_LocalDenoise_h

// The ITK-free engine's second entry point: local low-rank denoising of a 4D series (diffusion, fMRI,
// multi-echo), the MP-PCA method of Veraart et al. (2016) that MRtrix3's dwidenoise implements.
//
// For every voxel v, the patch P(v) is a box of voxels around v (shifted inward at the image's borders so
// that it always lies inside, as dwidenoise does), or a sphere around v (SpherePatch below). Its Casorati matrix
// X(v) has one row per patch voxel and one column per volume. X(v) is replaced by its low-rank approximation, with
// the rank (and the noise level) chosen by options.policy, and the denoised series takes, per voxel, either the row
// of its own patch (CentreVoxel, as dwidenoise) or the mean of the rows of every patch that contains it
// (OverlapAverage), which may be weighted by each patch's rank or by the voxel's distance from its centre.
//
// Like Engine.h, this header holds no ITK and no CUDA type.

#include "svdlr/Engine.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace svdlr
{

/** A 4D series: size[0..2] voxels along x, y, z and `volumes` volumes; element (x, y, z, t) is
 *   data[x * strides[0] + y * strides[1] + z * strides[2] + t * strides[3]]     (strides in elements).
 * An itk::Image<T, 4> has strides {1, nx, nx*ny, nx*ny*nz}; an itk::VectorImage<T, 3> with `volumes`
 * components has strides {volumes, volumes*nx, volumes*nx*ny, 1}. */
template <typename T>
struct SeriesView
{
  T *                            data{ nullptr };
  std::array<std::size_t, 3>     size{ 0, 0, 0 };
  std::size_t                    volumes{ 0 };
  std::array<std::ptrdiff_t, 4> strides{ 0, 0, 0, 0 };

  std::size_t
  VoxelCount() const
  {
    return size[0] * size[1] * size[2];
  }

  /** A view of mutable data reads as a view of const data, so one view can be both input and output (in place). */
  template <typename U = T, typename = std::enable_if_t<!std::is_const_v<U>>>
  operator SeriesView<const U>() const
  {
    return { data, size, volumes, strides };
  }
};

/** A magnitude series' noise model (svdlr/MagnitudeNoise.h): what DenoiseLocalLowRank does before and after the
 * low-rank step. Each voxel's sigma is the σ map given (options.noiseSigma) or, without one, the σ map of a first
 * pass over the magnitude with the rank policy, which must then estimate σ (InvalidArgument otherwise). */
struct MagnitudeNoiseOptions
{
  /** Variance-stabilise the magnitude for the non-central chi model, denoise, and invert exactly (Foi 2011). */
  bool stabilise{ false };
  /** Output the signal with the noise floor removed (nu) instead of the magnitude's expectation. */
  bool noiseFloor{ false };
  /** Correct the σ map, measured on the magnitude, for the floor's smaller spread (CorrectSigmaForNoiseFloor); the
   * noise floor, if removed, is then placed with the corrected σ. Not with a known σ nor with `stabilise`
   * (SigmaFloorCorrectionProblem). */
  bool sigmaFloorCorrection{ false };
  /** Coils combined by root-sum-of-squares (1: Rician). */
  unsigned coils{ kDefaultCoils };
  /** The caller knows the series is a magnitude and asks for no model of its own (stabilise, noiseFloor and
   * sigmaFloorCorrection all off): apply Defaults.h's automatic magnitude model where the series admits it
   * (MagnitudeNoiseUsed). Off in the engine's own options; every interface turns it on for magnitude input
   * (kDefaultAutomaticMagnitudeModel). Ignored when any of the three is on. */
  bool automatic{ false };

  /** Whether a model is asked for explicitly (automatic not counted: MagnitudeNoiseUsed resolves it). */
  bool
  Active() const
  {
    return stabilise || noiseFloor || sigmaFloorCorrection;
  }
};

struct LocalDenoiseOptions
{
  /** How each patch's rank is chosen. Default: DefaultDenoisePolicy(), Marchenko-Pastur (MP-PCA) with the
   * estimator of Defaults.h. FixedRank and every noise policy of RankPolicy are accepted; EnergyFraction too,
   * though it is rarely what a denoiser wants. */
  RankPolicy policy{ DefaultDenoisePolicy() };
  /** Patch extent in voxels along x, y, z, each odd and >= 1. {0, 0, 0}: the smallest cube of odd side whose voxel
   * count is at least the number of volumes (5x5x5 for 65 volumes), as dwidenoise chooses. */
  std::array<std::size_t, 3> patchSize{ 0, 0, 0 };
  /** Cuboid (patchSize) or Sphere (patchRadius; patchSize must then be {0, 0, 0}): see SpherePatchUsed. */
  PatchShape patchShape{ kDefaultPatchShape };
  /** Sphere only, in voxels: the patch holds the voxels whose offset d from the centre has |d| <= patchRadius.
   * 0: DefaultSphereRadius's rule. Must be finite and >= 0; a cuboid takes 0 only. */
  double patchRadius{ 0.0 };
  /** Patches are centred on every `patchStride`-th voxel along each axis (1: every voxel, "dense"), and on the last
   * voxel of each axis. A stride above 1 needs an overlap aggregation, which then covers the voxels between centres,
   * and may not exceed the smallest patch extent (patches would leave gaps). With a mask, a voxel inside it that no
   * grid patch covers gets a patch of its own. kAutoPatchStride (0, the default): PatchStrideUsed's rule, which
   * grows the stride with the patch, so that the cost grows as volumes² rather than volumes³. */
  std::size_t      patchStride{ kAutoPatchStride };
  /** CentreVoxel, or the weighted mean over every patch holding the voxel (DenoiseChoices.h). With a weighting, σ
   * and rank maps are the same weighted means as the signal. */
  PatchAggregation aggregation{ kDefaultPatchAggregation };
  /** Auto (the default): ResolveShrinkage's rule. OptimalFrobenius asked for explicitly needs σ: a noise policy
   * or a σ map. */
  Shrinkage shrinkage{ kDefaultShrinkage };
  /** How each patch's σ is measured once its rank is chosen, where the policy estimates σ (DenoiseChoices.h):
   * the policy's own σ (MarchenkoPasturMean, dwidenoise's) or the residual refit. A known σ map is never refit. */
  NoiseEstimator noiseEstimator{ kDefaultNoiseEstimator };
  /** Optional, VoxelCount() bytes, x fastest: voxels where the mask is 0 are copied unchanged and get σ = 0 and
   * rank 0 in the maps; patches are centred only on voxels inside the mask (but read every voxel they cover). */
  const std::uint8_t * mask{ nullptr };
  /** Optional, VoxelCount() values, x fastest: a known noise level σ per voxel (for example from noise scans).
   * Each patch then uses σ at its centre in place of an estimate, and keeps the singular values above the
   * policy's threshold for that σ (GavishDonoho: its optimal hard threshold; MarchenkoPastur: the upper edge of
   * the noise bulk, σ(√voxels + √volumes), and Nordic the same edge, for which σ is required; FixedRank and
   * EnergyFraction choose their rank as usual and use σ only for the shrinkage and the map). Must be finite and >= 0. */
  const float * noiseSigma{ nullptr };
  /** Optional, VoxelCount() values, x fastest: a g-factor map, the noise amplification of parallel imaging, as
   * NORDIC uses one (Moeller et al. 2021). The series is divided by g voxel by voxel before the low-rank step, so
   * that its thermal noise is the same everywhere, denoised with one σ, and multiplied by g after; the σ map out is
   * σ g, in the input's units (DenoiseWithGFactor). A known σ (noiseSigma, policy.noiseSigma) is then the σ of the
   * divided series, the σ where g = 1, which EstimateNoiseFromScan measures when given the same map. Must be finite
   * and > 0 at every voxel, the mask's outside included (patches read it): GFactorMapProblem. Not with an active
   * magnitudeNoise (InvalidArgument). */
  const float * gfactor{ nullptr };
  /** Estimate the g-factor map from the series itself, then denoise as with a given map (EstimateGFactor,
   * NORDIC's estimate when it is given none: Moeller et al. 2021): a first pass of the default policy
   * (DefaultDenoisePolicy(), σ estimated per patch, with this request's patch, mask, aggregation and backend) gives
   * a σ map; smoothed over one patch extent inside the mask and divided by the thermal σ it is g. The thermal σ is
   * the known σ where g = 1 (policy.noiseSigma, or the median over the mask of the noiseSigma map) or, without one,
   * the smoothed map's kGFactorEstimateReferencePercentile-th percentile in the mask; g is clamped to
   * [kGFactorEstimateMinimum, kGFactorEstimateMaximum] (Defaults.h). Without a known σ the scale of g cancels (the
   * second pass estimates σ of the divided series), so only its shape matters. Not with `gfactor` nor an active
   * magnitudeNoise (GFactorEstimateProblem). Default: kDefaultEstimateGFactor. */
  bool estimateGFactor{ kDefaultEstimateGFactor };
  /** Magnitude input: variance stabilisation and noise-floor removal; off by default (automatic: see
   * MagnitudeNoiseUsed). */
  MagnitudeNoiseOptions magnitudeNoise{};
  /** Optional, `volumes` values: the group of each volume, 0 .. groups - 1, each group holding at least one volume
   * (svdlr/VolumeGroups.h's DemeanGroups builds them). Each voxel's mean over each group's volumes is subtracted
   * before the low-rank step, on the host for either backend, and added back after; the noise fit then counts one
   * degree of freedom fewer per group (removedVolumeDimensions). Null: no demeaning. */
  const std::uint32_t * volumeGroups{ nullptr };
  /** Dimensions of the volume axis that were projected out of the series before the low-rank step (one per group
   * demeaned; a caller that demeaned the series itself says so here): each patch's noise is fitted as that of a
   * voxels x (volumes - removedVolumeDimensions) matrix, and the smallest eigenvalues that the projection made zero
   * are left out of the fit. Without it the Marchenko-Pastur fit of a demeaned series is biased low. The front end
   * adds volumeGroups' groups to it; at least 2 dimensions must remain. */
  std::size_t removedVolumeDimensions{ 0 };

  Backend          backend{ Backend::Auto };
  int              deviceId{ 0 };
  std::size_t      maxPatchesPerBatch{ 0 }; // 0: the backend chooses (from free memory on the GPU)
  /** The most device memory the CUDA backend's buffers may take, in bytes: slabs, batches, mask and σ map, what
   * LocalDenoiseReport::peakDeviceBytes counts (the CUDA context and library handles come on top), or less when
   * less is free. kNoDeviceMemoryLimit (0): whatever is free. A limit below what one plane of the series and one
   * patch need is InvalidArgument. The CPU ignores it. */
  std::size_t deviceMemoryLimit{ kDefaultDeviceMemoryLimit };
  unsigned         threads{ 0 };            // CPU worker threads; 0: all hardware threads
  ParallelFor      parallelFor{};           // empty: the engine's own std::thread pool
  ProgressCallback progress{};              // (patches done, patches in all)
};

/** Optional per-voxel maps, each VoxelCount() values, x fastest; a null pointer skips that map. With CentreVoxel a
 * voxel's values are those of the patch centred on it; with an overlap aggregation, the mean over the patches that
 * contain it weighted as its signal is (the rank rounded to the nearest integer). Voxels outside the mask get 0. */
struct LocalDenoiseMaps
{
  float *         noiseSigma{ nullptr }; // σ estimated or given; 0 where the policy does not model noise
                                         // (FixedRank, EnergyFraction) and no σ map was given
  std::uint16_t * rank{ nullptr };       // rank kept
  float *         gfactor{ nullptr };    // the g-factor map used: the given one or the estimate; left as it is
                                         // when neither is asked for (every voxel, the mask's outside too)
};

struct LocalDenoiseReport
{
  Backend                    backend{ Backend::CPU };
  std::array<std::size_t, 3> patchSize{ 0, 0, 0 }; // the patch extent used (a sphere's: its bounding box)
  PatchShape                 patchShape{ PatchShape::Cuboid };
  double                     patchRadius{ 0.0 }; // a sphere's radius used, in voxels; 0 for a cuboid
  std::size_t                patchVoxels{ 0 };   // voxels per patch: rows of each Casorati matrix
  std::size_t                patchStride{ 0 };   // the stride used (PatchStrideUsed: kAutoPatchStride resolved)
  Shrinkage                  shrinkage{ Shrinkage::Hard }; // the shrinkage used: Auto resolved (ResolveShrinkage)
  std::size_t                patches{ 0 };         // patches computed
  MagnitudeNoiseOptions      magnitudeNoise{};     // the magnitude model used: automatic resolved (MagnitudeNoiseUsed)
  /** Wall seconds of the magnitude model's steps, 0 for a step that did not run (all 0 without a model): the first
   * pass that measures σ for the stabilisation, the forward transform, the denoising itself, and the inverse
   * transform or the floor's removal. What a user weighs `--no-magnitude-model` against. */
  struct MagnitudeSteps
  {
    double sigmaPass{ 0 };
    double stabilise{ 0 };
    double denoise{ 0 };
    double inverse{ 0 };
  } magnitudeSeconds{};
  /** The device memory the CUDA backend's buffers took (slabs, batch, mask and σ map) in the run that produced
   * the output; 0 on the CPU. The CUDA context and library handles come on top of it. */
  std::size_t peakDeviceBytes{ 0 };
  std::string                notes;                // e.g. why Auto fell back to the CPU
};

/** Denoises `input` into `output` (same size and volume count; `output` may be `input` itself, with the same
 * strides, but not overlap it otherwise) and fills the maps asked for. Throws svdlr::Error:
 *  - InvalidArgument: fewer than 2 volumes, an empty image, a patch size that is even, zero or larger than the
 *    image along an axis, a patch with fewer voxels than 2, a stride of 0, a stride above 1 with CentreVoxel or
 *    above the smallest patch extent, a negative or non-finite known σ (naming the voxel), a g-factor map that is
 *    not finite and > 0 (naming the voxel) or one with an active magnitudeNoise, a policy out of range,
 *    OptimalFrobenius without σ, or an output that overlaps the input without being it;
 *  - NonFiniteInput: NaN or Inf in the input (Error::Matrix() gives the linear voxel index, x fastest);
 *  - BackendUnavailable, DeviceFailure, OutOfMemory, Aborted: as for Reconstruct. */
LocalDenoiseReport
DenoiseLocalLowRank(const SeriesView<const float> & input, const SeriesView<float> & output,
                    const LocalDenoiseMaps & maps, const LocalDenoiseOptions & options);

/** StartCudaWarmUp for the denoiser: starts the CUDA backend's one-time set-up (the context, the denoiser's handles
 * and kernels) on a background thread by denoising a small random series of `volumes` volumes with `options`' patch,
 * policy, aggregation, shrinkage and device, and returns at once. A tool calls it once the series' header is read and
 * before its pixels are decompressed, so that the set-up (most of the difference between a cold filter and a warm
 * engine) overlaps the reading. The next DenoiseLocalLowRank waits for it. Does nothing when options.backend is CPU,
 * the build has no CUDA, SVDLR_CUDA_WARMUP=0, or a warm-up runs already; its errors are dropped. */
void
StartCudaDenoiseWarmUp(std::size_t volumes, const LocalDenoiseOptions & options);

/** Why `gfactor` (VoxelCount() values of an image of `size` voxels, x fastest) cannot be a g-factor map, naming the
 * first voxel that is not finite and > 0; empty when it can. The one rule of the engine, the filter, the tools and
 * Python. */
std::string
GFactorMapProblem(const float * gfactor, const std::array<std::size_t, 3> & size);

/** Why a g-factor map cannot be estimated with these options (`gfactorGiven`: a map is given too; `magnitudeModel`:
 * MagnitudeNoiseOptions::Active()), or "" when it can. The one rule of the engine, the filter, the tools and
 * Python. */
std::string
GFactorEstimateProblem(bool gfactorGiven, bool magnitudeModel);

/** GFactorMapProblem's test alone: the first of `voxels` values that is not finite and > 0, or `voxels` when there
 * is none (for a caller that names the voxel in its own axis order, as Python does). */
std::size_t
FirstInvalidGFactorVoxel(const float * gfactor, std::size_t voxels);

/** The users' rule for a known σ given with a g-factor map, which the tools and Python share (the engine itself takes
 * any known σ with a map as the σ where g = 1): a single σ is the thermal σ where g = 1; a σ map is refused, since a
 * map in the input's units already holds g, and dividing it again would count g twice. Returns why a known σ map
 * (`knownSigmaMap`) cannot be given with a g-factor map, or "" when it can. */
std::string
GFactorKnownSigmaProblem(bool knownSigmaMap);

/** Whether the patches have a noise level σ: the policy estimates one (GavishDonoho, MarchenkoPastur) or one is
 * known (`knownSigma`: a σ map, or a σ the caller will pass as one). */
bool
PatchesHaveSigma(const RankPolicy & policy, bool knownSigma);

/** The shrinkage `requested` stands for: Auto is OptimalFrobenius where PatchesHaveSigma, Hard otherwise; Hard and
 * OptimalFrobenius are themselves (an OptimalFrobenius without σ is then DenoiseLocalLowRank's error). The one rule
 * of the engine, the filter, the tools and Python. */
Shrinkage
ResolveShrinkage(Shrinkage requested, const RankPolicy & policy, bool knownSigma);

/** The patch extent that options.patchSize = {0, 0, 0} stands for, for a series of `volumes` volumes: the smallest
 * cube of odd side s with s³ >= volumes. For an image shorter than s along an axis, DenoiseLocalLowRank shrinks that
 * axis to the largest odd extent the image holds, then grows the other axes by 2 at a time, the shortest first,
 * until the patch again holds at least `volumes` voxels or fills the image (report.patchSize says what was used). */
std::array<std::size_t, 3>
DefaultPatchSize(std::size_t volumes);

/** The patch extent DenoiseLocalLowRank uses on an image of `size` voxels and `volumes` volumes: `requested` as
 * given (it checks that), or for {0, 0, 0} DefaultPatchSize fitted to the image as described above. One rule, which
 * the tools' summaries and Python's BIDS sidecars report. */
std::array<std::size_t, 3>
PatchSizeUsed(const std::array<std::size_t, 3> & size, std::size_t volumes, const std::array<std::size_t, 3> & requested);

/** The magnitude model DenoiseLocalLowRank applies with these options to a series that holds a value below 0
 * (`negativeValues`) or none: options.magnitudeNoise as given where it is not automatic or asks for a model itself;
 * for an automatic one, Defaults.h's kAutomaticMagnitudeStabilise and kAutomaticMagnitudeNoiseFloor where the
 * series can be a magnitude (no value below 0) and σ is estimated per patch (no known σ, scalar or map, no
 * g-factor map given or estimated, a rank policy that estimates σ), and none otherwise: a known σ keeps what it
 * did, a fixed rank has no σ to stabilise with, and a series with negative values (a real part, a demeaned or
 * filtered series) is no magnitude. The result is never automatic. The one rule of the engine, the filter, the
 * tools and Python, whose summaries and sidecars report it (MagnitudeNoiseName). */
MagnitudeNoiseOptions
MagnitudeNoiseUsed(const LocalDenoiseOptions & options, bool negativeValues);

/** Whether the series holds a value below 0 (MagnitudeNoiseUsed's `negativeValues`), over every voxel, on up to
 * `threads` threads (0: this thread's share of the cores). */
bool
HasNegativeValue(const SeriesView<const float> & input, unsigned threads = 0);

/** How the tools, Python and the sidecars name a magnitude model: "none", or its parts joined by "+" in the order
 * "vst", "noise-floor", "sigma-floor-correction" ("vst+noise-floor"). */
std::string
MagnitudeNoiseName(const MagnitudeNoiseOptions & model);

/** The patch stride DenoiseLocalLowRank uses with a patch of extent `patchUsed` (PatchSizeUsed, or a sphere's box):
 * `requested` as given (DenoiseLocalLowRank checks it), or for kAutoPatchStride the smallest extent divided by
 * kPatchExtentPerAutoStride (Defaults.h), at least 1: 2 for the 5x5x5 patch of 30-124 volumes, 3 for 7x7x7 (125-342),
 * 4 for 9x9x9 (343-728), 5 for 11x11x11 (729-1,330). Every voxel then lies in about the same number of patches
 * whatever the volume count. CentreVoxel aggregation and spheres take 1: the first needs a patch on every voxel, and
 * the second's coverage is not that of its box. One rule, which the tools' summaries and sidecars report. */
std::size_t
PatchStrideUsed(const std::array<std::size_t, 3> & patchUsed, PatchShape shape, PatchAggregation aggregation,
                std::size_t requested);

/** The radius that LocalDenoiseOptions::patchRadius = 0 stands for with PatchShape::Sphere, for a series of
 * `volumes` volumes: the smallest √k (k = 1, 2, 3, ...) whose sphere holds at least 20/17 (1 / 0.85) voxels per
 * volume (kSphereVoxelsPerVolumeNumerator / Denominator, dwidenoise2's ratio): √6, 81 voxels, for 65 volumes. */
double
DefaultSphereRadius(std::size_t volumes);

/** A spherical patch as DenoiseLocalLowRank uses it on an image of `size` voxels. Its box is the cuboid patch of
 * extent 2 floor(radius) + 1 along each axis (cut to the largest odd extent the image holds along a shorter axis),
 * shifted inward at the borders as a cuboid is (PatchStart). Its voxels are the `voxels` voxels of that box nearest
 * to the centre voxel, ties broken by the offset's (z, y, x) order, where `voxels` counts the offsets d of the
 * unshifted box with |d| <= radius. Away from the borders that is the sphere itself; near a border the patch keeps
 * its voxel count and takes the nearest voxels inside the image instead of those beyond it (dwidenoise2 grows its
 * sphere there alike). The centre voxel is always the patch's first row. */
struct SpherePatch
{
  std::array<std::size_t, 3> extent{ 0, 0, 0 };
  double                     radius{ 0.0 };
  std::size_t                voxels{ 0 };
};

/** The sphere DenoiseLocalLowRank uses for `requestedRadius` (0: the default rule, whose radius then grows past
 * DefaultSphereRadius while the image's short axes cut the sphere below its voxels per volume, up to the whole box).
 * One rule, which the tools' summaries and Python's BIDS sidecars report. The caller checks that voxels >= 2. */
SpherePatch
SpherePatchUsed(const std::array<std::size_t, 3> & size, std::size_t volumes, double requestedRadius);

} // namespace svdlr

#endif
