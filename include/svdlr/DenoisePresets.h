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
#ifndef svdlr_DenoisePresets_h
#define svdlr_DenoisePresets_h

// The local denoiser's presets, in one table (src/denoise/svdlrDenoiseChoices.cxx):
// named configurations that the tool's
// --preset and Python's preset= apply before the options given explicitly,
// which override them. Each sets the rank policy, the aggregation, the
// shrinkage, the noise estimator and the automatic magnitude model; the patch extent of every preset is the engine's default rule
// (DefaultPatchSize: the smallest odd cube of at least as many voxels as
// volumes, dwidenoise's rule) and the stride 1. ITK-free.

#include "svdlr/LocalDenoise.h"

#include <string>
#include <vector>

namespace svdlr {

struct DenoisePreset {
  const char *name;    // the tools' and Python's spelling
  const char *purpose; // what it is for, for --help and docstrings
                       // (DenoisePresetSettings says what it sets)
  RankPolicy policy;
  PatchAggregation aggregation;
  Shrinkage shrinkage;
  NoiseEstimator noiseEstimator;
  bool automaticMagnitudeModel; // MagnitudeNoiseOptions::automatic for a
                                // magnitude input (dwidenoise: none)
};

/** Every preset, in the order --help lists them: "default" (the defaults of
 * Defaults.h) first, then "dwidenoise" (MRtrix3 dwidenoise 3.0's default:
 * Marchenko-Pastur with Exp2, the centre voxel, a hard threshold). */
const std::vector<DenoisePreset> &DenoisePresets();
/** The preset of that name, or nullptr. */
const DenoisePreset *FindDenoisePreset(const std::string &name);
/** The presets' names, in order. */
std::vector<std::string> DenoisePresetNameList();
/** What the preset sets, in the options' spellings: "aggregation overlap,
 * shrinkage auto, policy mp-cg, noise estimator residual". */
std::string DenoisePresetSettings(const DenoisePreset &preset);
/** Sets the policy, aggregation, shrinkage, noise estimator and
 * magnitudeNoise.automatic of `options` to the preset's (the rest is
 * untouched). */
void ApplyDenoisePreset(const DenoisePreset &preset,
                        LocalDenoiseOptions &options);

} // namespace svdlr

#endif
