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
#ifndef svdlr_ComplexSeries_h
#define svdlr_ComplexSeries_h

// Complex-valued series for the local denoiser, without ITK or CUDA types:
//  - phase demodulation (per volume, a smooth phase estimated from the complex image and removed, so that the
//    signal lies in the real channel and its noise is Gaussian, without the Rician floor of the magnitude), and
//  - the noise level from noise-only volumes (noRF scans, as NORDIC acquires them).
// The demodulated real part goes through DenoiseLocalLowRank unchanged, on either backend.

#include "svdlr/LocalDenoise.h"

#include <array>
#include <cstddef>

namespace svdlr
{

/** How each volume's smooth phase is estimated: phi(v) = arg(sum over u != v of G(u - v) z(u)), the argument of the
 * complex image low-passed by a separable Gaussian G truncated at 3 standard deviations, leaving the voxel itself
 * out (so that its phase does not depend on its own noise: the demodulated real part then keeps unbiased Gaussian
 * noise even at SNR 1). Where the kernel leaves the image it is cut, not renormalised: the argument does not depend
 * on the kernel's sum. Each voxel counts by its own magnitude, so bright tissue sets the phase and background noise
 * (random phase) averages out. */
struct PhaseDemodulationOptions
{
  /** Standard deviation of G in voxels along x, y, z; 0 along an axis: no smoothing along it. The default smooths
   * in plane only, as slices of 2D multi-slice acquisitions can carry unrelated phases. */
  std::array<double, 3> filterSigma{ 2.0, 2.0, 0.0 };
  unsigned              threads{ 0 };  // 0: all hardware threads
  ParallelFor           parallelFor{}; // empty: the engine's own std::thread pool
};

/** Per volume, estimates the smooth phase of z = real + i imag and writes
 *   phase            phi, in radians, in (-pi, pi] (0 where the low-passed image is exactly 0),
 *   demodulatedReal  Re(z e^{-i phi}): the signal, with Gaussian noise of the channels' sigma,
 *   demodulatedImag  Im(z e^{-i phi}): what the smooth phase leaves (noise, and rapid phase), optional.
 * All views must have the size and volume count of `real`; an output whose data is null is skipped (only
 * demodulatedReal is required; leaving the phase out saves an arctangent a voxel). Outputs must not overlap the inputs. Throws svdlr::Error: InvalidArgument (sizes,
 * a negative or non-finite filter width), NonFiniteInput (NaN or Inf in the input, naming the voxel). */
void
DemodulatePhase(const SeriesView<const float> & real, const SeriesView<const float> & imag,
                const SeriesView<float> & phase, const SeriesView<float> & demodulatedReal,
                const SeriesView<float> & demodulatedImag, const PhaseDemodulationOptions & options);

/** Puts a phase back: real + i imag = value e^{i phi}, voxel by voxel (value: a denoised demodulated real part).
 * `real` and `imag` may not overlap the inputs. Throws InvalidArgument on mismatched sizes. */
void
RemodulatePhase(const SeriesView<const float> & value, const SeriesView<const float> & phase,
                const SeriesView<float> & real, const SeriesView<float> & imag, unsigned threads = 0);

/** How a noise scan is read: complex samples (real and imaginary given; sigma per channel), or the magnitude of
 * the root-sum-of-squares of `coils` complex channels (Rayleigh for 1 coil, chi with 2 coils degrees of freedom). */
struct NoiseScanOptions
{
  /** Voxels pooled around each voxel (a cube of this odd side, cut at the borders) for its sigma. */
  std::size_t window{ 5 };
  /** Magnitude data only: the coils combined by root-sum-of-squares (1: Rayleigh). */
  unsigned coils{ 1 };
  /** Optional, VoxelCount() values: a g-factor map (GFactorMapProblem's rule). Each sample is divided by g at its
   * voxel before it is pooled, as NORDIC divides its noise volumes by g, so that sigma is the thermal sigma where
   * g = 1: the known sigma of LocalDenoiseOptions with the same gfactor. */
  const float * gfactor{ nullptr };
};

/** The fewest noise samples a local window may pool: below it (a short scan in a small image), one sigma for the
 * whole image is used instead (NoiseScanEstimate::uniform). 100 samples give sigma within about 7 %. */
constexpr std::size_t kMinimumNoiseSamplesPerWindow = 100;

struct NoiseScanEstimate
{
  double      sigma{ 0.0 };          // over the whole image
  std::size_t samplesPerWindow{ 0 }; // at an interior voxel
  bool        uniform{ false };      // true: every voxel of the map got `sigma`
};

/** sigma from noise-only volumes, whose mean is 0: E|z|^2 = 2 sigma^2 for complex samples (imag given), and
 * E[M^2] = 2 coils sigma^2 for a root-sum-of-squares magnitude M (imag.data null), so
 *   sigma^2 = (sum of squares) / (2 coils samples)
 * pooled over each voxel's window (or the whole image, see kMinimumNoiseSamplesPerWindow). `sigmaMap` (VoxelCount()
 * values, x fastest) gets sigma per voxel; it may be null. Throws InvalidArgument (no volume, an even or zero window,
 * coils 0, mismatched sizes) and NonFiniteInput. */
NoiseScanEstimate
EstimateNoiseFromScan(const SeriesView<const float> & first, const SeriesView<const float> & imag, float * sigmaMap,
                      const NoiseScanOptions & options);

} // namespace svdlr

#endif
