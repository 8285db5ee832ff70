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
// The frames of a series and the volumes they form: one volume, the volumes of a 4D series, or images read
// one by one. Geometry checks here; DCMTK parsing in SVDLowRankDicomVolumeReader.cxx (classic headers, pixels)
// and SVDLowRankDicomEnhanced.cxx (functional groups).
#include "SVDLowRankDicomFrameParsing.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <sstream>
#include <tuple>

namespace svdlr_io
{
namespace
{
using Vector3 = DicomVector3;

double
Distance(const Vector3 & a, const Vector3 & b)
{
  const Vector3 d{ { a[0] - b[0], a[1] - b[1], a[2] - b[2] } };
  return std::sqrt(Dot(d, d));
}

std::string
Number(double value)
{
  std::ostringstream text;
  text << value;
  return text.str();
}

// Frames ordered along their common slice normal.
void
SortAlongNormal(std::vector<DicomFrame> & frames)
{
  const Vector3 normal = Cross(frames.front().rowDirection, frames.front().columnDirection);
  std::stable_sort(frames.begin(), frames.end(), [&normal](const DicomFrame & a, const DicomFrame & b) {
    return Dot(a.position, normal) < Dot(b.position, normal);
  });
}

// Reads frames' pixels, loading each file once even when many frames come from it (a multi-frame file), and
// decoding it once where GDCM decodes all its frames together (JPEG 2000). Frames are read in volume order, so
// a file is loaded (and decoded) again when frames of several multi-frame files interleave along the normal.
class FramePixelReader
{
public:
  void
  Read(const DicomFrame & frame, float * output)
  {
    if (!m_File || m_Name != frame.file)
    {
      m_File = LoadDicomFile(frame.file, false);
      m_Name = frame.file;
      m_Decoded.clear();
    }
    ReadFramePixels(*m_File, frame, output, &m_Decoded);
  }

private:
  std::unique_ptr<DcmFileFormat> m_File;
  std::string                    m_Name;
  std::vector<std::uint8_t>      m_Decoded; // m_File's frames as GDCM decoded them, if it did
};

DicomSliceSource
SourceOf(const DicomFrame & frame)
{
  DicomSliceSource source;
  source.file = frame.file;
  source.frame = frame.frame;
  source.framesInFile = frame.framesInFile;
  source.rescaleSlope = frame.slope;
  source.rescaleIntercept = frame.intercept;
  source.transferSyntaxUID = frame.transferSyntaxUID;
  source.lossyCompressed = frame.lossyCompressed;
  return source;
}

DicomVolume
EmptyVolume(const DicomSeriesSummary & series, const DicomFrame & first)
{
  DicomVolume volume;
  volume.seriesInstanceUID = series.seriesInstanceUID;
  volume.seriesDescription = series.seriesDescription;
  volume.format = { first.bitsAllocated, first.bitsStored, first.isSigned };
  volume.image = DicomVolumeImage::New();
  return volume;
}

// A volume of `slices` frames like `first` (its size, spacing, orientation), its origin at `first`'s position.
void
SetGeometry(DicomVolumeImage * image, const DicomFrame & first, std::size_t slices, double sliceSpacing)
{
  DicomVolumeImage::SizeType size{ { first.columns, first.rows, slices } };
  image->SetRegions(DicomVolumeImage::RegionType(size));
  DicomVolumeImage::SpacingType spacing;
  spacing[0] = first.columnSpacing;
  spacing[1] = first.rowSpacing;
  spacing[2] = sliceSpacing;
  image->SetSpacing(spacing);
  const Vector3                   normal = Cross(first.rowDirection, first.columnDirection);
  DicomVolumeImage::PointType     origin;
  DicomVolumeImage::DirectionType direction;
  for (unsigned int i = 0; i < 3; ++i)
  {
    origin[i] = first.position[i];
    direction[i][0] = first.rowDirection[i];
    direction[i][1] = first.columnDirection[i];
    direction[i][2] = normal[i];
  }
  // ITK aborts (vnl's assert_finite) when it inverts an index-to-physical matrix, direction times spacing, with a
  // NaN or Inf in it: a header whose orientation, position or spacing does not make finite numbers (a spacing of
  // 1e300 times a direction of 10, found by the DICOM fuzzer) is refused by name instead.
  for (unsigned int i = 0; i < 3; ++i)
  {
    for (unsigned int j = 0; j < 3; ++j)
    {
      if (!std::isfinite(direction[i][j] * spacing[j]) || !std::isfinite(origin[i]))
      {
        throw DicomError(first.Name() + ": its orientation, position or spacing is not a finite number");
      }
    }
  }
  image->SetOrigin(origin);
  image->SetDirection(direction);
  image->Allocate();
}

double
NominalSliceSpacing(const DicomFrame & frame)
{
  return frame.spacingBetweenSlices > 0.0 ? frame.spacingBetweenSlices
         : frame.sliceThickness > 0.0     ? frame.sliceThickness
                                          : 1.0;
}

// One component of the 4D key: its name, how it orders frames, how it reads.
struct KeyComponent
{
  const char * name;
  bool (*less)(const DicomFrameKey &, const DicomFrameKey &);
  std::string (*describe)(const DicomFrameKey &);
};

bool
Same(double a, double b)
{
  return (std::isnan(a) && std::isnan(b)) || std::abs(a - b) <= 1e-6 * std::max(1.0, std::abs(a));
}

bool
LessDouble(double a, double b)
{
  if (Same(a, b))
    return false;
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a); // unknown first
  return a < b;
}

std::string
DescribeEcho(const DicomFrameKey & k)
{
  std::string text = "echo";
  if (k.echoNumber >= 0)
    text += " " + std::to_string(k.echoNumber);
  if (!std::isnan(k.echoTime))
    text += " (TE " + Number(k.echoTime) + " ms)";
  return text;
}

std::string
DescribeDiffusion(const DicomFrameKey & k)
{
  std::string text = "b " + (std::isnan(k.bValue) ? std::string("?") : Number(k.bValue));
  if (!std::isnan(k.gradient[0]))
    text += " " + FormatVector(k.gradient);
  return text;
}

std::string
DescribeDimensions(const DicomFrameKey & k)
{
  std::string text = "index";
  for (const int i : k.dimensionIndex)
    text += " " + std::to_string(i);
  return text;
}

const KeyComponent kEchoComponent{
  "echo",
  [](const DicomFrameKey & a, const DicomFrameKey & b) {
    return a.echoNumber != b.echoNumber ? a.echoNumber < b.echoNumber : LessDouble(a.echoTime, b.echoTime);
  },
  DescribeEcho
};

const KeyComponent kDiffusionComponent{ "b-value and direction",
                                        [](const DicomFrameKey & a, const DicomFrameKey & b) {
                                          if (!Same(a.bValue, b.bValue))
                                            return LessDouble(a.bValue, b.bValue);
                                          for (unsigned int i = 0; i < 3; ++i)
                                          {
                                            if (!Same(a.gradient[i], b.gradient[i]))
                                              return LessDouble(a.gradient[i], b.gradient[i]);
                                          }
                                          return false;
                                        },
                                        DescribeDiffusion };

const KeyComponent kTemporalComponent{
  "temporal position",
  [](const DicomFrameKey & a, const DicomFrameKey & b) { return a.temporalPosition < b.temporalPosition; },
  [](const DicomFrameKey & k) { return "time " + std::to_string(k.temporalPosition); }
};

const KeyComponent kDimensionComponent{
  "dimension index",
  [](const DicomFrameKey & a, const DicomFrameKey & b) { return a.dimensionIndex < b.dimensionIndex; },
  DescribeDimensions
};

const KeyComponent kTriggerComponent{
  "trigger time",
  [](const DicomFrameKey & a, const DicomFrameKey & b) { return LessDouble(a.triggerTime, b.triggerTime); },
  [](const DicomFrameKey & k) { return "trigger " + Number(k.triggerTime) + " ms"; }
};

const KeyComponent kAcquisitionComponent{
  "acquisition number",
  [](const DicomFrameKey & a, const DicomFrameKey & b) { return a.acquisitionNumber < b.acquisitionNumber; },
  [](const DicomFrameKey & k) { return "acquisition " + std::to_string(k.acquisitionNumber); }
};

// Whether `component` takes more than one value among `frames`.
bool
Varies(const KeyComponent & component, const std::vector<DicomFrame> & frames)
{
  return std::any_of(frames.begin(), frames.end(), [&](const DicomFrame & frame) {
    return component.less(frame.key, frames.front().key) || component.less(frames.front().key, frame.key);
  });
}

std::vector<std::vector<DicomFrame>>
SplitBy(const std::vector<const KeyComponent *> & components, const std::vector<DicomFrame> & frames)
{
  auto less = [&components](const DicomFrameKey & a, const DicomFrameKey & b) {
    for (const KeyComponent * c : components)
    {
      if (c->less(a, b))
        return true;
      if (c->less(b, a))
        return false;
    }
    return false;
  };
  std::vector<DicomFrame> sorted = frames;
  std::stable_sort(
    sorted.begin(), sorted.end(), [&less](const DicomFrame & a, const DicomFrame & b) { return less(a.key, b.key); });
  std::vector<std::vector<DicomFrame>> groups;
  for (const DicomFrame & frame : sorted)
  {
    if (groups.empty() || less(groups.back().front().key, frame.key))
      groups.emplace_back();
    groups.back().push_back(frame);
  }
  return groups;
}

// Whether some group holds two frames at one position: the split is not fine enough yet.
bool
SharesAPosition(const std::vector<std::vector<DicomFrame>> & groups)
{
  for (const auto & group : groups)
  {
    for (std::size_t i = 0; i < group.size(); ++i)
    {
      for (std::size_t j = i + 1; j < group.size(); ++j)
      {
        if (Distance(group[i].position, group[j].position) < 1e-3 &&
            Distance(group[i].rowDirection, group[j].rowDirection) < 1e-4 &&
            Distance(group[i].columnDirection, group[j].columnDirection) < 1e-4)
          return true;
      }
    }
  }
  return false;
}

// The volumes of a 4D series: `frames` split by the keys that take more than one value (echo, diffusion,
// temporal position, Enhanced dimension indices; trigger time and acquisition number only where the others
// leave several frames at one position), ordered by key. One group when no key varies. `names` receives
// what each group is, e.g. "echo 2 (TE 20 ms)"; `by` what the split was by, e.g. "echo".
std::vector<std::vector<DicomFrame>>
GroupDicomFrames(const std::vector<DicomFrame> & frames, std::vector<std::string> & names, std::string & by)
{
  // The keys that say what a frame is in a 4D series; trigger time and acquisition number only where these
  // leave several frames at one position, as both also change from slice to slice in 2D acquisitions.
  std::vector<const KeyComponent *> used;
  for (const KeyComponent * c : { &kEchoComponent, &kDiffusionComponent, &kTemporalComponent })
  {
    if (Varies(*c, frames))
      used.push_back(c);
  }
  // Enhanced files index every dimension: their indices split what the attributes above do not name.
  if (Varies(kDimensionComponent, frames) && SharesAPosition(SplitBy(used, frames)))
    used.push_back(&kDimensionComponent);
  for (const KeyComponent * c : { &kTriggerComponent, &kAcquisitionComponent })
  {
    if (Varies(*c, frames) && SharesAPosition(SplitBy(used, frames)))
      used.push_back(c);
  }
  auto groups = SplitBy(used, frames);
  by.clear();
  names.clear();
  for (const KeyComponent * c : used)
  {
    by += (by.empty() ? "" : ", ") + std::string(c->name);
  }
  for (const auto & group : groups)
  {
    std::string name;
    for (const KeyComponent * c : used)
    {
      name += (name.empty() ? "" : ", ") + c->describe(group.front().key);
    }
    names.push_back(name);
  }
  return groups;
}

// `frames` (one volume: WhyNotOneVolume() is "") as a volume, slices ordered along the normal, pixels read with
// `reader`, which the volumes of a 4D series share (one multi-frame file, loaded and decoded once for all of them).
DicomVolume
ReadAsVolume(std::vector<DicomFrame> frames, const DicomSeriesSummary & series, FramePixelReader & reader)
{
  SortAlongNormal(frames);
  const DicomFrame & first = frames.front();
  const Vector3      normal = Cross(first.rowDirection, first.columnDirection);
  const std::size_t  slices = frames.size();
  const double       sliceSpacing = slices > 1
                                      ? (Dot(frames.back().position, normal) - Dot(first.position, normal)) / (slices - 1)
                                      : NominalSliceSpacing(first);
  DicomVolume        volume = EmptyVolume(series, first);
  SetGeometry(volume.image, first, slices, sliceSpacing);
  float * buffer = volume.image->GetBufferPointer();
  for (std::size_t k = 0; k < slices; ++k)
  {
    reader.Read(frames[k], buffer + k * first.rows * first.columns);
    volume.slices.push_back(SourceOf(frames[k]));
  }
  return volume;
}

} // namespace

std::vector<DicomFrame>
ReadDicomFrames(const DicomSeriesSummary & series)
{
  const std::string problem = DicomSeriesProblem(series);
  if (!problem.empty())
  {
    throw DicomError(problem);
  }
  if (series.files.empty())
  {
    throw DicomError("series " + series.seriesInstanceUID + " has no files");
  }
  std::vector<DicomFrame> frames;
  for (const std::string & file : series.files)
  {
    auto       dicom = LoadDicomFile(file, true);
    DicomFrame common = ParseClassicFrame(dicom->getDataset(), file);
    ParseTransferSyntax(*dicom, common);
    CheckSupportedPixels(common);
    CheckFrameCount(common);
    std::vector<DicomFrame> enhanced = ParseFunctionalGroupFrames(dicom->getDataset(), common);
    if (!enhanced.empty())
    {
      for (const DicomFrame & frame : enhanced)
      {
        CheckFiniteNumbers(frame);
      }
      frames.insert(frames.end(), enhanced.begin(), enhanced.end());
      continue;
    }
    CheckFiniteNumbers(common);
    // A multi-frame file without functional groups: every frame has the file's header.
    for (unsigned int f = 0; f < common.framesInFile; ++f)
    {
      frames.push_back(common);
      frames.back().frame = f;
    }
  }
  return frames;
}

std::string
WhyNotOneVolume(const std::vector<DicomFrame> & unsorted, double spacingTolerance)
{
  if (unsorted.empty())
  {
    return "no images";
  }
  std::vector<DicomFrame> frames = unsorted;
  const DicomFrame &      first = unsorted.front();
  for (const DicomFrame & frame : frames)
  {
    if (frame.rows != first.rows || frame.columns != first.columns)
    {
      return frame.Name() + ": is " + std::to_string(frame.columns) + "x" + std::to_string(frame.rows) +
             " pixels but " + first.Name() + " is " + std::to_string(first.columns) + "x" + std::to_string(first.rows) +
             ": slices of one series must have the same size";
    }
    if (frames.size() > 1 && (!frame.hasPosition || !frame.hasOrientation))
    {
      return frame.Name() + ": has no ImagePositionPatient/ImageOrientationPatient, so its slice cannot be placed";
    }
    if (Distance(frame.rowDirection, first.rowDirection) > 1e-4 ||
        Distance(frame.columnDirection, first.columnDirection) > 1e-4)
    {
      return frame.Name() + ": is oriented differently from " + first.Name() +
             ": the series mixes slice orientations (a localizer?)";
    }
  }
  SortAlongNormal(frames);
  const Vector3     normal = Cross(first.rowDirection, first.columnDirection);
  const std::size_t slices = frames.size();
  if (slices < 2)
  {
    return {};
  }
  const double sliceSpacing =
    (Dot(frames.back().position, normal) - Dot(frames.front().position, normal)) / (slices - 1);
  if (!std::isfinite(sliceSpacing))
  {
    return frames.back().Name() + ": lies too far from " + frames.front().Name() + " for its position to be used";
  }
  const double tolerance = spacingTolerance * sliceSpacing;
  for (std::size_t k = 1; k < slices; ++k)
  {
    if (Dot(frames[k].position, normal) - Dot(frames[k - 1].position, normal) <= tolerance)
    {
      return frames[k].Name() + ": lies at the same position as " + frames[k - 1].Name() +
             ": the series has several images per slice position (echoes, phases?)";
    }
  }
  for (std::size_t k = 0; k < slices; ++k)
  {
    Vector3 expected = frames.front().position;
    for (unsigned int i = 0; i < 3; ++i)
    {
      expected[i] += static_cast<double>(k) * sliceSpacing * normal[i];
    }
    const double offset = Distance(frames[k].position, expected);
    if (offset > tolerance)
    {
      std::ostringstream what;
      what << frames[k].Name() << ": lies " << offset << " mm from where a uniform slice spacing of " << sliceSpacing
           << " mm puts slice " << k << " " << FormatVector(expected)
           << ": unequal slice spacing or a missing slice (tolerance " << tolerance << " mm)";
      return what.str();
    }
  }
  return {};
}

DicomImageSet
ReadDicomImages(const DicomSeriesSummary & series, bool requireVolume, double spacingTolerance)
{
  DicomImageSet           set;
  std::vector<DicomFrame> frames = ReadDicomFrames(series);
  const std::string       whole = WhyNotOneVolume(frames, spacingTolerance);
  FramePixelReader        reader; // one for every part: a multi-frame file's frames go to several parts
  if (whole.empty())
  {
    set.layout = DicomLayout::Volume;
    set.parts.push_back(ReadAsVolume(std::move(frames), series, reader));
    set.names.push_back("volume");
    return set;
  }
  if (requireVolume)
  {
    throw DicomError(whole);
  }
  // Positions so far apart that their distance overflows are broken headers, not a localizer.
  for (const DicomFrame & frame : frames)
  {
    if (!std::isfinite(Distance(frame.position, frames.front().position)))
    {
      throw DicomError(frame.Name() + ": lies too far from " + frames.front().Name() + " for its position to be used");
    }
  }

  // A 4D series: every group one volume.
  std::vector<std::string> names;
  std::string              by;
  const auto               groups = GroupDicomFrames(frames, names, by);
  std::string              why;
  for (const auto & group : groups)
  {
    why = WhyNotOneVolume(group, spacingTolerance);
    if (!why.empty())
      break;
  }
  if (groups.size() > 1 && why.empty())
  {
    set.layout = DicomLayout::Volumes;
    set.by = by;
    set.names = names;
    for (const auto & group : groups)
    {
      set.parts.push_back(ReadAsVolume(group, series, reader));
    }
    return set;
  }

  // Images that form no volume (localizers, projections, mixed sizes): each with its own geometry, in the order
  // of their files and frames.
  set.layout = DicomLayout::Images;
  set.reason = whole;
  for (const DicomFrame & frame : frames)
  {
    // One slice across: its thickness, where the header gives it, is the spacing that the volume reports.
    DicomVolume part = EmptyVolume(series, frame);
    SetGeometry(part.image, frame, 1, frame.sliceThickness > 0.0 ? frame.sliceThickness : 1.0);
    reader.Read(frame, part.image->GetBufferPointer());
    part.slices.push_back(SourceOf(frame));
    set.parts.push_back(std::move(part));
    set.names.push_back(frame.Name());
  }
  return set;
}

std::string
DescribeDicomLayout(const DicomImageSet & set)
{
  switch (set.layout)
  {
    case DicomLayout::Volume:
      return "one volume";
    case DicomLayout::Volumes:
      return std::to_string(set.parts.size()) + " volumes by " + set.by;
    default:
      return std::to_string(set.parts.size()) + (set.parts.size() == 1 ? " image" : " images") +
             ", each with its own geometry (no single volume: " + set.reason + ")";
  }
}

} // namespace svdlr_io
