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
#include "SVDLowRankDicomComplexPairs.h"
#include "SVDLowRankDicomTags.h"

#include <algorithm>

#include <sstream>

namespace svdlr_io
{
namespace
{

struct PartName
{
  DicomComplexPart part;
  const char *     letter; // ImageType's short form (Siemens value 3, Philips value 4)
  const char *     word;   // ComplexImageComponent's defined term, also found in ImageType
  const char *     name;   // in messages
};
constexpr PartName kPartNames[] = { { DicomComplexPart::Magnitude, "M", "MAGNITUDE", "magnitude" },
                                    { DicomComplexPart::Phase, "P", "PHASE", "phase" },
                                    { DicomComplexPart::Real, "R", "REAL", "real" },
                                    { DicomComplexPart::Imaginary, "I", "IMAGINARY", "imaginary" } };

/** "magnitude", "phase", "real", "imaginary" or "unknown". */
const char *
DicomComplexPartName(DicomComplexPart part)
{
  const auto named = std::find_if(
    std::begin(kPartNames), std::end(kPartNames), [part](const PartName & name) { return name.part == part; });
  return named != std::end(kPartNames) ? named->name : "unknown";
}

/** "echo 1, echo 2" for messages: the first few names. */
std::string
JoinNames(const std::vector<std::string> & names)
{
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < 4; ++i)
  {
    text += (i == 0 ? "" : ", ") + names[i];
  }
  return names.size() > 4 ? text + ", ..." : text;
}

/** Every series and what it holds, one per line, for the pairing errors. */
std::string
SeriesAndParts(const std::vector<DicomSeriesSummary> & series)
{
  std::string text;
  for (const DicomSeriesSummary & s : series)
  {
    std::string parts;
    for (const DicomComplexPart part : s.complexParts)
    {
      parts += (parts.empty() ? "" : " and ") + std::string(DicomComplexPartName(part));
    }
    text += "\n  " + DescribeSeriesBriefly(s) + ": " + (parts.empty() ? "unknown" : parts);
  }
  return text;
}

} // namespace

DicomComplexPart
DicomComplexPartOf(const std::string & imageType, const std::string & complexImageComponent, int geImageType)
{
  for (const PartName & name : kPartNames)
  {
    if (complexImageComponent == name.word)
      return name.part;
  }
  DicomComplexPart found = DicomComplexPart::Unknown;
  std::istringstream values(imageType);
  for (std::string value; std::getline(values, value, '\\');)
  {
    for (const PartName & name : kPartNames)
    {
      if (value == name.letter || value == name.word)
      {
        if (found != DicomComplexPart::Unknown && found != name.part)
          return DicomComplexPart::Unknown; // a type naming two parts says neither
        found = name.part;
      }
    }
  }
  if (found == DicomComplexPart::Unknown && geImageType >= 0 && geImageType < 4)
  {
    found = kPartNames[geImageType].part; // 0 magnitude, 1 phase, 2 real, 3 imaginary
  }
  return found;
}

std::vector<DicomComplexPart>
DicomComplexPartsOfFile(DcmItem * dataset)
{
  const std::string component = GetString(dataset, DCM_ComplexImageComponent);
  if (component != "MIXED")
  {
    Sint16 geImageType = -1; // GE's (0043,102F): another vendor's private block may hold anything there
    if (GetString(dataset, DCM_Manufacturer).rfind("GE", 0) == 0)
    {
      dataset->findAndGetSint16(DcmTagKey(0x0043, 0x102F), geImageType);
    }
    return { DicomComplexPartOf(GetString(dataset, DCM_ImageType), component, geImageType) };
  }
  std::vector<DicomComplexPart> parts;
  for (const DcmTagKey & groups : { DCM_SharedFunctionalGroupsSequence, DCM_PerFrameFunctionalGroupsSequence })
  {
    DcmSequenceOfItems * sequence = nullptr;
    if (dataset->findAndGetSequence(groups, sequence).bad() || sequence == nullptr)
      continue;
    for (unsigned long f = 0; f < sequence->card(); ++f)
    {
      DcmItem * frameType = nullptr;
      if (sequence->getItem(f)->findAndGetSequenceItem(DCM_MRImageFrameTypeSequence, frameType, 0).bad())
        continue;
      const DicomComplexPart part = DicomComplexPartOf({}, GetString(frameType, DCM_ComplexImageComponent), -1);
      if (std::find(parts.begin(), parts.end(), part) == parts.end())
        parts.push_back(part);
    }
  }
  if (parts.size() < 2) // MIXED, but the frames do not say which is which: still more than one part
  {
    parts = { DicomComplexPart::Magnitude, DicomComplexPart::Phase };
  }
  return parts;
}

DicomComplexPart
SeriesComplexPart(const DicomSeriesSummary & series)
{
  return series.complexParts.size() == 1 ? series.complexParts.front() : DicomComplexPart::Unknown;
}

std::string
DescribeSeriesBriefly(const DicomSeriesSummary & series)
{
  return "series " + (series.seriesNumber.empty() ? std::string() : series.seriesNumber + " ") + "\"" +
         series.seriesDescription + "\" (" + series.seriesInstanceUID + ")";
}

DicomComplexPairing
PairMagnitudeAndPhase(const std::vector<DicomSeriesSummary> & series)
{
  if (series.empty())
  {
    throw DicomError("no DICOM image series found");
  }
  for (const DicomSeriesSummary & s : series)
  {
    if (s.complexParts.size() > 1)
    {
      throw DicomError(DescribeSeriesBriefly(s) +
                       " holds images of several parts of the complex signal in one series (as GE and Philips may "
                       "write magnitude and phase): splitting one series is not supported; convert it (dcm2niix "
                       "writes the phase as a separate _ph file) and give the phase with --phase FILE. The series:" +
                       SeriesAndParts(series));
    }
  }
  if (series.size() == 1)
  {
    if (SeriesComplexPart(series.front()) == DicomComplexPart::Phase)
    {
      throw DicomError(DescribeSeriesBriefly(series.front()) +
                       " is a phase series, and its magnitude series is missing: give the folder that holds both, or "
                       "the magnitude as INPUT and this series as --phase");
    }
    return { &series.front(), nullptr };
  }
  const DicomSeriesSummary * magnitude = nullptr;
  const DicomSeriesSummary * phase = nullptr;
  std::size_t                magnitudes = 0, phases = 0;
  for (const DicomSeriesSummary & s : series)
  {
    const DicomComplexPart part = SeriesComplexPart(s);
    magnitudes += part == DicomComplexPart::Magnitude;
    phases += part == DicomComplexPart::Phase;
    magnitude = part == DicomComplexPart::Magnitude ? &s : magnitude;
    phase = part == DicomComplexPart::Phase ? &s : phase;
  }
  if (series.size() == 2 && magnitudes == 1 && phases == 1)
  {
    return { magnitude, phase };
  }
  std::ostringstream why;
  why << series.size() << " DICOM series found";
  if (magnitudes > 0 && phases == 0)
    why << " and no phase series among them";
  else if (phases > 0 && magnitudes == 0)
    why << ", phase series among them but no magnitude series";
  else if (magnitudes > 1 || phases > 1)
    why << ", " << magnitudes << " magnitude and " << phases << " phase series: which belong together is ambiguous";
  why << "; a DICOM INPUT must hold one series, or one magnitude series and its phase series (ImageType M and P)."
      << " Give a folder of those, or the magnitude as INPUT and its phase as --phase. The series:"
      << SeriesAndParts(series);
  throw DicomError(why.str());
}

const DicomSeriesSummary &
SelectPhaseSeries(const std::vector<DicomSeriesSummary> & series, const std::string & where)
{
  if (series.size() != 1)
  {
    throw DicomError("--phase '" + where + "' holds " + std::to_string(series.size()) +
                     " DICOM series; it must hold the phase series alone. The series:" + SeriesAndParts(series));
  }
  const DicomComplexPart part = SeriesComplexPart(series.front());
  if (part != DicomComplexPart::Phase && part != DicomComplexPart::Unknown)
  {
    throw DicomError("--phase '" + where + "' is a " + DicomComplexPartName(part) + " series (" +
                     DescribeSeriesBriefly(series.front()) + "), not a phase series");
  }
  return series.front();
}

void
CheckDicomPhasePartner(const DicomSeries4D &      magnitude,
                       const DicomSeriesSummary & magnitudeSeries,
                       const DicomSeries4D &      phase,
                       const DicomSeriesSummary & phaseSeries)
{
  const std::string pair = "the magnitude " + DescribeSeriesBriefly(magnitudeSeries) + " and the phase " +
                           DescribeSeriesBriefly(phaseSeries) + " are no pair: ";
  const auto differ = [](const std::string & a, const std::string & b) { return !a.empty() && !b.empty() && a != b; };
  if (differ(magnitudeSeries.studyInstanceUID, phaseSeries.studyInstanceUID))
  {
    throw DicomError(pair + "they belong to different studies (StudyInstanceUID)");
  }
  if (differ(magnitudeSeries.frameOfReferenceUID, phaseSeries.frameOfReferenceUID))
  {
    throw DicomError(pair + "they lie in different frames of reference (FrameOfReferenceUID)");
  }
  const auto & a = magnitude.image->GetLargestPossibleRegion().GetSize();
  const auto & b = phase.image->GetLargestPossibleRegion().GetSize();
  if (a[3] != b[3])
  {
    throw DicomError(pair + "the magnitude has " + std::to_string(a[3]) + " volumes (by " + magnitude.by +
                     "), the phase " + std::to_string(b[3]) + " (by " + phase.by + ")");
  }
  if (!SameDicomGrid(*magnitude.image, *phase.image))
  {
    std::ostringstream text;
    text << pair << "they lie on different grids (the magnitude " << a[0] << " x " << a[1] << " x " << a[2]
         << " voxels, the phase " << b[0] << " x " << b[1] << " x " << b[2]
         << "; or their origin, spacing or direction differ)";
    throw DicomError(text.str());
  }
  if (magnitude.names != phase.names)
  {
    throw DicomError(pair + "their volumes differ (the magnitude's " + JoinNames(magnitude.names) + "; the phase's " +
                     JoinNames(phase.names) + ")");
  }
}

} // namespace svdlr_io
