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

// The complex and magnitude inputs' command line (--phase, --imaginary, --noise-volumes, --vst, ...) and its rules,
// apart from the reading and preparing of the series (SVDLowRankComplexInput.cxx).
#include "SVDLowRankComplexInput.h"

#include "SVDLowRankExitCodes.h"
#include "svdlr/MagnitudeNoise.h"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace svdlr_tools
{

void
AddComplexInputOptions(CLI::App & app, ComplexInputOptions & options)
{
  auto * phase =
    app.add_option("--phase", options.phase,
                   "INPUT is a magnitude and FILE its phase (same grid and volumes;\n"
                   "an image file, or a DICOM folder or file, rescale applied):\n"
                   "denoise the complex series, phase removed\n"
                   "(docs/denoising-options.md).\n"
                   "A DICOM INPUT folder of a magnitude and its phase series\n"
                   "(ImageType M and P) is paired without it")
      ->type_name("FILE");
  // Not ->needs(phase): a DICOM folder of a magnitude and its phase series takes it without --phase
  // (PrepareComplexSeries refuses it where there is no phase).
  app
    .add_option("--phase-units", options.phaseUnits,
                "auto (default): radians if within [-pi, 2 pi], Siemens if\n"
                "signed within [-4096, 4096] and wider than 720; else name\n"
                "it: radians, degrees, siemens (-4096..4095) or\n"
                "siemens-unsigned (0..4095)")
    ->check(CLI::IsMember({ "auto", "radians", "degrees", "siemens", "siemens-unsigned" }));
  app.add_option("--imaginary", options.imaginary, "INPUT is a real part and FILE its imaginary part")
    ->type_name("FILE")
    ->excludes(phase);
  app
    .add_option("--complex-output", options.output,
                "with complex input: magnitude (default), real (the denoised\n"
                "real part, phase removed) or complex (complex64, phase put back)")
    ->check(CLI::IsMember({ "magnitude", "real", "complex" }));
  app
    .add_option("--phase-filter", options.phaseFilter,
                "Gaussian sigma in voxels of the phase estimate along x, y, z\n"
                "(default 2,2,0: in plane)")
    ->type_name("SX,SY,SZ")
    ->delimiter(',')
    ->expected(3)
    ->check(CLI::Range(0.0, 64.0));
  auto * volumes = app.add_option("--noise-volumes", options.noiseVolumes,
                                  "the last K volumes hold noise only (no RF): sigma comes\n"
                                  "from them and they are left out of OUTPUT")
                     ->type_name("K")
                     ->check(CLI::Range(1u, 65535u));
  app.add_option("--noise-scan", options.noiseScan, "a noise-only series (magnitude or complex): sigma from it")
    ->type_name("FILE")
    ->excludes(volumes);
  app
    .add_option("--gfactor", options.gfactor,
                "a g-factor map (3D, the series' grid, > 0 everywhere): the\n"
                "series is divided by it before the low-rank step and\n"
                "multiplied back after, as NORDIC does; the noise volumes or\n"
                "scan are divided by it too (--noise-sigma is then sigma where\n"
                "g = 1), and the noise map is sigma x g\n"
                "(docs/denoising-options.md)")
    ->type_name("FILE");
  const std::string percentile = std::to_string(static_cast<int>(svdlr::kGFactorEstimateReferencePercentile));
  app.add_flag("--estimate-gfactor", options.estimateGFactor,
               "estimate the g-factor map from the series, as NORDIC does\n"
               "without one: a first MP-PCA pass gives sigma per voxel,\n"
               "smoothed and divided by --noise-sigma S (the sigma where\n"
               "g = 1) or, without it, by its " + percentile + "th percentile in the mask;\n"
               "then as --gfactor with that map (--gfactor-out writes it):\n"
               "with --policy nordic --noise-sigma S it gave 99 % of the\n"
               "true map's gain (+1.7 dB at b=0 SNR 5) on the benchmark.\n"
               "Not with --gfactor, --known-sigma-map, --noise-volumes,\n"
               "--noise-scan, --vst, --noise-floor, --sigma-floor-correction\n"
               "or --batch (exit 2; docs/denoising-options.md)");
  app
    .add_option("--coils", options.coils,
                "coils combined by root-sum-of-squares in a magnitude series or\n"
                "noise scan (default 1: Rician; adaptive or SENSE combination\n"
                "is 1 too)")
    ->type_name("N")
    ->check(CLI::Range(1u, svdlr::kMaximumCoils));
  app.add_flag("--vst", options.vst,
               "magnitude INPUT: variance-stabilise it for the Rician (or\n"
               "non-central chi, --coils) noise before the low-rank step and\n"
               "invert exactly after (Foi 2011); sigma from --noise-sigma,\n"
               "--known-sigma-map, --noise-volumes, --noise-scan or a first\n"
               "MP-PCA pass (docs/denoising-options.md)");
  app.add_flag("--noise-floor", options.noiseFloor,
               "magnitude INPUT: output the signal with the noise floor\n"
               "removed (the expected magnitude inverted), not the magnitude");
  app.add_flag("--no-magnitude-model", options.noMagnitudeModel,
               "magnitude INPUT: denoise it as it is, noise taken as\n"
               "Gaussian, the floor kept (dwidenoise's model and --preset\n"
               "dwidenoise's). Without it, a magnitude series whose sigma is\n"
               "estimated gets --vst --noise-floor (docs/denoising.md,\n"
               "\"Magnitude data\"); a known sigma, a g-factor map, a fixed\n"
               "rank or complex INPUT get no model unless asked");
  app.add_flag("--sigma-floor-correction", options.sigmaFloorCorrection,
               "magnitude INPUT: correct the sigma estimated on it (the\n"
               "noise map, and the sigma --noise-floor uses) for the Rician\n"
               "(non-central chi, --coils) floor's smaller spread; not with\n"
               "a known sigma or --vst (docs/denoising-options.md)");
}

svdlr::MagnitudeNoiseOptions
MagnitudeNoiseModel(const ComplexInputOptions & options)
{
  svdlr::MagnitudeNoiseOptions model;
  model.stabilise = options.vst;
  model.noiseFloor = options.noiseFloor;
  model.sigmaFloorCorrection = options.sigmaFloorCorrection;
  model.coils = options.coils;
  return model;
}

const char *
FirstMagnitudeOption(const ComplexInputOptions & options)
{
  return options.vst ? "--vst" : options.noiseFloor ? "--noise-floor" : "--sigma-floor-correction";
}

void
CheckComplexInputOptions(const ComplexInputOptions & options, bool knownSigma, bool policyEstimatesSigma)
{
  const bool magnitudeModel = MagnitudeNoiseModel(options).Active();
  if (magnitudeModel && options.noMagnitudeModel)
  {
    throw UsageError(std::string(FirstMagnitudeOption(options)) + " with --no-magnitude-model: give one");
  }
  if (magnitudeModel && (!options.phase.empty() || !options.imaginary.empty()))
  {
    throw UsageError(std::string(FirstMagnitudeOption(options)) +
                     " is for a magnitude series: with --phase or --imaginary the phase is removed and the real "
                     "part's noise is already Gaussian, without a floor");
  }
  const std::string floorProblem = svdlr::SigmaFloorCorrectionProblem(
    MagnitudeNoiseModel(options), knownSigma || options.noiseVolumes > 0 || !options.noiseScan.empty());
  if (!floorProblem.empty())
  {
    throw UsageError("--sigma-floor-correction: " + floorProblem);
  }
  if (magnitudeModel && !knownSigma && options.noiseVolumes == 0 && options.noiseScan.empty() &&
      !policyEstimatesSigma)
  {
    throw UsageError(std::string(FirstMagnitudeOption(options)) +
                     " needs sigma: give --noise-sigma S, --known-sigma-map FILE, --noise-volumes K or --noise-scan "
                     "FILE, or keep a rank policy that estimates it (the default does)");
  }
  if ((options.noiseVolumes > 0 || !options.noiseScan.empty()) && knownSigma)
  {
    throw UsageError("give sigma once: --noise-volumes or --noise-scan, or --noise-sigma or --known-sigma-map");
  }
  if (!options.gfactor.empty() && magnitudeModel)
  {
    throw UsageError(std::string(FirstMagnitudeOption(options)) + " with --gfactor is not supported yet");
  }
  if (options.estimateGFactor)
  {
    const std::string problem = svdlr::GFactorEstimateProblem(!options.gfactor.empty(), magnitudeModel);
    if (!problem.empty())
    {
      throw UsageError("--estimate-gfactor: " + problem);
    }
    if (options.noiseVolumes > 0 || !options.noiseScan.empty())
    {
      throw UsageError("--estimate-gfactor with --noise-volumes or --noise-scan is not supported yet: sigma from "
                       "them would have to be divided by the estimate, which comes later; their sigma map follows "
                       "g already (or give the scanner's map with --gfactor)");
    }
  }
}

bool
ComplexInputRequested(const ComplexInputOptions & options, itk::IOPixelEnum inputPixel)
{
  return inputPixel == itk::IOPixelEnum::COMPLEX || !options.phase.empty() || options.phaseUnits != "auto" ||
         !options.imaginary.empty() ||
         options.noiseVolumes > 0 || !options.noiseScan.empty() || options.output != "magnitude";
}

std::vector<std::string>
ComplexInputFiles(const ComplexInputOptions & options)
{
  return NonEmptyPaths({ options.phase, options.imaginary, options.noiseScan });
}

} // namespace svdlr_tools
