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
#ifndef svdlr_Defaults_h
#define svdlr_Defaults_h

// The defaults of every interface, written once: the engine's RankPolicy, the ITK filters, the command-line tools
// (their options, --help and the batch path) and the Python module read them from here, so that a user gets the
// same result whichever interface runs without the option. ITK-free, like Engine.h.

#include "svdlr/DenoiseChoices.h"

#include <cstddef>

namespace svdlr
{

/** The rank kept per slice when no rank policy is given: 20 singular triplets hold most of a brain MRI slice's
 * structure (Colin27: 99.6 % of each slice's energy at 1 mm) while dropping its noise. */
constexpr std::size_t kDefaultRank = 20;

/** The local denoiser's defaults: the best configuration the measurements defend (docs/denoising.md,
 * "Configurations against dwidenoise's default"). Over six phantoms (σ 0.02 to 0.10, 30 to 150 volumes, masked and
 * whole, σ varying in space) overlap averaging with optimal shrinkage beat dwidenoise 3.0's default (centre voxel,
 * hard threshold) by +0.86 to +1.88 dB of PSNR, and cost about 20 % more CPU time than the centre voxel.
 *
 * The rank policy is Marchenko-Pastur with this estimator (RankPolicy.h's DefaultDenoisePolicy() builds it, and
 * its name comes from the policy table): Cordero-Grande 2019, dwidenoise 3.0's default (Exp2). Under overlap and
 * optimal shrinkage the two estimators differ by at most 0.006 dB; Exp2 gives each patch the σ dwidenoise gives. */
constexpr MarchenkoPasturEstimator kDefaultMarchenkoPasturEstimator = MarchenkoPasturEstimator::CorderoGrande2019;
/** How a patch's σ is measured once its rank is chosen (DenoiseChoices.h's NoiseEstimator): the policy's own, the
 * Marchenko-Pastur mean, as dwidenoise. The residual refit removes its -2 % bias on Gaussian noise but not the larger
 * low bias of magnitude (Rician) data, and its larger σ shrinks the default's output 0.02-0.07 dB more
 * (docs/denoising-options.md, "The noise estimator"), so it is an option. */
constexpr NoiseEstimator kDefaultNoiseEstimator = NoiseEstimator::MarchenkoPasturMean;
/** Each voxel takes the mean over every patch that holds it. */
constexpr PatchAggregation kDefaultPatchAggregation = PatchAggregation::OverlapAverage;
/** Patches are cuboids (dwidenoise's); PatchShape::Sphere measured no better on the phantoms of docs/denoising.md
 * ("Patch shape and weighted aggregation"). */
constexpr PatchShape kDefaultPatchShape = PatchShape::Cuboid;
/** A sphere of default radius holds at least this many voxels per volume (MRtrix3 dwidenoise2's default
 * -radius_ratio, 1 / 0.85 ~ 1.18), as numerator / denominator so that the rule is exact in integers. */
constexpr std::size_t kSphereVoxelsPerVolumeNumerator = 20;
constexpr std::size_t kSphereVoxelsPerVolumeDenominator = 17;
/** LocalDenoiseOptions::patchStride's "auto" (every interface's default): PatchStrideUsed's rule. 1 is dense, every
 * voxel a patch centre, dwidenoise's. */
constexpr std::size_t kAutoPatchStride = 0;
/** The auto stride is the patch's smallest extent over this, at least 1, on the body-centred lattice of
 * PatchCentres: 2 for 5x5x5 patches (a quarter of the dense run's patches), 3 for 7x7x7 (2/27), 4 for 9x9x9 (1/32).
 * Measured against the dense run on 48x48x24 phantoms (sigma_sweep.py, CPU): -0.002 to -0.010 dB of PSNR at 30
 * and 65 volumes, -0.015 dB at 150 and -0.014 dB at 200 volumes, the sigma map within 0.2 % of the dense one's
 * error. A third of the extent (stride 3 on 5x5x5) lost up to 0.13 dB, over the 0.1 dB a default may give up. */
constexpr std::size_t kPatchExtentPerAutoStride = 2;
/** PatchAggregation::OverlapGaussianWeighted's width: full width at half maximum, in voxels (dwidenoise2's: twice
 * the voxel size). A contribution from a voxel one voxel from its patch's centre counts half. */
constexpr double kGaussianAggregationFwhm = 2.0;
/** Optimal Frobenius shrinkage wherever the patches have σ (a noise policy, a known σ map or value), hard
 * thresholding where they have none (FixedRank, EnergyFraction without σ): see ResolveShrinkage (LocalDenoise.h).
 * Only an explicit OptimalFrobenius without σ is an error. */
constexpr Shrinkage kDefaultShrinkage = Shrinkage::Auto;

/** A magnitude series (every interface's input unless it comes with a phase, an imaginary part or as complex
 * values, or holds a negative value) is variance-stabilised for the Rician (non-central chi) noise and its noise floor removed, where σ is
 * estimated per patch (no σ or σ map given, no g-factor map, a rank policy that estimates σ): the automatic
 * magnitude model (MagnitudeNoiseOptions::automatic, MagnitudeNoiseUsed). Measured against the plain default on the
 * phantoms of docs/denoising.md ("Magnitude data"): a higher PSNR at every σ and volume count, +2.9 dB at b=0
 * SNR 10, and a σ map within dwidenoise's error on every phantom, where the plain default's was up to twice it.
 * The engine's own LocalDenoiseOptions keep it off: the engine cannot know that its input is a magnitude. */
constexpr bool kDefaultAutomaticMagnitudeModel = true;
/** What the automatic model turns on: variance stabilisation (Foi 2011), then the floor removed on inversion. */
constexpr bool kAutomaticMagnitudeStabilise = true;
constexpr bool kAutomaticMagnitudeNoiseFloor = true;
/** The stabilisation's first pass only measures σ per voxel, so it centres its patches on the body-centred lattice
 * of stride = the patch's smallest extent over this (5 for 5x5x5 patches: 2/125 of the dense run's patches),
 * overlap-averaged. Measured on the 96x96x60x65 phantom, CPU, 2 threads: the whole --vst --noise-floor run took
 * 1.15x the plain run, whole or masked (1.99x with the first pass at the output's stride), its PSNR within 0.04 dB
 * and its σ map within 0.2 % of the error. */
constexpr std::size_t kPatchExtentPerSigmaPassStride = 1;

/** The g-factor estimate (LocalDenoiseOptions::estimateGFactor, EstimateGFactor) is off unless asked for:
 * a scanner's map is better when there is one, and the local σ of the default policy follows g already. */
constexpr bool kDefaultEstimateGFactor = false;
/** Where no thermal σ is given, the estimated g is the smoothed σ map over this percentile of it in the mask, so
 * that g >= 1 in most voxels (the least amplified voxels of an accelerated scan have g near 1). */
constexpr double kGFactorEstimateReferencePercentile = 5.0;
/** The estimated g is clamped to this range: a first pass that counts signal as noise (an edge, a vessel) or finds
 * almost none must not scale a voxel by more. */
constexpr float kGFactorEstimateMinimum = 0.5f;
constexpr float kGFactorEstimateMaximum = 10.0f;

/** No demeaning unless asked for: demeaning lowered the PSNR on every benchmark phantom measured, per shell most
 * (docs/denoising-options.md, "Demeaning and multi-echo series"), since each group's mean comes back with its noise. */
constexpr Demean kDefaultDemean = Demean::None;
/** b-values closer than this (s/mm²) to their neighbour in sorted order are one shell: MRtrix3's BValueEpsilon. */
constexpr double kShellBValueTolerance = 80.0;

/** Coils combined by root-sum-of-squares in a magnitude series or noise scan, when none is given: 1, the Rician
 * case (a single coil, or coils combined with their phases, e.g. by adaptive combination or SENSE). */
constexpr unsigned kDefaultCoils = 1;

/** The most device memory the local denoiser's buffers take unless told otherwise (LocalDenoiseOptions::
 * deviceMemoryLimit), or less when less is free: 8 GiB, so that a run leaves a shared GPU to others and runs as it
 * does on a 12-16 GB card. With the auto stride the batches that fit in it keep the GPU busy (docs/denoising.md,
 * "Long series"). kNoDeviceMemoryLimit (0; the tools' and Python's "free") takes whatever is free instead. */
constexpr std::size_t kDefaultDeviceMemoryLimit = std::size_t{ 8 } << 30;
constexpr std::size_t kNoDeviceMemoryLimit = 0;
/** How the tools and Python spell kNoDeviceMemoryLimit. */
constexpr const char * kNoDeviceMemoryLimitName = "free";

/** The CUDA device used when none is named. */
constexpr int kDefaultDeviceId = 0;

/** The output's pixel type, for every interface and every output kind (single file, DICOM, batch, Python):
 * float32. A reconstruction or a denoised image is not integer-valued: rounding it back to an integer input type
 * (uint8 for Colin27) loses the detail the method recovers and clamps its small negative values. float32 is also
 * what the engine computes. "same" (the input's type, rounded and clamped) is the one alternative. */
constexpr const char * kDefaultOutputTypeName = "float32";
constexpr const char * kSameAsInputOutputTypeName = "same";

/** The command-line tools' progress lines off a terminal: at most one every this many seconds. */
constexpr double kProgressLineIntervalSeconds = 5.0;

} // namespace svdlr

#endif
