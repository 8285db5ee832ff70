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
#include "SVDLowRankDenoiseProvenance.h"

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
  parameters.emplace_back("policy", JsonString(options.policyName));
  if (options.policy.kind == svdlr::RankPolicy::Kind::FixedRank)
  {
    parameters.emplace_back("rank", std::to_string(options.policy.rank));
  }
  parameters.emplace_back("patch", "[" + std::to_string(summary.patch[0]) + ", " + std::to_string(summary.patch[1]) +
                                     ", " + std::to_string(summary.patch[2]) + "]");
  parameters.emplace_back("stride", std::to_string(summary.patchStride));
  parameters.emplace_back("patchShape",
                          JsonString(svdlr::PatchShapeName(itk::LocalLowRankDenoisingBridge::ToEngine(options.patchShape))));
  if (summary.patchRadius > 0.0) // a sphere's; a cuboid has its extent alone
  {
    parameters.emplace_back("patchRadius", JsonNumber(summary.patchRadius));
  }
  parameters.emplace_back("patchVoxels", std::to_string(summary.patchVoxels));
  // The engine's names, as --aggregation and --shrinkage spell them (the shrinkage is resolved: never "auto").
  parameters.emplace_back("aggregation",
                          JsonString(svdlr::AggregationName(itk::LocalLowRankDenoisingBridge::ToEngine(options.aggregation))));
  parameters.emplace_back("shrinkage",
                          JsonString(svdlr::ShrinkageName(itk::LocalLowRankDenoisingBridge::ToEngine(options.shrinkage))));
  parameters.emplace_back("noiseEstimator",
                          JsonString(svdlr::NoiseEstimatorName(itk::LocalLowRankDenoisingBridge::ToEngine(options.noiseEstimator))));
  parameters.emplace_back("noiseSigma", options.noiseSigma > 0.0 ? JsonNumber(options.noiseSigma) : "null");
  parameters.emplace_back("magnitudeNoise", JsonString(summary.magnitudeNoise));
  parameters.emplace_back("coils", std::to_string(options.complex.coils));
  parameters.emplace_back("demean", JsonString(options.multiEcho.demean));
  parameters.emplace_back("echoes", std::to_string(summary.echoes));
  parameters.emplace_back("backend", JsonString(svdlr::Name(static_cast<svdlr::Backend>(options.backend))));
  parameters.emplace_back("device", std::to_string(options.deviceId));
  parameters.emplace_back("gpuMemoryLimit", options.gpuMemoryLimit > 0 ? std::to_string(options.gpuMemoryLimit)
                                                                   : JsonString(svdlr::kNoDeviceMemoryLimitName));
  parameters.emplace_back("outputType", JsonString(options.outputType));
  parameters.emplace_back("threads", options.run.threads > 0 ? std::to_string(options.run.threads) : "null");
  parameters.emplace_back("gfactor", options.complex.gfactor.empty() ? "null" : JsonString(options.complex.gfactor));
  parameters.emplace_back("estimateGFactor", options.complex.estimateGFactor ? "true" : "false");
  for (const std::string * input : { &options.input, &options.mask, &options.noiseSigmaMap, &options.complex.gfactor })
  {
    if (!input->empty())
    {
      provenance.inputs.push_back(*input);
    }
  }
  for (const std::string * output : { &options.output, &options.noiseMap, &options.rankMap, &options.gfactorMap })
  {
    if (!output->empty())
    {
      provenance.outputs.push_back(*output);
    }
  }
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

std::string
DenoiseSidecarJson(const std::string & target, const DenoiseToolOptions & options, const std::string & provenanceJson)
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
