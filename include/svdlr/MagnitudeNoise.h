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
#ifndef svdlr_MagnitudeNoise_h
#define svdlr_MagnitudeNoise_h

// Magnitude series without their phase: the noise model, a variance-stabilising transform, and the noise floor.
//
// A magnitude M = |sum of N coils' complex signals| combined by root-sum-of-squares follows the non-central chi
// distribution with 2N degrees of freedom (Rician for N = 1): M = sqrt((nu + x_1)^2 + x_2^2 + ... + x_2N^2), the x
// independent N(0, sigma^2), nu the noise-free signal. Its mean is above nu (the noise floor: sigma sqrt(pi/2) for
// N = 1 where nu = 0) and its spread shrinks there, so the low-rank step, which expects additive noise of one sigma,
// sees neither. Following Foi (2011), "Noise estimation and removal in MR imaging: the variance-stabilization
// approach", the magnitude is mapped through
//   f(m) = sigma g(m / sigma),   g' = 1 / sd(mean^-1(m)),
// refined by Foi's iteration (kStabiliserIterations), whose output has about unit variance (in sigma) at every nu, the series is denoised, and the result D is taken as
// an estimate of E[g(M)] and inverted exactly: nu = E[g(M) | nu]^-1(D) (the exact unbiased inverse of Makitalo and
// Foi), giving E[M | nu] (the magnitude the series would have without noise variance) or nu itself (the noise floor
// removed). The expected-magnitude inversion nu = E[M | nu]^-1(m) (Koay and Basser 2006 solve the same moment
// equation) removes the floor from a plain magnitude denoising. All are pointwise, with each voxel's sigma, and run
// with the same code on the host (the CPU) or on the device as the slabs go in and out (the GPU).

#include "svdlr/LocalDenoise.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace svdlr
{

struct NoncentralChiTables; // svdlrMagnitudeTransform.h

/** The most coils the model takes (its tables grow with sqrt(coils)); more is InvalidArgument. */
constexpr unsigned kMaximumCoils = 1024;

/** How often Foi's iteration refines the first-order stabiliser (g' = 1 / sd along the mean), each pass rescaling g
 * by the spread it leaves (g <- h(g), h' = 1 / sd[g(M)] along E[g(M)]). Var[g(M) | nu] over nu in [0, 40], measured:
 * first order 0.785 to 1.129 for one coil, 0.878 to 1.056 for four; after 5 passes 0.953 to 1.083 (one coil), 0.970
 * to 1.052 (two), 0.987 to 1.021 (eight), and within 0.3 % of 1 for nu >= 6. Each pass costs about 0.15 s, once per
 * coil count. No pointwise transform makes it exactly 1: the distribution's shape changes with nu. */
constexpr unsigned kStabiliserIterations = 5;

/** The non-central chi model of `coils` coils at sigma = 1, tabulated once per coil count (ForCoils): signal nu on
 * [0, 40] by steps of 0.025 to 8 and 0.1 beyond, expectations by a trapezoidal rule over the Gaussian and the chi
 * (2N - 1 degrees of freedom) factors of M, g on a magnitude grid of step 0.005. Beyond the tables the asymptotic
 * forms hold (M's mean sqrt(nu^2 + 2N - 1), a constant slope of g); g is linear through 0 below the grid. */
class NoncentralChiModel
{
public:
  /** `iterations`: Foi's refinements of the first-order stabiliser (ForCoils uses kStabiliserIterations). */
  NoncentralChiModel(unsigned coils, unsigned iterations);
  /** The model of `coils` coils, built on first use and kept (thread-safe). InvalidArgument for 0 coils or more
   * than kMaximumCoils. */
  static const NoncentralChiModel &
  ForCoils(unsigned coils);

  unsigned
  Coils() const
  {
    return m_Coils;
  }
  /** E[M | nu]: the magnitude's mean, nu plus the floor. */
  double
  MeanMagnitude(double signal) const;
  /** nu with E[M | nu] = mean, 0 where mean is at or below the floor E[M | 0]. */
  double
  SignalFromMeanMagnitude(double mean) const;
  /** g, increasing; g(0) = 0; g(m) - m tends to a constant for large m. */
  double
  Stabilise(double magnitude) const;
  /** g^-1 (the algebraic inverse: InverseStabilise(Stabilise(m)) = m). */
  double
  InverseStabilise(double value) const;
  /** E[g(M) | nu]. */
  double
  ExpectedStabilised(double signal) const;
  /** nu with E[g(M) | nu] = value, 0 at or below E[g(M) | 0] (the exact unbiased inverse). */
  double
  SignalFromExpectedStabilised(double value) const;
  /** Var[g(M) | nu] (tabulated; about 1 but for the lowest nu). */
  double
  StabilisedVariance(double signal) const;
  /** Var[M | nu] = nu^2 + 2N - E[M | nu]^2 (tabulated): the magnitude's own spread, below 1 near the floor (2 - pi/2
   * = 0.43 at nu = 0 for one coil) and 1 in the limit of large nu, as beyond the table. */
  double
  MagnitudeVariance(double signal) const;
  /** MagnitudeVariance(SignalFromMeanMagnitude(mean)), the spread at the signal whose mean magnitude is `mean` (the
   * variance at nu = 0 at or below the floor), from a uniform grid of step 0.005 without a search. */
  double
  MagnitudeVarianceAtMean(double mean) const;

  /** Views of the tables, for the transforms of svdlrMagnitudeTransform.h (which these methods call), on the host
   * or copied to a device; valid while the model lives (ForCoils' models live as long as the process). */
  NoncentralChiTables
  Tables() const;

private:
  unsigned            m_Coils;
  std::vector<double> m_Signal;             // nu_i
  std::vector<double> m_Mean;               // E[M | nu_i]
  std::vector<double> m_MagnitudeVariance;  // Var[M | nu_i]
  std::vector<double> m_VarianceAtMean;     // Var[M | nu] at E[M | nu] = j kStabiliserMagnitudeStep
  std::vector<double> m_Stabilised;         // g(j kStabiliserMagnitudeStep), j = 0, 1, ...; g(0) = 0
  double              m_EndSlope{ 1.0 };    // g' beyond the grid
  std::vector<double> m_ExpectedStabilised; // E[g(M) | nu_i]
  std::vector<double> m_Variance;           // Var[g(M) | nu_i]
  std::vector<std::size_t> m_ExpectedStart; // per bucket of E[g(M)]: the first i with E[g(M) | nu_i] above its edge
  double                   m_BucketsPerUnit{ 0.0 };
};

/** What the denoised stabilised series is turned back into. */
enum class MagnitudeEstimate
{
  ExpectedMagnitude, // E[M | nu]: a magnitude, floor kept
  Signal             // nu: the noise floor removed
};

/** out = sigma(v) g(magnitude / sigma(v)) per voxel v; where sigma(v) is 0 the value is copied. `sigma`: VoxelCount()
 * values, finite and >= 0, x fastest. `out` may be `magnitude` itself (in place). InvalidArgument on mismatched
 * sizes, a null or negative sigma, coils 0. */
void
StabiliseMagnitude(const SeriesView<const float> & magnitude, const float * sigma, unsigned coils,
                   const SeriesView<float> & out, unsigned threads = 0);

/** The exact unbiased inverse of StabiliseMagnitude for a denoised series (an estimate of E[g(M)]): out =
 * sigma E[M | nu] or sigma nu, nu = E[g(M) | .]^-1(denoised / sigma). Same rules as StabiliseMagnitude. */
void
UnstabiliseMagnitude(const SeriesView<const float> & denoised, const float * sigma, unsigned coils,
                     MagnitudeEstimate estimate, const SeriesView<float> & out, unsigned threads = 0);

/** The noise floor removed from a magnitude taken as an estimate of E[M] (a denoised magnitude): out = sigma nu,
 * nu = E[M | .]^-1(magnitude / sigma), 0 at or below the floor. Same rules as StabiliseMagnitude. */
void
CorrectNoiseFloor(const SeriesView<const float> & magnitude, const float * sigma, unsigned coils,
                  const SeriesView<float> & out, unsigned threads = 0);

/** How often CorrectSigmaForNoiseFloor re-estimates the floor's variance ratio with the σ it has just corrected (the
 * ratio depends on the SNR, which depends on σ). The iteration rises from the measured map and contracts by about
 * 10x a pass: on the σ 0.05 masked Rician phantom of docs/denoising.md the 1st pass moves σ by 2.7 % (median over
 * the mask; 15 % at most), the 4th by 0.003 % (0.05 % at most). */
constexpr unsigned kSigmaFloorPasses = 4;

/** The σ map of a magnitude series corrected for its noise floor (docs/denoising-options.md, "The noise estimator"). A
 * patch's σ measured on a magnitude (MP-PCA, the residual refit) is the root of the mean variance of its entries,
 * and near the floor the magnitude varies less than σ: Var[M | nu] = rho(nu) sigma^2, rho = MagnitudeVariance
 * (0.43 at nu = 0 for one coil). With the denoised series D as the estimate of E[M | nu], each voxel's rho is
 * averaged over its volumes (nu = E[M | .]^-1(D / sigma)) and then over the patch around it (the same box as the
 * denoiser's patch of extent `patchExtent`, shifted inward at the borders), and corrected = measured / sqrt(mean
 * rho); kSigmaFloorPasses passes, each with the σ of the one before. The patch's voxels outside the mask count too,
 * as the patch read them: D there is the copied input, and their σ the mean σ of the voxels inside in their own
 * window. `measured` and `corrected`: VoxelCount() values, x fastest; `corrected` may be `measured` (in place).
 * Voxels outside `mask` (if given) or with σ 0 keep their measured value. Only right for a magnitude: with Gaussian noise (a
 * complex series' real part) it would inflate σ. InvalidArgument on a null map, a negative or non-finite σ, an
 * even or out-of-range extent, coils 0. */
void
CorrectSigmaForNoiseFloor(const SeriesView<const float> & denoised, const float * measured, const std::uint8_t * mask,
                          const std::array<std::size_t, 3> & patchExtent, unsigned coils, float * corrected,
                          unsigned threads = 0);

/** Why `model` cannot run with a σ that is `knownSigma` (a σ map given, or noise volumes or a noise scan turned into
 * one): empty when it can. The σ floor correction needs a σ measured on the magnitude, which a known σ is not, and
 * corrects the magnitude's map, which the variance-stabilised series' is not. The one rule of the engine, the tools
 * and Python. */
std::string
SigmaFloorCorrectionProblem(const MagnitudeNoiseOptions & model, bool knownSigma);

} // namespace svdlr

#endif
