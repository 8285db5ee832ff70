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
#include "SVDLowRankDenoiseRun.h"

#include "itkLocalLowRankDenoisingImageFilter.h"
#include "svdlr/DenoiseChoices.h"

#include <sstream>

namespace svdlr_tools
{

Provenance
DenoiseProvenance(const char * tool, const DenoiseToolOptions & options, const DenoiseSummary & summary)
{
  Provenance provenance;
  provenance.tool = tool;
  provenance.commandLine = options.run.commandLine;
  auto & parameters = provenance.parameters;
  parameters["policy"] = options.policyName;
  if (options.policy.kind == svdlr::RankPolicy::Kind::FixedRank)
  {
    parameters["rank"] = options.policy.rank;
  }
  parameters["patch"] = { summary.patch[0], summary.patch[1], summary.patch[2] };
  parameters["stride"] = summary.patchStride;
  parameters["patchShape"] = svdlr::PatchShapeName(itk::LocalLowRankDenoisingBridge::ToEngine(options.patchShape));
  if (summary.patchRadius > 0.0) // a sphere's; a cuboid has its extent alone
  {
    parameters["patchRadius"] = JsonNumber(summary.patchRadius);
  }
  parameters["patchVoxels"] = summary.patchVoxels;
  // The engine's names, as --aggregation and --shrinkage spell them (the shrinkage is resolved: never "auto").
  parameters["aggregation"] = svdlr::AggregationName(itk::LocalLowRankDenoisingBridge::ToEngine(options.aggregation));
  parameters["shrinkage"] = svdlr::ShrinkageName(itk::LocalLowRankDenoisingBridge::ToEngine(options.shrinkage));
  parameters["noiseEstimator"] =
    svdlr::NoiseEstimatorName(itk::LocalLowRankDenoisingBridge::ToEngine(options.noiseEstimator));
  parameters["noiseSigma"] = options.noiseSigma > 0.0 ? JsonNumber(options.noiseSigma) : Json();
  parameters["magnitudeNoise"] = summary.magnitudeNoise;
  parameters["coils"] = options.complex.coils;
  parameters["demean"] = options.multiEcho.demean;
  parameters["echoes"] = summary.echoes;
  parameters["backend"] = svdlr::Name(static_cast<svdlr::Backend>(options.backend));
  parameters["device"] = options.deviceId;
  parameters["gpuMemoryLimit"] =
    options.gpuMemoryLimit > 0 ? Json(options.gpuMemoryLimit) : Json(svdlr::kNoDeviceMemoryLimitName);
  parameters["outputType"] = options.outputType;
  parameters["threads"] = options.run.threads > 0 ? Json(options.run.threads) : Json();
  parameters["gfactor"] = options.complex.gfactor.empty() ? Json() : Json(options.complex.gfactor);
  parameters["estimateGFactor"] = options.complex.estimateGFactor;
  provenance.inputs = NonEmptyPaths({ options.input, options.mask, options.noiseSigmaMap, options.complex.gfactor });
  provenance.outputs = NonEmptyPaths({ options.output, options.noiseMap, options.rankMap, options.gfactorMap });
  const std::size_t voxels = summary.grid[0] * summary.grid[1] * summary.grid[2];
  provenance.ranks = ValuesInMask(summary.rank, summary.mask, voxels);
  provenance.sigmas = ValuesInMask(summary.sigma, summary.mask, voxels);
  std::ostringstream backend;
  backend << summary.backend;
  provenance.backend = backend.str();
  provenance.device = provenance.backend == "CUDA" ? options.deviceId : -1;
  provenance.notes = summary.notes;
  provenance.started = RunStartedUtc();
  provenance.seconds = SecondsSinceRunStart();
  return provenance;
}

Json
DenoiseSidecarJson(const std::string & target, const DenoiseToolOptions & options, const Json & provenanceJson)
{
  const svdlr::OutputMap * map =
    target == options.noiseMap ? &svdlr::kNoiseMap : target == options.rankMap ? &svdlr::kRankMap : nullptr;
  if (map == nullptr)
  {
    return provenanceJson;
  }
  std::vector<std::string> sources{ options.input };
  sources.insert(sources.end(), options.multiEcho.echoes.begin(), options.multiEcho.echoes.end());
  return MapSidecarJson(provenanceJson, *map, sources);
}

} // namespace svdlr_tools
