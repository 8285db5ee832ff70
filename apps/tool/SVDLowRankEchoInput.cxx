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
// SVDLowRankDenoiseSeries's demeaning and multi-echo input (SVDLowRankEchoInput.h).
#include "SVDLowRankEchoInput.h"

#include "SVDLowRankCommonOptions.h"
#include "SVDLowRankExitCodes.h"
#include "SVDLowRankGradientTable.h"
#include "SVDLowRankImageFileCheck.h"
#include "SVDLowRankNiftiFormat.h"
#include "SVDLowRankNiftiWrite.h"
#include "SVDLowRankOutputType.h"
#include "SVDLowRankUpFrontChecks.h"

#include "CLI/CLI.hpp"
#include "itkMetaDataObject.h"
#include "svdlr/Engine.h"
#include "svdlr/VolumeGroups.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace svdlr_tools
{

namespace
{

/** Echo e + 1's input file: INPUT for the first, then the --echo files in order. */
const std::string &
EchoInput(const std::string & input, const MultiEchoOptions & options, std::size_t echo)
{
  return echo == 0 ? input : options.echoes[echo - 1];
}

/** Whether two echoes' voxel grids agree in size, spacing, origin and direction (to 1e-4 of a voxel or a cosine). */
std::string
GeometryDifference(const SeriesImage & first, const SeriesImage & other)
{
  const auto & a = first.GetLargestPossibleRegion().GetSize();
  const auto & b = other.GetLargestPossibleRegion().GetSize();
  std::ostringstream difference;
  if (a != b)
  {
    difference << "size " << b[0] << " x " << b[1] << " x " << b[2] << " x " << b[3] << " against " << a[0] << " x "
               << a[1] << " x " << a[2] << " x " << a[3];
    return difference.str();
  }
  for (unsigned int i = 0; i < 3; ++i)
  {
    const double tolerance = 1e-4 * first.GetSpacing()[i];
    if (std::abs(first.GetSpacing()[i] - other.GetSpacing()[i]) > tolerance)
    {
      difference << "spacing along axis " << i << " " << other.GetSpacing()[i] << " against " << first.GetSpacing()[i];
      return difference.str();
    }
    if (std::abs(first.GetOrigin()[i] - other.GetOrigin()[i]) > tolerance)
    {
      difference << "origin along axis " << i << " " << other.GetOrigin()[i] << " against " << first.GetOrigin()[i];
      return difference.str();
    }
    for (unsigned int j = 0; j < 3; ++j)
    {
      if (std::abs(first.GetDirection()[i][j] - other.GetDirection()[i][j]) > 1e-4)
      {
        difference << "direction cosine (" << i << ", " << j << ") " << other.GetDirection()[i][j] << " against "
                   << first.GetDirection()[i][j];
        return difference.str();
      }
    }
  }
  return {};
}

/** A 4D series viewing the pixels of a 5D image (x, y, z, t, echo) as x, y, z and t + T * echo. */
SeriesImage::Pointer
StackOfFiveD(const FiveDImage & image)
{
  const auto &           size = image.GetLargestPossibleRegion().GetSize();
  SeriesImage::SizeType  stacked{ { size[0], size[1], size[2], size[3] * size[4] } };
  auto                   series = SeriesImage::New();
  SeriesImage::SpacingType   spacing;
  SeriesImage::PointType     origin;
  SeriesImage::DirectionType direction;
  for (unsigned int i = 0; i < 4; ++i)
  {
    spacing[i] = image.GetSpacing()[i];
    origin[i] = image.GetOrigin()[i];
    for (unsigned int j = 0; j < 4; ++j)
    {
      direction[i][j] = image.GetDirection()[i][j];
    }
  }
  series->SetRegions(stacked);
  series->SetSpacing(spacing);
  series->SetOrigin(origin);
  series->SetDirection(direction);
  series->SetPixelContainer(const_cast<FiveDImage &>(image).GetPixelContainer()); // the same pixels, not a copy
  return series;
}

/** The b-values file for INPUT: --bval, else INPUT with its .nii/.nii.gz (or other) extension replaced by .bval. */
std::string
BValuePathFor(const std::string & input, const MultiEchoOptions & options)
{
  return options.bval.empty() ? svdlr_io::SeriesStem(input) + ".bval" : options.bval;
}

/** The b-values of an FSL/BIDS .bval file (numbers separated by white space). Throws InputError. */
std::vector<double>
ReadBValues(const std::string & path)
{
  try
  {
    return svdlr_io::ReadBValues(path);
  }
  catch (const svdlr_io::BadGradientTable & error)
  {
    std::ifstream file(path);
    throw InputError(std::string(error.what()) + (file ? "" : " (--demean shells needs them: give --bval FILE)"));
  }
}

} // namespace

void
AddMultiEchoOptions(CLI::App & app, MultiEchoOptions & options)
{
  app
    .add_option("--demean", options.demean,
                "subtract each voxel's mean over groups of volumes before the\n"
                "low-rank step and add it back after: none (default), all,\n"
                "shells (by b-value: --bval, or INPUT's .bval beside it) or\n"
                "echoes (per echo of a multi-echo series); dwidenoise2's -demean")
    ->check(CLI::IsMember(svdlr::DemeanNameList()));
  app.add_option("--bval", options.bval, "the b-values of INPUT (FSL/BIDS .bval) for --demean shells")
    ->type_name("FILE");
  OneValuePerUse(app.add_option("--echo", options.echoes,
                                "a further echo of a multi-echo series (repeat, in echo order;\n"
                                "INPUT is the first): all echoes are denoised jointly. A 5D\n"
                                "INPUT (x, y, z, t, echo) needs none"))
    ->type_name("FILE");
  OneValuePerUse(app.add_option("--echo-output", options.echoOutputs, "the output of each --echo, in the same order"))
    ->type_name("FILE");
}

void
CheckMultiEchoOptions(const MultiEchoOptions & options, bool batch, bool complexInput)
{
  if (options.echoOutputs.size() != options.echoes.size())
  {
    throw UsageError("give one --echo-output per --echo: " + std::to_string(options.echoes.size()) + " --echo, " +
                     std::to_string(options.echoOutputs.size()) + " --echo-output");
  }
  if (!options.bval.empty() && options.demean != svdlr::DemeanName(svdlr::Demean::Shells))
  {
    throw UsageError("--bval goes with --demean shells");
  }
  if (!options.bval.empty() && batch)
  {
    throw UsageError("--bval names one series' b-values: in batch mode each series' .bval beside it is read");
  }
  if (!options.echoes.empty() && batch)
  {
    throw UsageError("--echo takes one series, not --batch (a 5D series in a batch is denoised as one)");
  }
  if (!options.echoes.empty() && complexInput)
  {
    throw UsageError("--echo takes magnitude echoes; the complex options take one series");
  }
}

void
CheckGradientTableUpFront(const std::string & input, const MultiEchoOptions & options, std::size_t volumesPerEcho)
{
  svdlr_io::GradientTableFiles files = svdlr_io::GradientTableBeside(input);
  if (!options.bval.empty())
  {
    files.bval = options.bval;
  }
  try
  {
    svdlr_io::CheckGradientTable(files, volumesPerEcho, input);
  }
  catch (const svdlr_io::BadGradientTable & error)
  {
    throw InputError(error.what());
  }
}

bool
MultiEchoRequested(const MultiEchoOptions & options, unsigned int dimension)
{
  return !options.echoes.empty() || dimension > 4;
}

void
CheckNotSingleEchoFiveD(const itk::ImageIOBase & io, const std::string & path)
{
  std::string dimensions, fifth; // none for a reader other than NIfTI's
  const auto & header = io.GetMetaDataDictionary();
  if (itk::ExposeMetaData(header, "dim[0]", dimensions) && itk::ExposeMetaData(header, "dim[5]", fifth) &&
      std::atoi(dimensions.c_str()) >= 5 && std::atoi(fifth.c_str()) == 1)
  {
    throw InputError("'" + path + "' is a 5D image of 1 echo: a multi-echo series needs at least 2 along its fifth "
                     "axis (a single echo is a 4D series)");
  }
}

bool
CheckEchoFilesUpFront(const MultiEchoOptions & options)
{
  bool scanned = true;
  for (const std::string & echo : options.echoes)
  {
    scanned = CheckInputFileUpFront(echo, "echo", true) && scanned;
  }
  return scanned;
}

EchoStack
ReadEchoStack(const std::string & input, const MultiEchoOptions & options)
{
  EchoStack stack;
  if (options.echoes.empty())
  {
    stack.fiveD = ReadInputImage<FiveDImage>(input, "series");
    const auto & size = stack.fiveD->GetLargestPossibleRegion().GetSize();
    if (size[4] < 2)
    {
      throw InputError("'" + input + "' is a 5D image of " + std::to_string(size[4]) +
                       " echo: a multi-echo series needs at least 2 along its fifth axis");
    }
    stack.series = StackOfFiveD(*stack.fiveD);
    stack.echoes = size[4];
    stack.volumesPerEcho = size[3];
    stack.description = "5D, " + std::to_string(size[4]) + " echoes of " + std::to_string(size[3]) + " volumes";
    return stack;
  }
  std::vector<SeriesImage::Pointer> echoes;
  for (std::size_t e = 0; e <= options.echoes.size(); ++e)
  {
    const std::string & path = EchoInput(input, options, e);
    echoes.push_back(ReadInputImage<SeriesImage>(path, "echo"));
    const std::string difference = GeometryDifference(*echoes.front(), *echoes.back());
    if (!difference.empty())
    {
      throw InputError("echo " + std::to_string(e + 1) + " '" + path + "' does not match echo 1 '" + input +
                       "': " + difference + " (every echo must have the same voxel grid, geometry and volumes)");
    }
  }
  const auto &      size = echoes.front()->GetLargestPossibleRegion().GetSize();
  const std::size_t volume = size[0] * size[1] * size[2];
  stack.echoes = echoes.size();
  stack.volumesPerEcho = size[3];
  stack.series = SeriesImage::New();
  stack.series->CopyInformation(echoes.front());
  stack.series->SetRegions(SeriesImage::SizeType{ { size[0], size[1], size[2], size[3] * stack.echoes } });
  stack.series->Allocate();
  for (std::size_t e = 0; e < stack.echoes; ++e)
  {
    const float * from = echoes[e]->GetBufferPointer();
    std::copy(from, from + volume * size[3], stack.series->GetBufferPointer() + e * volume * size[3]);
  }
  stack.description = std::to_string(stack.echoes) + " echo files of " + std::to_string(size[3]) + " volumes";
  return stack;
}

std::vector<std::uint32_t>
VolumeGroupsFor(const MultiEchoOptions & options, const std::string & input, std::size_t volumes, std::size_t echoes)
{
  svdlr::Demean demean = svdlr::kDefaultDemean;
  svdlr::ParseDemeanName(options.demean, demean); // a known name: IsMember checked it
  std::vector<double> bvalues;
  if (demean == svdlr::Demean::Shells)
  {
    const std::string   path = BValuePathFor(input, options);
    std::vector<double> perEcho = ReadBValues(path);
    if (perEcho.size() != volumes / echoes)
    {
      throw InputError("the b-values '" + path + "' hold " + std::to_string(perEcho.size()) + " values for " +
                       std::to_string(volumes / echoes) + " volumes" + (echoes > 1 ? " per echo" : ""));
    }
    for (std::size_t e = 0; e < echoes; ++e)
    {
      bvalues.insert(bvalues.end(), perEcho.begin(), perEcho.end());
    }
  }
  if (demean == svdlr::Demean::Echoes && echoes < 2)
  {
    throw InputError("--demean echoes needs a multi-echo series: '" + input +
                     "' is one echo (give a 5D series or --echo FILE per further echo)");
  }
  try
  {
    return svdlr::DemeanGroups(demean, volumes, echoes, bvalues);
  }
  catch (const svdlr::Error & error)
  {
    throw InputError(error.what());
  }
}

void
WriteEchoStack(const EchoStack & stack, const SeriesImage * denoised, const std::string & output,
               const std::vector<std::string> & echoTemporaries, const std::string & input,
               const MultiEchoOptions & options, itk::IOComponentEnum component)
{
  if (stack.fiveD)
  {
    auto image = FiveDImage::New();
    image->CopyInformation(stack.fiveD);
    image->SetRegions(stack.fiveD->GetLargestPossibleRegion());
    image->SetPixelContainer(const_cast<SeriesImage *>(denoised)->GetPixelContainer());
    svdlr_io::ImageWriteSettings settings;
    settings.niftiFields = svdlr_io::ReadNiftiHeaderFields(input);
    WriteInComponentType(image.GetPointer(), output, component, settings);
    return;
  }
  for (std::size_t e = 0; e < stack.echoes; ++e)
  {
    svdlr_io::ImageWriteSettings settings;
    settings.niftiFields = svdlr_io::ReadNiftiHeaderFields(EchoInput(input, options, e));
    const auto echo = VolumesOf(*denoised, e * stack.volumesPerEcho, stack.volumesPerEcho);
    WriteInComponentType(echo.GetPointer(), e == 0 ? output : echoTemporaries[e - 1], component, settings);
  }
}

} // namespace svdlr_tools
