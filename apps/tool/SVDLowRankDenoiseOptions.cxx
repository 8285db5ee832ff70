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
#include "SVDLowRankDenoiseOptions.h"

#include "SVDLowRankCommonOptions.h"
#include "SVDLowRankDenoiseBatch.h"
#include "SVDLowRankReadableFile.h"

#include "svdlr/Defaults.h"
#include "svdlr/DenoisePresets.h"
#include "svdlr/LocalDenoise.h"
#include "svdlr/PatchFit.h"
#include "svdlr/Names.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

namespace svdlr_tools
{
namespace
{

constexpr const char * Description =
  "Denoises a 4D series (diffusion, fMRI, multi-echo MRI) by local low-rank approximation (MP-PCA):\n"
  "around each voxel, the patch's voxels x volumes matrix keeps only its singular values above the\n"
  "noise, with the noise level sigma and the rank estimated from the Marchenko-Pastur law (Veraart\n"
  "et al. 2016, Cordero-Grande et al. 2019, as MRtrix3's dwidenoise) or chosen otherwise (--policy).\n"
  "By default each voxel averages every patch holding it and the kept singular values are shrunk\n"
  "optimally (Gavish & Donoho 2017); --preset dwidenoise gives dwidenoise 3.0's default output.";

constexpr const char * Footer = R"(INPUT is a 4D image ITK reads (NIfTI, MHA/MHD, NRRD: x, y, z, volumes), or a 3D image with
one component per volume (a DWI NRRD, for example); OUTPUT gets the same form, in the format its
extension names. The maps are 3D images on the series' voxel grid. Outputs appear together and only
when complete: a failed run leaves none of them.

Outputs are float32 (--output-type same: the input's type). A NIfTI output keeps the input's sform/qform
codes, description and time unit, and gets a JSON sidecar beside it (out.nii.gz -> out.json). Off a
terminal, a start line comes before the work and a progress line at most every 5 s.

Examples:
  SVDLowRankDenoiseSeries dwi.nii.gz dwi_denoised.nii.gz
  SVDLowRankDenoiseSeries --mask brain_mask.nii.gz --noise-map sigma.nii.gz --rank-map rank.nii.gz \
      dwi.nii.gz dwi_denoised.nii.gz
  SVDLowRankDenoiseSeries --preset dwidenoise dwi.nii.gz out.nii.gz -mask mask.nii.gz \
      -noise sigma.nii.gz -extent 5,5,5 -nthreads 8 -force     (as dwidenoise is called, same output)
  SVDLowRankDenoiseSeries --patch 7,7,5 --stride 2 fmri.nii.gz fmri_denoised.nii.gz
  SVDLowRankDenoiseSeries --policy fixed --rank 6 --backend cpu echoes.mha echoes_rank6.mha
  SVDLowRankDenoiseSeries --batch runs.tsv --output-dir denoised/ --devices 0,1   (many series)

MRtrix3 dwidenoise spellings (a script can swap the command; note that -rank, as in dwidenoise,
names the rank map written, while --rank is a fixed rank):
)";

/** dwidenoise's options, by the name it gives them, and ours. */
std::vector<SingleDashAlias>
DwidenoiseAliases()
{
  std::vector<SingleDashAlias> aliases{ { "-extent", "--patch" },
                                        { "-noise", "--noise-map" },
                                        { "-rank", "--rank-map" },
                                        { "-mask", "--mask" },
                                        { "-estimator", "--estimator" } };
  const auto common = CommonSingleDashAliases();
  aliases.insert(aliases.end(), common.begin(), common.end());
  return aliases;
}

/** "5" or "7,7,5": odd extents >= 1, along x, y, z. */
std::array<unsigned int, 3>
ParsePatch(const std::string & text)
{
  const auto parsed = ParseIntegerList(text, 1, 65535);
  if (!parsed || std::any_of(parsed->begin(), parsed->end(), [](long value) { return value % 2 == 0; }))
  {
    throw UsageError("--patch takes odd voxel counts >= 1, as P or PX,PY,PZ; got '" + text + "'");
  }
  const std::vector<unsigned int> values(parsed->begin(), parsed->end());
  if (values.size() == 1)
  {
    return { { values[0], values[0], values[0] } };
  }
  if (values.size() != 3 || text.back() == ',')
  {
    throw UsageError("--patch takes P or PX,PY,PZ, got '" + text + "'");
  }
  if (values[0] * values[1] * values[2] < 2)
  {
    throw UsageError("--patch " + text + " holds a single voxel: a patch needs at least 2");
  }
  return { { values[0], values[1], values[2] } };
}

/** `text`'s value as `parse` reads it (a known name: IsMember checked it), or `value` (the preset's) without one. */
template <typename TValue>
TValue
NamedOr(const std::string & text, TValue value, bool (*parse)(const std::string &, TValue &))
{
  if (!text.empty())
  {
    parse(text, value);
  }
  return value;
}

/** A stride beyond the smallest extent of the patch (the one given, or the one the engine uses) is a UsageError. */
void
CheckStrideLeavesNoGaps(unsigned int stride, std::size_t smallest)
{
  if (stride > smallest)
  {
    throw UsageError("--stride " + std::to_string(stride) + " exceeds the smallest patch extent " +
                     std::to_string(smallest) + ": patches would leave gaps");
  }
}

/** --preset's help: each preset, what it is for and what it sets. */
std::string
PresetHelp()
{
  std::string text = "named settings of --policy, --aggregation, --shrinkage and\n"
                     "--noise-estimator;\n"
                     "options given explicitly override them:";
  for (const svdlr::DenoisePreset & preset : svdlr::DenoisePresets())
  {
    text += std::string("\n  ") + preset.name + ": " + preset.purpose + "\n    (" +
            svdlr::DenoisePresetSettings(preset) + ")";
  }
  return text;
}

} // namespace

DenoiseToolOptions
ParseDenoiseToolOptions(int argc, const char * const argv[])
{
  DenoiseToolOptions options;
  CLI::App           app{ Description, DenoiseToolName };
  app.get_formatter()->column_width(34);
  app.footer(std::string(Footer) + DescribeSingleDashAliases(DwidenoiseAliases()) + "\n" + ExitCodeTable());

  std::string patch;
  std::string patchShape;
  double      patchRadius = 0.0;
  std::string aggregation;
  std::string shrinkage;
  std::string policy;
  unsigned    rank = 0;

  std::vector<std::string> paths;
  app.add_option("INPUT", paths,
                 "the 4D series: an image file, or a DICOM folder or file whose\n"
                 "volumes (echoes, temporal positions, b-values) share one grid;\n"
                 "then OUTPUT, the denoised series (batch mode: INPUT... only)")
    ->type_name("OUTPUT");
  app.add_option("--noise-map", options.noiseMap, "write sigma of each voxel's patch (3D, float)")
    ->type_name("FILE");
  app.add_option("--rank-map", options.rankMap, "write the rank each voxel's patch kept (3D, 16-bit)")
    ->type_name("FILE");
  app.add_option("--gfactor-out", options.gfactorMap,
                 "write the g-factor map used (3D, float): the estimate of\n"
                 "--estimate-gfactor, or the --gfactor map")
    ->type_name("FILE");
  app.add_option("--mask", options.mask,
                 "denoise where this 3D image is not 0; copy the rest (sigma, rank 0)")
    ->type_name("FILE");
  auto * sigmaMap = app.add_option("--known-sigma-map,--noise-sigma-map", options.noiseSigmaMap,
                                   "input: a known sigma per voxel (3D image), not estimated\n"
                                   "(--noise-sigma-map, its former name, still works)")
                      ->type_name("FILE");
  app
    .add_option("--noise-sigma", options.noiseSigma,
                "a known sigma for every voxel, not estimated")
    ->type_name("S")
    ->check(SigmaValidator()) // a float32 map of it is what the filter takes
    ->excludes(sigmaMap);
  app.add_option("--patch", patch,
                 "patch extent in voxels along x, y, z, each odd (P: P,P,P); default: the\n"
                 "smallest cube of at least as many voxels as volumes (5,5,5 for 65)")
    ->type_name("PX,PY,PZ");
  app.add_option("--patch-shape", patchShape,
                 std::string("cuboid (--patch) or sphere (--patch-radius; MRtrix3 dwidenoise2's\n"
                             "default) (default: ") +
                   svdlr::PatchShapeName(svdlr::kDefaultPatchShape) + ")")
    ->check(CLI::IsMember(svdlr::PatchShapeNameList()));
  auto * radiusOption =
    app.add_option("--patch-radius", patchRadius,
                   "a sphere's radius in voxels (implies --patch-shape sphere); default:\n"
                   "the smallest holding 20/17 voxels per volume (sqrt 6, 81, for 65)")
      ->type_name("R")
      ->check(NumberValidator("a finite number >= 1", [](double r) { return r >= 1.0 && std::isfinite(r); }));
  auto * strideOption =
    app.add_option("--stride", options.stride,
                   "centre patches on every N-th voxel; 1: every voxel (dense);\n"
                   "default: half the patch's smallest extent (2 for 5x5x5, 3 for\n"
                   "7x7x7), 1 with --aggregation centre or a sphere; above 1 needs\n"
                   "an overlap aggregation (the default)")
      ->type_name("N")
      ->check(WholeNumberValidator(1, 65535));
  app.add_option("--preset", options.preset, PresetHelp())
    ->type_name("NAME")
    ->check(CLI::IsMember(svdlr::DenoisePresetNameList()));
  app
    .add_option("--aggregation", aggregation,
                std::string("centre: from the voxel's own patch (dwidenoise); overlap:\n"
                            "the mean over every patch holding it; rank: that mean weighted\n"
                            "by 1/(1+rank); gaussian: weighted by the distance from each\n"
                            "patch's centre (FWHM 2 voxels; dwidenoise2's) (default: ") +
                  svdlr::AggregationName(svdlr::kDefaultPatchAggregation) + ")")
    ->check(CLI::IsMember(svdlr::AggregationNameList()));
  app
    .add_option("--shrinkage", shrinkage,
                std::string("hard: keep the singular values kept as they are; frobenius:\n"
                            "Gavish-Donoho's optimal shrinker (needs sigma); auto: frobenius\n"
                            "where sigma is known or estimated, else hard (default: ") +
                  svdlr::ShrinkageName(svdlr::kDefaultShrinkage) + ")")
    ->check(CLI::IsMember(svdlr::ShrinkageNameList()));
  std::string noiseEstimator;
  app
    .add_option("--noise-estimator", noiseEstimator,
                std::string("how each patch's sigma is measured once its rank is chosen:\n"
                            "mp: the Marchenko-Pastur fit's mean (dwidenoise's); residual: the\n"
                            "energy outside the kept rank over its degrees of freedom,\n"
                            "(voxels - rank)(volumes - rank) (default: ") +
                  svdlr::NoiseEstimatorName(svdlr::kDefaultNoiseEstimator) + ")")
    ->check(CLI::IsMember(svdlr::NoiseEstimatorNameList()));
  auto * policyOption = AddRankPolicyOption(app, policy, "--policy",
                      std::string("how each patch's rank is chosen: mp (Marchenko-Pastur, Veraart\n"
                                  "2016), mp-cg (Cordero-Grande 2019), gd (Gavish-Donoho), nordic\n"
                                  "(NORDIC's threshold, sigma given: --noise-volumes, --noise-scan,\n"
                                  "--noise-sigma or --known-sigma-map) or fixed (with --rank);\n"
                                  "default: ") +
                        svdlr::PolicyName(svdlr::DefaultDenoisePolicy()),
                      svdlr::PolicyName(svdlr::RankPolicy::Fixed(svdlr::kMinimumRank)));
  auto * estimator =
    app
      .add_option("--estimator", policy,
                  "exp1 or exp2, as dwidenoise -estimator: --policy mp (exp1) or mp-cg\n"
                  "(exp2)")
      ->type_name("EXP")
      ->transform(CLI::Validator(
        [](std::string & text) -> std::string {
          const std::string lower = svdlr_io::LowerCase(text);
          if (lower != "exp1" && lower != "exp2")
          {
            return "must be exp1 or exp2 (Exp1, Exp2), got '" + text + "'";
          }
          text = svdlr::PolicyName(svdlr::RankPolicy::MarchenkoPastur(
            lower == "exp1" ? svdlr::MarchenkoPasturEstimator::Veraart2016
                            : svdlr::MarchenkoPasturEstimator::CorderoGrande2019));
          return {};
        },
        ""));
  app.add_option("--rank", rank, "the rank every patch keeps (implies --policy fixed)")
    ->type_name("K")
    ->check(WholeNumberValidator(1, 4294967295.0));
  AddBackendOption(app, options.backend, "--backend", "auto (default: the GPU when usable), cpu or cuda");
  AddDeviceOption(app, options.deviceId, "--device");
  AddDeviceMemoryLimitOption(app, options.gpuMemoryLimit, "--gpu-memory-limit",
                    "the most GPU memory the denoiser's buffers may take, e.g. 4G,\n"
                    "or 'free': all that is free (the CUDA context comes on top;\n"
                    "default: 8G, or less when less is free)");
  app.add_flag("--overwrite", options.overwrite, "replace output files that exist");
  AddOutputTypeOption(app, options.outputType);
  AddRunOptions(app, options.run);
  AddComplexInputOptions(app, options.complex);
  AddMultiEchoOptions(app, options.multiEcho);
  AddBatchOptions(app, options.batch,
                  "every INPUT is a series file, a folder searched for series files,\n"
                  "or a list (.txt, .tsv: a series per line, then optionally its mask\n"
                  "and known-sigma map, tab-separated); each series is written to\n"
                  "-o DIR as <name>_denoised.nii.gz; existing outputs are skipped (a\n"
                  "re-run resumes) unless --overwrite",
                  false); // each series is written as the tool writes one: no --compression-level
  app.add_option("-o,--output-dir", options.outputDir, "batch mode: the output folder")
    ->type_name("DIR")
    ->group(BatchGroup);
  app.add_flag("--maps", options.maps, "batch mode: write each series' sigma and rank maps beside it\n"
                                       "(<name>_sigma.nii.gz, <name>_rank.nii.gz)")
    ->group(BatchGroup);

  options.helpText = ParseCommandLine(app, argc, argv, DwidenoiseAliases());
  options.run.commandLine.assign(argv, argv + argc);
  if (!options.helpText.empty())
  {
    return options;
  }

  CheckBatchOptions(options.batch);
  CheckDenoiseBatchCommandLine(options, paths); // SVDLowRankDenoiseBatch.h
  if (estimator->count() > 0 && policyOption->count() > 0)
  {
    throw UsageError("give --policy or --estimator (dwidenoise's name for it), not both");
  }
  // The preset's settings (the "default" preset's without one) stand wherever no option was given.
  svdlr::LocalDenoiseOptions preset;
  svdlr::ApplyDenoisePreset(options.preset.empty() ? svdlr::DenoisePresets().front()
                                                   : *svdlr::FindDenoisePreset(options.preset), // IsMember checked it
                            preset);
  options.complex.automaticMagnitudeModel = preset.magnitudeNoise.automatic && !options.complex.noMagnitudeModel;
  const std::string fixed = svdlr::PolicyName(svdlr::RankPolicy::Fixed(svdlr::kMinimumRank));
  if (policy.empty())
  {
    policy = rank > 0 ? fixed : svdlr::PolicyName(preset.policy);
  }
  if (policy == fixed)
  {
    if (rank == 0)
    {
      throw UsageError("--policy fixed needs --rank K");
    }
    options.policy = svdlr::RankPolicy::Fixed(rank);
  }
  else
  {
    svdlr::ParseNoiseRank(policy, options.policy); // a known name: its validator checked it
    if (rank > 0)
    {
      throw UsageError("--rank goes with --policy fixed; --policy " + policy + " chooses each patch's rank itself");
    }
  }
  options.policyName = policy;
  const std::string problem = svdlr::PolicyProblem(options.policy, svdlr::Solver::Exact);
  if (!problem.empty())
  {
    throw UsageError(problem);
  }

  if (!patch.empty())
  {
    options.patch = ParsePatch(patch);
  }
  const auto engineAggregation = NamedOr(aggregation, preset.aggregation, svdlr::ParseAggregationName);
  options.aggregation = itk::LocalLowRankDenoisingBridge::FromEngine(engineAggregation);
  if (options.stride > 1 && engineAggregation == svdlr::PatchAggregation::CentreVoxel)
  {
    throw UsageError("--stride " + std::to_string(options.stride) +
                     " leaves voxels without a patch of their own: it needs --aggregation overlap" +
                     (aggregation.empty() ? " (--preset " + options.preset + " sets centre)" : std::string()));
  }
  const auto engineShape = NamedOr(patchShape,
                                   radiusOption->count() > 0 ? svdlr::PatchShape::Sphere : svdlr::kDefaultPatchShape,
                                   svdlr::ParsePatchShapeName);
  if (engineShape == svdlr::PatchShape::Sphere && !patch.empty())
  {
    throw UsageError("--patch sets a cuboid's extent; a sphere takes --patch-radius");
  }
  if (engineShape != svdlr::PatchShape::Sphere && radiusOption->count() > 0)
  {
    throw UsageError("--patch-radius needs --patch-shape sphere");
  }
  if (engineShape == svdlr::PatchShape::Sphere && options.stride > 1)
  {
    throw UsageError("--stride " + std::to_string(options.stride) + " needs a cuboid patch: a sphere takes stride 1");
  }
  options.patchShape = itk::LocalLowRankDenoisingBridge::FromEngine(engineShape);
  options.patchRadius = patchRadius;
  if (strideOption->count() > 0 && !patch.empty())
  {
    CheckStrideLeavesNoGaps(options.stride, std::min({ options.patch[0], options.patch[1], options.patch[2] }));
  }
  options.noiseEstimator = itk::LocalLowRankDenoisingBridge::FromEngine(
    NamedOr(noiseEstimator, preset.noiseEstimator, svdlr::ParseNoiseEstimatorName));
  const auto requestedShrinkage = NamedOr(shrinkage, preset.shrinkage, svdlr::ParseShrinkageName);
  const bool knownSigma = options.noiseSigma > 0.0 || !options.noiseSigmaMap.empty();
  CheckComplexInputOptions(options.complex, knownSigma, svdlr::PatchesHaveSigma(options.policy, false));
  if (!options.complex.gfactor.empty() || options.complex.estimateGFactor)
  {
    const std::string problem = svdlr::GFactorKnownSigmaProblem(!options.noiseSigmaMap.empty());
    if (!problem.empty())
    {
      throw UsageError(std::string(options.complex.estimateGFactor ? "--estimate-gfactor" : "--gfactor") +
                       " with --known-sigma-map: " + problem + " (--noise-sigma S)");
    }
  }
  if (!options.gfactorMap.empty() && options.complex.gfactor.empty() && !options.complex.estimateGFactor)
  {
    throw UsageError("--gfactor-out writes the g-factor map used: give --estimate-gfactor (or --gfactor FILE)");
  }
  if (svdlr::NeedsGivenSigma(options.policy) && !knownSigma && options.complex.noiseVolumes == 0 &&
      options.complex.noiseScan.empty())
  {
    throw UsageError("--policy " + policy + " takes sigma as given, never estimated: add --noise-volumes K, "
                     "--noise-scan FILE, --noise-sigma S or --known-sigma-map FILE");
  }
  if (options.batch.enabled && ComplexInputRequested(options.complex, itk::IOPixelEnum::SCALAR))
  {
    throw UsageError("--phase, --imaginary, --noise-volumes, --noise-scan and --complex-output take one series, not "
                     "--batch (a complex64 series in a batch is demodulated with the defaults)");
  }
  if (options.batch.enabled && (!options.complex.gfactor.empty() || options.complex.estimateGFactor))
  {
    throw UsageError(std::string(options.complex.estimateGFactor ? "--estimate-gfactor" : "--gfactor") +
                     " takes one series, not --batch: a map belongs to one acquisition");
  }
  CheckMultiEchoOptions(options.multiEcho, options.batch.enabled,
                        ComplexInputRequested(options.complex, itk::IOPixelEnum::SCALAR));
  if (requestedShrinkage == svdlr::Shrinkage::OptimalFrobenius && !svdlr::PatchesHaveSigma(options.policy, knownSigma))
  {
    throw UsageError("--shrinkage frobenius needs sigma: a noise policy (" + svdlr::NoiseRankNames() +
                     "), --noise-sigma or --known-sigma-map");
  }
  // Resolved here, so that the summary and the sidecar name the shrinkage the run used.
  options.shrinkage = itk::LocalLowRankDenoisingBridge::FromEngine(
    svdlr::ResolveShrinkage(requestedShrinkage, options.policy, knownSigma));
  return options;
}

std::vector<std::string>
SidecarInputs(const DenoiseToolOptions & options)
{
  auto inputs = ComplexInputFiles(options.complex);
  inputs.insert(inputs.end(), { options.input, options.mask, options.noiseSigmaMap, options.complex.gfactor });
  inputs.insert(inputs.end(), options.multiEcho.echoes.begin(), options.multiEcho.echoes.end());
  return inputs;
}

svdlr::LocalDenoiseOptions
WarmUpOptions(const DenoiseToolOptions & options)
{
  svdlr::LocalDenoiseOptions engine;
  engine.policy = options.policy;
  for (unsigned int i = 0; i < 3; ++i)
  {
    engine.patchSize[i] = options.patch[i];
  }
  engine.patchStride = options.stride;
  engine.patchShape = itk::LocalLowRankDenoisingBridge::ToEngine(options.patchShape);
  engine.patchRadius = options.patchRadius;
  engine.aggregation = itk::LocalLowRankDenoisingBridge::ToEngine(options.aggregation);
  engine.shrinkage = itk::LocalLowRankDenoisingBridge::ToEngine(options.shrinkage);
  engine.noiseEstimator = itk::LocalLowRankDenoisingBridge::ToEngine(options.noiseEstimator);
  engine.backend = itk::SVDLowRankEngineBridge::ToEngine(options.backend);
  engine.deviceId = options.deviceId;
  engine.deviceMemoryLimit = options.gpuMemoryLimit;
  return engine;
}

void
CheckPatch(const DenoiseToolOptions & options, const std::array<std::size_t, 3> & grid, std::size_t volumes)
{
  // The engine's rule (svdlr::PatchAxisBeyondImage), in the options' words, before the work: a sphere that exceeds
  // the image is refused as a cuboid is, not cut down to a whole-image patch that takes minutes per voxel.
  const bool                       sphere = options.patchShape == itk::LocalLowRankDenoisingEnums::PatchShape::Sphere;
  const std::array<std::size_t, 3> box = svdlr::RequestedPatchBox(
    itk::LocalLowRankDenoisingBridge::ToEngine(options.patchShape),
    { options.patch[0], options.patch[1], options.patch[2] }, options.patchRadius);
  const unsigned int axis = svdlr::PatchAxisBeyondImage(grid, box);
  if (axis < 3)
  {
    std::ostringstream given;
    if (sphere)
    {
      given << "--patch-radius " << options.patchRadius << " spans " << box[axis] << " voxels, which";
    }
    else
    {
      given << "--patch " << options.patch[0] << "," << options.patch[1] << "," << options.patch[2];
    }
    throw UsageError(given.str() + " is larger than the image along " + "xyz"[axis] + " (" +
                     std::to_string(grid[axis]) + " voxels)");
  }
  if (sphere)
  {
    return; // a sphere takes stride 1 (checked with the options)
  }
  // The smallest extent of the patch the engine will use (its own rule, with the default fitted to the image).
  const std::array<std::size_t, 3> given{ options.patch[0], options.patch[1], options.patch[2] };
  const std::array<std::size_t, 3> used = svdlr::PatchSizeUsed(grid, volumes, given);
  CheckStrideLeavesNoGaps(options.stride, std::min({ used[0], used[1], used[2] }));
}

} // namespace svdlr_tools
