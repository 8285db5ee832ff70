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
#ifndef svdlr_RankPolicy_h
#define svdlr_RankPolicy_h

// The rank policy, in one place: what it is (RankPolicy), its names and how they parse, whether a policy is valid,
// and every label a result carries (the output tag in file names, the one-line description in DICOM
// SeriesDescription, summaries and sidecars, the sentence in DICOM DerivationDescription). The engine, both ITK
// filters, the tools, the batch path and Python all take them from here, so a run is labelled alike on every path.
// How each policy chooses a rank is src/noise/svdlrChooseRank.h, the one rule every backend runs. ITK-free and
// CUDA-free.
// docs/architecture.md, "Adding a rank policy", lists the files a new policy touches.

#include "svdlr/Defaults.h"

#include <cstddef>
#include <string>
#include <vector>

namespace svdlr
{

/** The smallest rank a fixed-rank policy accepts. */
constexpr std::size_t kMinimumRank = 1;

/** How many singular triplets each matrix keeps. */
struct RankPolicy
{
  enum class Kind
  {
    FixedRank,      // keep `rank` triplets (clamped to min(rows, cols))
    EnergyFraction, // keep the fewest triplets whose squared singular values hold >= `energyFraction` of ||A||_F^2
    GavishDonoho,   // keep the singular values above Gavish & Donoho's (2014) optimal hard threshold
    MarchenkoPastur, // keep those above the Marchenko-Pastur noise bulk, found with σ (Veraart et al. 2016)
    Nordic           // NORDIC (Moeller et al. 2021): keep those above σ(√m + √n) for a σ given, never estimated
  };

  Kind        kind{ Kind::FixedRank };
  std::size_t rank{ kDefaultRank }; // Defaults.h, the one default of every interface
  double      energyFraction{ 1.0 };
  /** GavishDonoho: the known σ of each entry's noise; 0: unknown, estimated from the median singular value.
   * Nordic: the known σ; 0: given per matrix instead (the denoisers' σ map), and refused where none is. */
  double                   noiseSigma{ 0.0 };
  MarchenkoPasturEstimator estimator{ MarchenkoPasturEstimator::Veraart2016 };

  static constexpr RankPolicy
  Fixed(std::size_t k)
  {
    return { Kind::FixedRank, k, 1.0 };
  }
  static RankPolicy
  Energy(double fraction)
  {
    return { Kind::EnergyFraction, 0, fraction };
  }
  static RankPolicy
  GavishDonoho(double sigma = 0.0)
  {
    return { Kind::GavishDonoho, 0, 1.0, sigma };
  }
  static RankPolicy
  Nordic(double sigma = 0.0)
  {
    return { Kind::Nordic, 0, 1.0, sigma };
  }
  static constexpr RankPolicy
  MarchenkoPastur(MarchenkoPasturEstimator estimator = MarchenkoPasturEstimator::Veraart2016)
  {
    return { Kind::MarchenkoPastur, 0, 1.0, 0.0, estimator };
  }
};

/** The local denoiser's rank policy when none is given: Marchenko-Pastur with kDefaultMarchenkoPasturEstimator
 * (Defaults.h). Its name, for the tools and Python, is PolicyName(DefaultDenoisePolicy()). */
constexpr RankPolicy
DefaultDenoisePolicy()
{
  return RankPolicy::MarchenkoPastur(kDefaultMarchenkoPasturEstimator);
}

/** The policy's name, as the tools and Python spell it: "fixed", "energy", "gd", "mp", "mp-cg" or "nordic".
 * Parameters are not part of the name (PolicyDescription and OutputTag carry them). */
const char *
PolicyName(const RankPolicy & policy);
/** Sets `policy` to the named policy with its default parameters (rank kDefaultRank, energy fraction 1, σ unknown)
 * and returns true; returns false (policy untouched) for any other text. */
bool
ParsePolicyName(const std::string & name, RankPolicy & policy);
/** Every policy name, for messages and help texts: "fixed, energy, gd, mp, mp-cg or nordic". */
std::string
PolicyNames();
/** The same names one by one (Python's tuples); only the noise policies' (NoiseRankNames) with `noiseOnly`. */
std::vector<std::string>
PolicyNameList(bool noiseOnly = false);

/** The policies chosen from the noise (the tools' --noise-rank), by the same names:
 *   "gd"    Gavish-Donoho (σ estimated, or given as the policy's noiseSigma);
 *   "mp"    Marchenko-Pastur, Veraart et al. 2016 (MRtrix3 dwidenoise's `-estimator Exp1`);
 *   "mp-cg" Marchenko-Pastur, Cordero-Grande et al. 2019 (dwidenoise's Exp2);
 *   "nordic" NORDIC's threshold, σ(√m + √n), with σ given (NeedsGivenSigma).
 * NoiseRankName gives "" for the others (FixedRank, EnergyFraction). */
const char *
NoiseRankName(const RankPolicy & policy);
/** The method by its authors' names, for summaries: "Gavish-Donoho", "Marchenko-Pastur (Veraart 2016)", ...;
 * "" as NoiseRankName. */
const char *
NoiseRankDescription(const RankPolicy & policy);
/** As ParsePolicyName, for the noise policies only. */
bool
ParseNoiseRank(const std::string & name, RankPolicy & policy);
/** "gd, mp, mp-cg or nordic". */
std::string
NoiseRankNames();

/** The tag an output's file name carries, with every parameter that sets the run apart: svd-rank20,
 * svd-energy0.95, svd-gd, svd-gd-sigma12.5, svd-mp, svd-mp-cordero2019. */
std::string
OutputTag(const RankPolicy & policy);
/** The one-line description (DICOM SeriesDescription, summaries, sidecars), with the same parameters:
 * "SVD rank 20", "SVD energy 0.95", "SVD noise rank gd", "SVD noise rank gd sigma 12.5", "SVD noise rank mp",
 * "SVD noise rank mp-cg". */
std::string
PolicyDescription(const RankPolicy & policy);
/** What the slice path did to each slice, as a sentence for DICOM DerivationDescription: "Each slice replaced by
 * its rank-20 truncated SVD reconstruction", "... by its truncated SVD reconstruction above the Gavish-Donoho
 * threshold (sigma 12.5)", ... Callers may add the tool and the ranks in parentheses. */
std::string
SliceDerivationDescription(const RankPolicy & policy);

/** True for the policies that take σ as given and never estimate it (nordic): a caller without a σ for them, in
 * the policy (noiseSigma > 0) or per matrix (a known σ map, noise volumes, a noise scan), refuses the run. */
bool
NeedsGivenSigma(const RankPolicy & policy);

/** What is wrong with `policy` itself, in one sentence that names the engine's parameters, or "" when it is valid.
 * PolicyProblem (Names.h) adds the rules that tie a policy to a solver. */
std::string
RankPolicyProblem(const RankPolicy & policy);

} // namespace svdlr

#endif
