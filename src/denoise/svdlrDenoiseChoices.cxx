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
// The local denoiser's choices by name (svdlr/DenoiseChoices.h) and its presets
// (svdlr/DenoisePresets.h), each from one table.
#include "svdlr/DenoiseChoices.h"
#include "svdlr/DenoisePresets.h"

namespace svdlr {
namespace {

template <typename TValue> struct Spelling {
  TValue value;
  const char *name;
};

constexpr Spelling<PatchAggregation> kAggregations[] = {
    {PatchAggregation::CentreVoxel, "centre"},
    {PatchAggregation::OverlapAverage, "overlap"},
    {PatchAggregation::OverlapRankWeighted, "rank"},
    {PatchAggregation::OverlapGaussianWeighted, "gaussian"}};
constexpr Spelling<Shrinkage> kShrinkages[] = {
    {Shrinkage::Hard, "hard"},
    {Shrinkage::OptimalFrobenius, "frobenius"},
    {Shrinkage::Auto, "auto"}};
constexpr Spelling<PatchShape> kPatchShapes[] = {{PatchShape::Cuboid, "cuboid"},
                                                 {PatchShape::Sphere, "sphere"}};
constexpr Spelling<Demean> kDemeans[] = {{Demean::None, "none"},
                                         {Demean::All, "all"},
                                         {Demean::Shells, "shells"},
                                         {Demean::Echoes, "echoes"}};
constexpr Spelling<NoiseEstimator> kNoiseEstimators[] = {
    {NoiseEstimator::MarchenkoPasturMean, "mp"},
    {NoiseEstimator::ResidualRefit, "residual"}};

template <typename TValue, std::size_t N>
const char *NameOf(const Spelling<TValue> (&table)[N], TValue value) {
  for (const auto &entry : table) {
    if (entry.value == value) {
      return entry.name;
    }
  }
  return "";
}

template <typename TValue, std::size_t N>
bool Parse(const Spelling<TValue> (&table)[N], const std::string &name,
           TValue &value) {
  for (const auto &entry : table) {
    if (name == entry.name) {
      value = entry.value;
      return true;
    }
  }
  return false;
}

template <typename TValue, std::size_t N>
std::vector<std::string> NamesOf(const Spelling<TValue> (&table)[N]) {
  std::vector<std::string> names;
  for (const auto &entry : table) {
    names.emplace_back(entry.name);
  }
  return names;
}

} // namespace

const char *AggregationName(PatchAggregation aggregation) {
  return NameOf(kAggregations, aggregation);
}

const char *ShrinkageName(Shrinkage shrinkage) {
  return NameOf(kShrinkages, shrinkage);
}

const char *PatchShapeName(PatchShape shape) {
  return NameOf(kPatchShapes, shape);
}

bool ParsePatchShapeName(const std::string &name, PatchShape &value) {
  return Parse(kPatchShapes, name, value);
}

std::vector<std::string> PatchShapeNameList() { return NamesOf(kPatchShapes); }
const char *DemeanName(Demean demean) { return NameOf(kDemeans, demean); }

bool ParseDemeanName(const std::string &name, Demean &value) {
  return Parse(kDemeans, name, value);
}

std::vector<std::string> DemeanNameList() { return NamesOf(kDemeans); }

const char *NoiseEstimatorName(NoiseEstimator estimator) {
  return NameOf(kNoiseEstimators, estimator);
}

bool ParseNoiseEstimatorName(const std::string &name, NoiseEstimator &value) {
  return Parse(kNoiseEstimators, name, value);
}

std::vector<std::string> NoiseEstimatorNameList() {
  return NamesOf(kNoiseEstimators);
}

bool ParseAggregationName(const std::string &name, PatchAggregation &value) {
  return Parse(kAggregations, name, value);
}

bool ParseShrinkageName(const std::string &name, Shrinkage &value) {
  return Parse(kShrinkages, name, value);
}

std::vector<std::string> AggregationNameList() {
  return NamesOf(kAggregations);
}

std::vector<std::string> ShrinkageNameList() { return NamesOf(kShrinkages); }

const std::vector<DenoisePreset> &DenoisePresets() {
  static const std::vector<DenoisePreset> presets{
      {"default",
       "the defaults, the best configuration docs/denoising.md measured",
       DefaultDenoisePolicy(), kDefaultPatchAggregation, kDefaultShrinkage,
       kDefaultNoiseEstimator, kDefaultAutomaticMagnitudeModel},
      {"dwidenoise", "MRtrix3 dwidenoise 3.0's default output, for parity",
       RankPolicy::MarchenkoPastur(MarchenkoPasturEstimator::CorderoGrande2019),
       PatchAggregation::CentreVoxel, Shrinkage::Hard,
       NoiseEstimator::MarchenkoPasturMean, false},
  };
  return presets;
}

const DenoisePreset *FindDenoisePreset(const std::string &name) {
  for (const DenoisePreset &preset : DenoisePresets()) {
    if (name == preset.name) {
      return &preset;
    }
  }
  return nullptr;
}

std::vector<std::string> DenoisePresetNameList() {
  std::vector<std::string> names;
  for (const DenoisePreset &preset : DenoisePresets()) {
    names.emplace_back(preset.name);
  }
  return names;
}

std::string DenoisePresetSettings(const DenoisePreset &preset) {
  return std::string("aggregation ") + AggregationName(preset.aggregation) +
         ", shrinkage " + ShrinkageName(preset.shrinkage) + ", policy " +
         PolicyName(preset.policy) + ", noise estimator " +
         NoiseEstimatorName(preset.noiseEstimator) + ", magnitude model " +
         (preset.automaticMagnitudeModel ? "automatic" : "none");
}

void ApplyDenoisePreset(const DenoisePreset &preset,
                        LocalDenoiseOptions &options) {
  options.policy = preset.policy;
  options.aggregation = preset.aggregation;
  options.shrinkage = preset.shrinkage;
  options.noiseEstimator = preset.noiseEstimator;
  options.magnitudeNoise.automatic = preset.automaticMagnitudeModel;
}

} // namespace svdlr
