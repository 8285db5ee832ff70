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
#ifndef SVDLowRankEchoInput_h
#define SVDLowRankEchoInput_h

// SVDLowRankDenoiseSeries's demeaning and multi-echo input: --demean (svdlr::Demean), --bval for demeaning by
// shells, and a multi-echo series given as one 5D NIfTI (x, y, z, t, echo) or as INPUT plus --echo FILE per further
// echo. The echoes are denoised jointly: stacked echo after echo on the series axis (the order of a 5D image's
// buffer), one Casorati matrix per patch holding every echo's volumes; the output takes the input's shape (a 5D file,
// or OUTPUT plus --echo-output FILE per echo). The rule of the groups is the engine's (svdlr/VolumeGroups.h).

#include "SVDLowRankComplexInput.h"

#include "itkImage.h"
#include "itkImageIOBase.h"
#include "svdlr/DenoiseChoices.h"
#include "svdlr/Defaults.h"

#include <cstddef>
#include <cstdint>
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

struct MultiEchoOptions
{
  std::string              demean{ svdlr::DemeanName(svdlr::kDefaultDemean) }; // --demean
  std::string              bval;        // --bval: b-values for --demean shells; "": INPUT's .bval beside it
  std::vector<std::string> echoes;      // --echo FILE: the second, third... echo (INPUT is the first)
  std::vector<std::string> echoOutputs; // --echo-output FILE: their outputs, in the same order
};

/** Adds the options above to the denoiser's command line. */
void
AddMultiEchoOptions(CLI::App & app, MultiEchoOptions & options);

/** Rules that need only the command line (UsageError): one --echo-output per --echo, --bval only with --demean
 * shells, no --echo in batch mode or with complex input. */
void
CheckMultiEchoOptions(const MultiEchoOptions & options, bool batch, bool complexInput);

/** The series' gradient table (--bval, else INPUT's .bval, and INPUT's .bvec, where they exist) holds one entry per
 * volume of each echo (svdlr_io::CheckGradientTable), checked once the header is read, before any work: a .bval of 3
 * values for 25 volumes is an InputError naming the file and both counts, whether or not --demean reads it. */
void
CheckGradientTableUpFront(const std::string & input, const MultiEchoOptions & options, std::size_t volumesPerEcho);

using FiveDImage = itk::Image<float, 5>;

/** A series of one or more echoes stacked on the series axis: volume e * volumesPerEcho + t is echo e's volume t. */
struct EchoStack
{
  SeriesImage::Pointer series;
  std::size_t          echoes{ 1 };
  std::size_t          volumesPerEcho{ 0 };
  FiveDImage::Pointer  fiveD;   // INPUT's 5D geometry, when INPUT was a 5D image (its pixels are `series`' own)
  std::string          description; // for the summary
};

/** Whether the run takes the multi-echo path: --echo given, or INPUT `dimension`al with more than 4 dimensions. */
bool
MultiEchoRequested(const MultiEchoOptions & options, unsigned int dimension);

/** InputError when `path` is a NIfTI file whose header (read by `io`, ITK's NIfTI reader, which records the
 * header's dim[] in its metadata) says 5 or more dimensions but 1 along the fifth: ITK reads it as 4D, and a series
 * meant as multi-echo would be denoised as one echo without a word. */
void
CheckNotSingleEchoFiveD(const itk::ImageIOBase & io, const std::string & path);

/** The --echo files' up-front checks (CheckInputFileUpFront: complete, and no NaN or Inf, named by file, voxel and
 * volume). Returns whether every value of every echo was scanned. Throws InputError. */
bool
CheckEchoFilesUpFront(const MultiEchoOptions & options);

/** Reads INPUT (5D, or 4D with --echo files) into one stack. InputError: a 5D image of one echo, echoes whose
 * grids, volume counts or geometry differ (named), a file that cannot be read. */
EchoStack
ReadEchoStack(const std::string & input, const MultiEchoOptions & options);

/** The engine's volume groups for --demean on a series of `volumes` volumes in `echoes` echoes (empty for none).
 * InputError for a choice the series cannot take (echoes of a single-echo series, a .bval that is missing or
 * whose count differs from the volumes per echo; each echo of a multi-echo DWI has the same b-values). */
std::vector<std::uint32_t>
VolumeGroupsFor(const MultiEchoOptions & options, const std::string & input, std::size_t volumes, std::size_t echoes);

/** Writes the denoised stack in the input's shape: a 5D file at `output` (INPUT was 5D), or echo 1 at `output` and
 * echo e + 1 at temporaries[e], each with its own input's NIfTI header fields. */
void
WriteEchoStack(const EchoStack & stack, const SeriesImage * denoised, const std::string & output,
               const std::vector<std::string> & echoTemporaries, const std::string & input,
               const MultiEchoOptions & options, itk::IOComponentEnum component);

} // namespace svdlr_tools

#endif
