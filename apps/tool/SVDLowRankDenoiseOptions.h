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
#ifndef SVDLowRankDenoiseOptions_h
#define SVDLowRankDenoiseOptions_h

// The command line of SVDLowRankDenoiseSeries, parsed by CLI11 (SVDLowRankDenoiseOptions.cxx). Rules that need
// only the command line are checked here; those that need the images (a patch larger than the image) in the tool.

#include "SVDLowRankBatchOptions.h"
#include "SVDLowRankCommonOptions.h"
#include "SVDLowRankComplexInput.h"
#include "SVDLowRankEchoInput.h"
#include "SVDLowRankExitCodes.h"

#include "itkLocalLowRankDenoisingEnums.h"
#include "itkLocalLowRankDenoisingImageFilter.h"
#include "itkSVDLowRankReconstructionEnums.h"
#include "svdlr/Defaults.h"
#include "svdlr/Engine.h"
#include "svdlr/LocalDenoise.h"

#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace svdlr_tools
{

/** The denoising tool's name, in its messages, its --help, its provenance and its batch summary. */
constexpr const char * DenoiseToolName = "SVDLowRankDenoiseSeries";

struct DenoiseToolOptions
{
  std::string input;
  std::string output;
  std::string noiseMap;      // --noise-map: σ per voxel, written when given
  std::string rankMap;       // --rank-map: the rank kept per voxel, written when given
  std::string gfactorMap;    // --gfactor-out: the g-factor map used (given or estimated), written when given
  std::string mask;          // --mask
  std::string noiseSigmaMap; // --known-sigma-map (formerly --noise-sigma-map): a known σ per voxel, an input
  double      noiseSigma{ 0.0 }; // --noise-sigma: a known σ for every voxel; 0: not given

  std::array<unsigned int, 3> patch{ { 0, 0, 0 } }; // 0, 0, 0: the engine's default cube
  unsigned int                stride{ svdlr::kAutoPatchStride }; // --stride; 0: svdlr::PatchStrideUsed's rule
  // --patch-shape, --patch-radius (0: the engine's default sphere)
  itk::LocalLowRankDenoisingEnums::PatchShape patchShape{ itk::LocalLowRankDenoisingBridge::FromEngine(
    svdlr::kDefaultPatchShape) };
  double patchRadius{ 0.0 };
  std::string                 preset;   // --preset: its name, or "" (the defaults)
  // The settings in force after the preset and the options given (ParseDenoiseToolOptions): the shrinkage is
  // resolved, Hard or OptimalFrobenius, never Auto.
  itk::LocalLowRankDenoisingEnums::Aggregation aggregation{ itk::LocalLowRankDenoisingBridge::FromEngine(
    svdlr::kDefaultPatchAggregation) };
  itk::LocalLowRankDenoisingEnums::Shrinkage shrinkage{ itk::LocalLowRankDenoisingBridge::FromEngine(
    svdlr::ResolveShrinkage(svdlr::kDefaultShrinkage, svdlr::DefaultDenoisePolicy(), false)) };
  itk::LocalLowRankDenoisingEnums::NoiseEstimator noiseEstimator{ itk::LocalLowRankDenoisingBridge::FromEngine(
    svdlr::kDefaultNoiseEstimator) };
  svdlr::RankPolicy                          policy{ svdlr::DefaultDenoisePolicy() }; // rank in policy.rank
  std::string                                policyName{ svdlr::PolicyName(svdlr::DefaultDenoisePolicy()) };
  itk::SVDLowRankReconstructionEnums::Backend  backend{ itk::SVDLowRankReconstructionEnums::Backend::Auto };
  int                                          deviceId{ 0 };
  std::size_t gpuMemoryLimit{ svdlr::kDefaultDeviceMemoryLimit }; // --gpu-memory-limit, bytes; 0: what is free
  bool                                         overwrite{ false };
  std::string                                  outputType{ svdlr::kDefaultOutputTypeName }; // float32 or same
  RunOptions                                   run; // --quiet, --json, --nthreads
  ComplexInputOptions                          complex; // --phase, --imaginary, --noise-volumes, --noise-scan...
  MultiEchoOptions                             multiEcho; // --demean, --bval, --echo, --echo-output

  // Batch mode (SVDLowRankDenoiseBatch.h): many series in one run, each written under the output folder.
  BatchToolOptions         batch;     // --batch (implied by --glob), the pipeline's options
  std::vector<std::string> inputs;    // batch mode: series files, folders, and lists of series (with masks, maps)
  std::string              outputDir; // -o, --output-dir
  bool                     maps{ false }; // --maps: each series' sigma and rank maps beside it

  std::string helpText; // not empty: --help was given, print this and exit
};

/** Parses the command line. Throws UsageError with CLI11's or our own message. */
DenoiseToolOptions
ParseDenoiseToolOptions(int argc, const char * const argv[]);

/** The inputs the sidecar names with their checksums: the series (and its complex parts), the mask, the known-sigma
 * map; "" where not given. */
std::vector<std::string>
SidecarInputs(const DenoiseToolOptions & options);

/** The engine options that pick the GPU's set-up for svdlr::StartCudaDenoiseWarmUp: device, patch, policy,
 * aggregation, shrinkage, memory limit, as the filter will hand them to the engine. */
svdlr::LocalDenoiseOptions
WarmUpOptions(const DenoiseToolOptions & options);

/** The patch, cuboid or sphere, fits the image (svdlr::PatchAxisBeyondImage) and the stride leaves no gaps between
 * patches (the patch the engine will use: svdlr::PatchSizeUsed), else UsageError: checked before the filter runs, to
 * exit with a usage error. */
void
CheckPatch(const DenoiseToolOptions & options, const std::array<std::size_t, 3> & grid, std::size_t volumes);

} // namespace svdlr_tools

#endif
