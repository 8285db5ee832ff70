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
#ifndef svdlr_ChooseRank_h
#define svdlr_ChooseRank_h

// The one rule that turns a rank policy and a matrix's spectrum into its rank and noise σ. The slice engine (both
// backends, svdlrRankSelection.cxx), the CPU denoiser (svdlrPatchLowRank.cxx) and the CUDA denoiser's kernel all
// call ChooseRank, so that a policy decides alike everywhere. Host and device code (svdlrHostDevice.h): no
// exceptions, no std:: containers. A new policy adds its case here, and its names and labels in svdlr/RankPolicy.h.

#include "shared/svdlrHostDevice.h"
#include "noise/svdlrNoiseThreshold.h"

#include "svdlr/RankPolicy.h"

#include <cfloat>
#include <cmath>
#include <cstddef>

namespace svdlr
{
namespace detail
{

/** A spectrum held as singular values in descending order (the slice engine's): [i] is the i-th smallest Gram
 * eigenvalue, s², as the noise thresholds read it; Singular(i) the i-th largest singular value. */
struct SingularValuesDescending
{
  const double * values;
  int            count;

  SVDLR_HOST_DEVICE double
  operator[](int ascending) const
  {
    const double value = values[count - 1 - ascending];
    return value * value;
  }
  SVDLR_HOST_DEVICE double
  Singular(int descending) const
  {
    return values[descending];
  }
};

/** A spectrum held as Gram eigenvalues in ascending order (the denoisers'): Singular(i) is sqrt(max(λ, 0)), since
 * round-off can leave those of a rank-deficient matrix slightly negative. */
struct GramEigenvaluesAscending
{
  const double * values;
  int            count;

  SVDLR_HOST_DEVICE double
  operator[](int ascending) const
  {
    return values[ascending];
  }
  SVDLR_HOST_DEVICE double
  Singular(int descending) const
  {
    const double value = values[count - 1 - descending];
    return sqrt(value > 0.0 ? value : 0.0);
  }
};

/** True when ChooseRank will estimate σ from the median singular value, so that the caller computes the
 * Marchenko-Pastur median of the shape once for all its matrices: Gavish-Donoho, σ not in the policy and not
 * given per matrix. */
SVDLR_HOST_DEVICE inline bool
NeedsMarchenkoPasturMedian(const RankPolicy & policy, bool sigmaGivenPerMatrix)
{
  return policy.kind == RankPolicy::Kind::GavishDonoho && !(policy.noiseSigma > 0.0) && !sigmaGivenPerMatrix;
}

/** True when the policy's rank follows from the noise, so that σ is one of its results; false for FixedRank and
 * EnergyFraction, whose σ the slice engine reports as NaN and with which the denoiser's optimal shrinkage needs a
 * known σ map. */
SVDLR_HOST_DEVICE inline bool
ModelsNoise(const RankPolicy & policy)
{
  return policy.kind == RankPolicy::Kind::GavishDonoho || policy.kind == RankPolicy::Kind::MarchenkoPastur ||
         policy.kind == RankPolicy::Kind::Nordic;
}

/** The fewest leading singular values whose squares sum to at least `fraction` of the total; 0 for a zero matrix.
 * The target has a relative slack of a few ulps, so that fraction 1 selects the numerical rank instead of every
 * value when the tail is round-off. */
template <typename TSpectrum>
SVDLR_HOST_DEVICE int
EnergyRank(double fraction, const TSpectrum & spectrum)
{
  double total = 0.0;
  for (int i = 0; i < spectrum.count; ++i)
  {
    const double s = spectrum.Singular(i);
    total += s * s;
  }
  if (total <= 0.0)
  {
    return 0;
  }
  const double target = fraction * total * (1.0 - 8.0 * DBL_EPSILON);
  double       kept = 0.0;
  for (int k = 0; k < spectrum.count; ++k)
  {
    const double s = spectrum.Singular(k);
    kept += s * s;
    if (kept >= target)
    {
      return k + 1;
    }
  }
  return spectrum.count;
}

/** The rank and σ that `policy` chooses for one rows x cols matrix from its `spectrum` (all min(rows, cols)
 * values; FixedRank reads only spectrum.count, so the subspace solver's leading values do for it).
 *  - givenSigma >= 0: σ is known for this matrix (the denoisers' noise map), and the noise policies keep the values
 *    above their threshold for it (Gavish-Donoho's, the upper edge of the Marchenko-Pastur bulk, NORDIC's);
 *    < 0: none.
 *  - marchenkoPasturMedian: MarchenkoPasturMedian(β) of this shape where NeedsMarchenkoPasturMedian, else unused.
 * σ is the one found or given; for a policy that does not model noise, the one given, else 0. */
template <typename TSpectrum>
SVDLR_HOST_DEVICE NoiseRank
ChooseRank(const RankPolicy & policy, const TSpectrum & spectrum, int rows, int cols, double givenSigma,
           double marchenkoPasturMedian)
{
  const bool given = givenSigma >= 0.0;
  const int  count = spectrum.count;
  switch (policy.kind)
  {
    case RankPolicy::Kind::FixedRank:
      return { policy.rank < static_cast<std::size_t>(count) ? static_cast<int>(policy.rank) : count,
               given ? givenSigma : 0.0 };
    case RankPolicy::Kind::EnergyFraction:
      return { EnergyRank(policy.energyFraction, spectrum), given ? givenSigma : 0.0 };
    case RankPolicy::Kind::GavishDonoho:
      return given ? RankAboveThreshold(spectrum, count, GavishDonohoThreshold(givenSigma, rows, cols), givenSigma)
                   : GavishDonohoRank(spectrum, count, rows, cols, policy.noiseSigma, marchenkoPasturMedian);
    case RankPolicy::Kind::MarchenkoPastur:
      return given
               ? RankAboveThreshold(spectrum, count, MarchenkoPasturUpperEdge(givenSigma, rows, cols), givenSigma)
               : MarchenkoPasturRank(spectrum, count, rows, cols, policy.estimator);
    case RankPolicy::Kind::Nordic:
    {
      // NORDIC's threshold, the expected largest singular value of a pure-noise matrix of this shape, taken as its
      // analytic bound σ(√m + √n) instead of NORDIC's random draws, so that every run and backend agrees. σ is
      // the one given for this matrix, else the policy's; callers refuse the policy with neither (NeedsGivenSigma).
      const double sigma = given ? givenSigma : policy.noiseSigma;
      return RankAboveThreshold(spectrum, count, NordicThreshold(sigma, rows, cols), sigma);
    }
  }
  return { 0, 0.0 };
}

/** The shape whose noise a patch's spectrum holds: a voxels x volumes Casorati matrix from which `removed`
 * dimensions of the volume axis were projected out (demeaning: one per group of volumes) holds the noise of a
 * voxels x (volumes - removed) matrix, and min(voxels, volumes) - min(voxels, volumes - removed) of its smallest
 * eigenvalues are zero but for rounding. The noise rules must see that shape, not the matrix's: fitted as
 * voxels x volumes, the zeros and the narrower bulk bias σ low. */
struct PatchNoiseShape
{
  int rows;    // voxels
  int cols;    // volumes - removed
  int dropped; // the smallest eigenvalues the projection made zero, left out of the fit
};

SVDLR_HOST_DEVICE inline PatchNoiseShape
NoiseShapeOf(int voxels, int volumes, int removed)
{
  const int cols = volumes - removed;
  const int full = voxels < volumes ? voxels : volumes;
  const int kept = voxels < cols ? voxels : cols;
  return { voxels, cols, full - kept };
}

/** The denoisers' rule for one patch whose Gram eigenvalues (ascending, `count` of them) hold the noise of `shape`:
 * ChooseRank on the spectrum without the eigenvalues the demeaning made zero, then σ measured as `estimator` says
 * (DenoiseChoices.h). The refit applies only where σ came from the spectrum (a noise policy that estimates it, no σ
 * given) and the patch has noise (σ > 0: NoiseFreeRank's patches keep σ 0); the rank stays the policy's. The CPU
 * denoiser (PatchLowRank::Choose) and the CUDA denoiser's kernel (ChoosePatchRanksKernel) both call this. */
SVDLR_HOST_DEVICE inline NoiseRank
ChoosePatchRank(const RankPolicy & policy, NoiseEstimator estimator, const double * eigenvaluesAscending, int count,
                const PatchNoiseShape & shape, double givenSigma, double marchenkoPasturMedian)
{
  const GramEigenvaluesAscending spectrum{ eigenvaluesAscending + shape.dropped, count - shape.dropped };
  NoiseRank decided = ChooseRank(policy, spectrum, shape.rows, shape.cols, givenSigma, marchenkoPasturMedian);
  const bool estimated = givenSigma < 0.0 && (policy.kind == RankPolicy::Kind::MarchenkoPastur ||
                                              (policy.kind == RankPolicy::Kind::GavishDonoho && !(policy.noiseSigma > 0.0)));
  if (estimator == NoiseEstimator::ResidualRefit && estimated && decided.sigma > 0.0)
  {
    decided.sigma = ResidualNoiseSigma(spectrum, spectrum.count, shape.rows, shape.cols, decided.rank, decided.sigma);
  }
  return decided;
}

} // namespace detail
} // namespace svdlr

#endif
