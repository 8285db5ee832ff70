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
#ifndef svdlr_DenoiseChoices_h
#define svdlr_DenoiseChoices_h

// The choices the local denoiser's defaults name (Defaults.h), with their
// spellings on the command line and in Python. They live apart from
// LocalDenoise.h and RankPolicy.h so that Defaults.h, which both include, can
// name them. ITK-free and CUDA-free.

#include <string>
#include <vector>

namespace svdlr {

/** How the Marchenko-Pastur policy estimates the noise (both as in MRtrix3's
 * dwidenoise, whose noise map it reproduces: σ is the standard deviation of
 * each entry's noise). Veraart2016:       Veraart et al. (2016), dwidenoise's
 * `-estimator Exp1`. CorderoGrande2019: Cordero-Grande et al. (2019),
 * dwidenoise's `-estimator Exp2` (its default in 3.0): the aspect ratio of the
 * noise bulk uses the larger dimension reduced by the number of signal
 * components. */
enum class MarchenkoPasturEstimator { Veraart2016, CorderoGrande2019 };

/** How a patch's σ is measured once its rank is chosen, where σ is estimated
 * from the spectrum (Marchenko-Pastur and Gavish-Donoho without a σ given).
 * MarchenkoPasturMean: the policy's own σ (MP: the mean of the noise
 *   eigenvalues over the larger dimension, as dwidenoise; GD: from the median
 *   singular value). It is biased low by about 2 % on Gaussian noise.
 * ResidualRefit: σ² = (sum of the count - rank smallest Gram eigenvalues) /
 *   ((rows - rank)(cols - rank)), the energy left outside the kept rank over
 *   the degrees of freedom a rank-r fit leaves, as in a linear model's residual
 *   variance (docs/denoising-options.md, "The noise estimator"). The rank is the
 *   policy's; only σ (the map and the shrinkage) changes. */
enum class NoiseEstimator { MarchenkoPasturMean, ResidualRefit };

/** How a voxel's denoised signal is formed from the patches' low-rank
 * approximations. The three overlap modes take a weighted mean of the rows of
 * every computed patch that contains the voxel (Manjón et al. 2013's
 * "overcomplete local PCA"; MRtrix3 dwidenoise2's -aggregator); the weight of
 * a contribution is AggregationWeight (src/denoise/svdlrPatchGeometry.h). */
enum class PatchAggregation {
  CentreVoxel,        // the row of the patch centred on the voxel (dwidenoise)
  OverlapAverage,     // weight 1 (dwidenoise2's "uniform")
  OverlapRankWeighted, // weight 1 / (1 + the patch's rank): low-rank patches
                       // count more (dwidenoise2's "invl0", DIPY's weighting)
  OverlapGaussianWeighted // weight exp(-d² / (2 s²)), d the voxel's distance
                          // from the voxel the patch was centred on, s from
                          // kGaussianAggregationFwhm (dwidenoise2's "gaussian")
};

/** Whether a voxel's signal is a mean over every patch that holds it. */
inline bool IsOverlapAggregation(PatchAggregation aggregation) {
  return aggregation != PatchAggregation::CentreVoxel;
}

/** The shape of a patch: the voxels whose series form its Casorati matrix. */
enum class PatchShape {
  Cuboid, // a box of odd extents (dwidenoise's -extent)
  Sphere  // the voxels within a radius of the centre voxel (dwidenoise2's
          // default -shape); LocalDenoise.h's SpherePatch says which
};

/** What happens to the singular values that the rank keeps. */
enum class Shrinkage {
  Hard,             // keep them as they are (truncated SVD; dwidenoise, DIPY)
  OptimalFrobenius, // Gavish & Donoho (2017): the shrinker that is optimal in
                    // Frobenius loss for the estimated σ
  Auto // OptimalFrobenius where the patches have σ, Hard where they have none
       // (ResolveShrinkage)
};

/** Which volumes share a mean that is subtracted from each voxel's series
 * before the low-rank step and added back after (svdlr/VolumeGroups.h), as
 * dwidenoise2's -demean: a group's mean is a per-voxel offset that the
 * low-rank step would otherwise spend a component on. */
enum class Demean {
  None,   // nothing subtracted
  All,    // one mean over the whole series (dwidenoise2's "all")
  Shells, // one mean per b-value shell (dwidenoise2's "shells")
  Echoes  // one mean per echo of a multi-echo series (dwidenoise2's
          // "volume_groups" for a 5D series)
};

/** The spellings of the tools and Python: "centre", "overlap", "rank",
 * "gaussian"; "hard", "frobenius", "auto"; "cuboid", "sphere"; "none", "all",
 * "shells", "echoes". */
const char *AggregationName(PatchAggregation aggregation);
const char *ShrinkageName(Shrinkage shrinkage);
const char *PatchShapeName(PatchShape shape);
const char *DemeanName(Demean demean);
/** "mp", "residual". */
const char *NoiseEstimatorName(NoiseEstimator estimator);
/** Set `value` and return true for a known spelling; return false (value
 * untouched) otherwise. */
bool ParseAggregationName(const std::string &name, PatchAggregation &value);
bool ParseShrinkageName(const std::string &name, Shrinkage &value);
bool ParsePatchShapeName(const std::string &name, PatchShape &value);
bool ParseDemeanName(const std::string &name, Demean &value);
bool ParseNoiseEstimatorName(const std::string &name, NoiseEstimator &value);
/** Every spelling, in declaration order, for CLI11's IsMember, help texts and
 * messages. */
std::vector<std::string> AggregationNameList();
std::vector<std::string> ShrinkageNameList();
std::vector<std::string> PatchShapeNameList();
std::vector<std::string> DemeanNameList();
std::vector<std::string> NoiseEstimatorNameList();

} // namespace svdlr

#endif
