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
#ifndef SVDLowRankComplexInput_h
#define SVDLowRankComplexInput_h

// SVDLowRankDenoiseSeries's complex and noise-scan inputs: magnitude + phase (--phase), real + imaginary
// (--imaginary), a complex NIfTI (complex64), noise-only volumes at the end of the series (--noise-volumes) or a
// separate noise scan (--noise-scan). This file parses those options, reads the images, demodulates the phase
// (svdlr::DemodulatePhase) and estimates sigma from the noise (svdlr::EstimateNoiseFromScan); the tool then denoises
// the series prepared here as any other, with that sigma as a known sigma, and writes the output through
// PreparedSeries::Write (magnitude, real or complex).

#include "SVDLowRankProvenance.h"
#include "itkImage.h"
#include "itkImageIOBase.h"
#include "svdlr/Defaults.h"
#include "svdlr/LocalDenoise.h"

#include <array>
#include <string>
#include <vector>

namespace CLI
{
class App;
}
namespace svdlr_io
{
struct ImageWriteSettings;
}

namespace svdlr_tools
{

struct ComplexInputOptions
{
  std::string           phase;              // --phase: the phase of a magnitude INPUT
  std::string           phaseUnits{ "auto" }; // --phase-units: auto, radians, degrees, siemens, siemens-unsigned
  std::string           imaginary;          // --imaginary: the imaginary part of a real INPUT
  std::string           output{ "magnitude" }; // --complex-output: magnitude, real or complex
  std::array<double, 3> phaseFilter{ { 2.0, 2.0, 0.0 } }; // --phase-filter: Gaussian sigma in voxels, x, y, z
  unsigned              noiseVolumes{ 0 };  // --noise-volumes: the last K volumes hold noise only
  std::string           noiseScan;          // --noise-scan: a separate noise-only series
  std::string           gfactor;            // --gfactor: a g-factor map; the series (and noise) divided by it
  bool estimateGFactor{ svdlr::kDefaultEstimateGFactor }; // --estimate-gfactor: the map estimated from the series
  unsigned              coils{ svdlr::kDefaultCoils }; // --coils: coils combined by root-sum-of-squares
  bool                  vst{ false };        // --vst: variance-stabilise a magnitude series (non-central chi)
  bool                  noiseFloor{ false }; // --noise-floor: output the signal without the magnitude's noise floor
  bool                  sigmaFloorCorrection{ false }; // --sigma-floor-correction: the magnitude's sigma map corrected
  bool                  noMagnitudeModel{ false }; // --no-magnitude-model: the automatic model off
  /** The automatic magnitude model for a magnitude INPUT (svdlr::MagnitudeNoiseOptions::automatic): the preset's
   * (kDefaultAutomaticMagnitudeModel without one) unless --no-magnitude-model; set by the command-line checks. */
  bool                  automaticMagnitudeModel{ svdlr::kDefaultAutomaticMagnitudeModel };
};

/** Adds the options above to the denoiser's command line. */
void
AddComplexInputOptions(CLI::App & app, ComplexInputOptions & options);

/** Rules that need only the command line; UsageError. `knownSigma`: --noise-sigma or --known-sigma-map given;
 * `policyEstimatesSigma`: the rank policy estimates sigma (--vst, --noise-floor and --sigma-floor-correction need
 * sigma from somewhere; --sigma-floor-correction one the policy estimates, svdlr::SigmaFloorCorrectionProblem). */
void
CheckComplexInputOptions(const ComplexInputOptions & options, bool knownSigma, bool policyEstimatesSigma);

/** The --vst, --noise-floor, --sigma-floor-correction and --coils model for the engine (automatic off: the series
 * sets it, knowing whether it is a magnitude). */
svdlr::MagnitudeNoiseOptions
MagnitudeNoiseModel(const ComplexInputOptions & options);

/** The first magnitude option given, for messages: "--vst", "--noise-floor" or "--sigma-floor-correction". */
const char *
FirstMagnitudeOption(const ComplexInputOptions & options);

/** Whether the run takes the complex or noise-scan path (any of the options above, or a complex input file). */
bool
ComplexInputRequested(const ComplexInputOptions & options, itk::IOPixelEnum inputPixel);

/** The input files the options name (for the provenance and the up-front checks). */
std::vector<std::string>
ComplexInputFiles(const ComplexInputOptions & options);

using SeriesImage = itk::Image<float, 4>;
using SigmaMapImage = itk::Image<float, 3>;

/** The series the denoiser gets, the sigma it should take as known, and how its output is written. */
struct PreparedSeries
{
  SeriesImage::Pointer   series;  // the demodulated real part, or the magnitude; noise volumes dropped
  SigmaMapImage::Pointer sigma;   // from the noise volumes or scan; null when there is none
  SeriesImage::Pointer   phase;   // the smooth phase removed, kept for --complex-output complex only; else null
  bool                   demodulated{ false }; // series is a demodulated real part (complex input)
  std::string            output{ "magnitude" };
  std::string            description; // for the summary: what was read and done
  Json                   provenance = Json::object(); // parameters for the sidecar, by name

  /** Writes the denoised series: |real| (magnitude), the real part, or real x e^{i phase} as complex64, through
   * svdlr_io::WriteImageFile with `settings` (the input's NIfTI header fields). */
  void
  Write(const SeriesImage *                  denoised,
        const std::string &                  path,
        itk::IOComponentEnum                 component,
        const svdlr_io::ImageWriteSettings & settings) const;
};

/** Volumes first .. first + count - 1 of `series`, as a 4D image with its geometry. */
SeriesImage::Pointer
VolumesOf(const SeriesImage & series, std::size_t first, std::size_t count);

/** A 3D input `what` (a mask, a noise or g-factor map) at `path` must lie on the series' voxel grid `grid`. Throws
 * InputError (exit 3). */
void
CheckGrid(const itk::ImageBase<3> & map, const std::array<std::size_t, 3> & grid, const std::string & path,
          const char * what);

/** The --gfactor map on the series' grid `grid`, checked (InputError, exit 3: another grid, or a voxel that is not
 * finite and > 0, svdlr::GFactorMapProblem); null when no map was given. */
SigmaMapImage::Pointer
ReadGFactorMap(const std::string & path, const std::array<std::size_t, 3> & grid);

/** Images already read (a DICOM INPUT and its phase, SVDLowRankDicomComplexInput.h) that PrepareComplexSeries takes
 * instead of reading INPUT and --phase. */
struct GivenSeries
{
  SeriesImage::Pointer series;    // INPUT's series (it becomes the real part: taken over)
  SeriesImage::Pointer phase;     // null: --phase, if given, is read from its file
  std::string          phaseName; // how messages name the phase
};

/** Reads INPUT and the files the options name (or takes `given`), checks them (InputError: wrong grid or volume
 * count, phase out of range, NaN), and prepares the series. */
PreparedSeries
PrepareComplexSeries(const std::string &         input,
                     itk::IOPixelEnum            inputPixel,
                     const ComplexInputOptions & options,
                     const GivenSeries &         given = {});

} // namespace svdlr_tools

#endif
