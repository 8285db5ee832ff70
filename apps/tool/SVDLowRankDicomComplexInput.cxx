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
#include "SVDLowRankDicomComplexInput.h"

#include "SVDLowRankExitCodes.h"
#include "SVDLowRankReadableFile.h"
#include "SVDLowRankUpFrontChecks.h"
#ifdef SVDLR_HAVE_DCMTK
#  include "SVDLowRankDicomComplexPairs.h"
#endif

#include <filesystem>
#include <iostream>

namespace svdlr_tools
{
namespace
{
namespace fs = std::filesystem;

#ifdef SVDLR_HAVE_DCMTK
/** The series found in `path`, the files left out named on stderr as the search notes them. */
std::vector<svdlr_io::DicomSeriesSummary>
FindSeries(const std::string & path)
{
  svdlr_io::SilenceDicomWarnings();
  svdlr_io::DicomSearchNotes notes;
  auto                       found = svdlr_io::FindDicomSeries({ path }, &notes);
  for (const std::string & file : notes.leftOut)
  {
    std::cerr << "SVDLowRankDenoiseSeries: note: left out " << file << "\n";
  }
  return found;
}

/** `--phase-units auto` tells Siemens' scale (-4096..4094 after its rescale) from radians by the phase's range alone;
 * another vendor's rescaled phase can fall in that range in other units (Philips' often -3142..3142 milliradians), so
 * a DICOM phase that is not Siemens' needs its unit named. InputError. */
void
CheckDicomPhaseUnits(const svdlr_io::DicomSeriesSummary & phase, const std::string & phaseUnits)
{
  if (phaseUnits == "auto" && svdlr_io::LowerCase(phase.manufacturer).find("siemens") == std::string::npos)
  {
    throw InputError("the phase " + svdlr_io::DescribeSeriesBriefly(phase) + " was written by '" + phase.manufacturer +
                     "': --phase-units auto reads only Siemens' DICOM phase (or radians) by its range; name its unit "
                     "(--phase-units radians, degrees, siemens or siemens-unsigned), or convert it to radians and "
                     "give it as --phase FILE");
  }
}
#endif

} // namespace

bool
IsDicomInput(const std::string & path)
{
  std::error_code error;
#ifdef SVDLR_HAVE_DCMTK
  return fs::is_directory(path, error) || svdlr_io::HasDicomPreamble(path);
#else
  return fs::is_directory(path, error); // a DICOM file without DCMTK fails as an image file ITK cannot read
#endif
}

#ifdef SVDLR_HAVE_DCMTK
DicomSeriesInput
ReadDicomSeriesInput(const std::string & input, const std::string & phasePath, const std::string & phaseUnits)
{
  try
  {
    const auto                        found = FindSeries(input);
    const svdlr_io::DicomSeriesSummary * magnitude = nullptr;
    const svdlr_io::DicomSeriesSummary * pairedPhase = nullptr;
    if (phasePath.empty())
    {
      const auto pairing = svdlr_io::PairMagnitudeAndPhase(found);
      magnitude = pairing.magnitude;
      pairedPhase = pairing.phase;
    }
    else
    {
      magnitude = &svdlr_io::SelectDicomSeries(found, ""); // one series; --phase names the phase
      if (svdlr_io::SeriesComplexPart(*magnitude) == svdlr_io::DicomComplexPart::Phase)
      {
        throw svdlr_io::DicomError("'" + input + "' is a phase series (" + svdlr_io::DescribeSeriesBriefly(*magnitude) +
                                   "): INPUT is the magnitude, --phase its phase");
      }
    }
    const auto        series = svdlr_io::ReadDicomSeries4D(*magnitude);
    DicomSeriesInput  result;
    result.series = series.image;
    result.volumeNames = series.names;
    result.description = input + " (DICOM series \"" + magnitude->seriesDescription + "\", " +
                         std::to_string(series.names.size()) + " volumes by " + series.by + ")";
    if (pairedPhase != nullptr)
    {
      CheckDicomPhaseUnits(*pairedPhase, phaseUnits);
      const auto phase = svdlr_io::ReadDicomSeries4D(*pairedPhase);
      svdlr_io::CheckDicomPhasePartner(series, *magnitude, phase, *pairedPhase);
      result.phase = phase.image;
      result.phaseName = svdlr_io::DescribeSeriesBriefly(*pairedPhase);
      result.pairing = "paired:   magnitude " + svdlr_io::DescribeSeriesBriefly(*magnitude) + " with phase " +
                       result.phaseName;
    }
    else if (!phasePath.empty() && IsDicomInput(phasePath))
    {
      const auto   phaseFound = FindSeries(phasePath);
      const auto & phaseSeries = svdlr_io::SelectPhaseSeries(phaseFound, phasePath);
      CheckDicomPhaseUnits(phaseSeries, phaseUnits);
      const auto   phase = svdlr_io::ReadDicomSeries4D(phaseSeries);
      svdlr_io::CheckDicomPhasePartner(series, *magnitude, phase, phaseSeries);
      result.phase = phase.image;
      result.phaseName = phasePath;
    }
    else if (!phasePath.empty())
    {
      result.phase = ReadPhaseInput(phasePath, phaseUnits); // an image file
      result.phaseName = phasePath;
    }
    return result;
  }
  catch (const svdlr_io::DicomError & error)
  {
    throw InputError(error.what());
  }
}

SeriesImage::Pointer
ReadPhaseInput(const std::string & path, const std::string & phaseUnits)
{
  if (!IsDicomInput(path))
  {
    return ReadInputImage<SeriesImage>(path, "phase");
  }
  try
  {
    const auto   found = FindSeries(path);
    const auto & phase = svdlr_io::SelectPhaseSeries(found, path);
    CheckDicomPhaseUnits(phase, phaseUnits);
    return svdlr_io::ReadDicomSeries4D(phase).image;
  }
  catch (const svdlr_io::DicomError & error)
  {
    throw InputError(error.what());
  }
}
#else
DicomSeriesInput
ReadDicomSeriesInput(const std::string & input, const std::string &, const std::string &)
{
  throw InputError("'" + input + "' is a DICOM input: this build has no DICOM support (DCMTK was not found)");
}

SeriesImage::Pointer
ReadPhaseInput(const std::string & path, const std::string &)
{
  if (IsDicomInput(path))
  {
    throw InputError("the phase '" + path + "' is DICOM: this build has no DICOM support (DCMTK was not found)");
  }
  return ReadInputImage<SeriesImage>(path, "phase");
}
#endif

} // namespace svdlr_tools
