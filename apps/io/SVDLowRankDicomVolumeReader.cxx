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
// ReadDicomSeries: one series' files as a volume. Headers first (every file checked, slices ordered
// along the normal and checked against a regular grid), then each slice's pixels through DCMTK (GDCM for the
// syntaxes DCMTK lacks: SVDLowRankDicomCodecs.h).
#include "SVDLowRankDicomSeries.h"
#include "SVDLowRankDicomCodecs.h"
#include "SVDLowRankDicomTags.h"

#include "dcmtk/dcmdata/dccodec.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>

namespace svdlr_io
{
namespace
{
using Vector3 = std::array<double, 3>;

// The header of one slice file: what grouping, ordering and geometry need.
struct SliceHeader
{
  std::string  file;
  unsigned int rows{ 0 };
  unsigned int columns{ 0 };
  bool         hasPosition{ false };
  Vector3      position{ { 0.0, 0.0, 0.0 } };
  bool         hasOrientation{ false };
  Vector3      rowDirection{ { 1.0, 0.0, 0.0 } };    // along a row: increasing column index
  Vector3      columnDirection{ { 0.0, 1.0, 0.0 } }; // down a column: increasing row index
  double       rowSpacing{ 1.0 };                    // PixelSpacing[0]: between rows
  double       columnSpacing{ 1.0 };                 // PixelSpacing[1]: between columns
  double       sliceThickness{ 0.0 };
  double       spacingBetweenSlices{ 0.0 };
  unsigned int bitsAllocated{ 0 };
  unsigned int bitsStored{ 0 };
  unsigned int highBit{ 0 };
  bool         isSigned{ false };
  unsigned int samplesPerPixel{ 1 };
  long         frames{ 1 };
  std::string  photometric;
  double       slope{ 1.0 };
  double       intercept{ 0.0 };
  std::string  transferSyntaxUID;       // from the file meta information
  bool         lossyCompressed{ false }; // LossyImageCompression "01", or a lossy transfer syntax
};

Vector3
Cross(const Vector3 & a, const Vector3 & b)
{
  return { { a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0] } };
}

double
Dot(const Vector3 & a, const Vector3 & b)
{
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

double
Distance(const Vector3 & a, const Vector3 & b)
{
  const Vector3 d{ { a[0] - b[0], a[1] - b[1], a[2] - b[2] } };
  return std::sqrt(Dot(d, d));
}

std::string
FormatVector(const Vector3 & v)
{
  std::ostringstream text;
  text << "(" << v[0] << ", " << v[1] << ", " << v[2] << ")";
  return text.str();
}

SliceHeader
ParseSliceHeader(DcmItem * dataset, const std::string & file)
{
  SliceHeader header;
  header.file = file;
  Uint16 value = 0;
  if (dataset->findAndGetUint16(DCM_Rows, value).good())
    header.rows = value;
  if (dataset->findAndGetUint16(DCM_Columns, value).good())
    header.columns = value;
  if (dataset->findAndGetUint16(DCM_BitsAllocated, value).good())
    header.bitsAllocated = value;
  header.bitsStored = dataset->findAndGetUint16(DCM_BitsStored, value).good() ? value : header.bitsAllocated;
  header.highBit = dataset->findAndGetUint16(DCM_HighBit, value).good() ? value : header.bitsStored - 1;
  if (dataset->findAndGetUint16(DCM_PixelRepresentation, value).good())
    header.isSigned = value == 1;
  if (dataset->findAndGetUint16(DCM_SamplesPerPixel, value).good())
    header.samplesPerPixel = value;
  Sint32 frames = 1;
  if (dataset->findAndGetSint32(DCM_NumberOfFrames, frames).good())
    header.frames = frames;
  header.photometric = GetString(dataset, DCM_PhotometricInterpretation);

  Float64 number = 0.0;
  header.hasPosition = true;
  for (unsigned long i = 0; i < 3; ++i)
  {
    header.hasPosition = header.hasPosition && dataset->findAndGetFloat64(DCM_ImagePositionPatient, number, i).good();
    header.position[i] = number;
  }
  header.hasOrientation = true;
  for (unsigned long i = 0; i < 6; ++i)
  {
    header.hasOrientation =
      header.hasOrientation && dataset->findAndGetFloat64(DCM_ImageOrientationPatient, number, i).good();
    (i < 3 ? header.rowDirection[i] : header.columnDirection[i - 3]) = number;
  }
  if (!header.hasOrientation)
  {
    header.rowDirection = { { 1.0, 0.0, 0.0 } };
    header.columnDirection = { { 0.0, 1.0, 0.0 } };
  }
  for (const DcmTagKey & tag : { DCM_ImagerPixelSpacing, DCM_PixelSpacing }) // PixelSpacing wins when present
  {
    Float64 rowSpacing = 0.0, columnSpacing = 0.0;
    if (dataset->findAndGetFloat64(tag, rowSpacing, 0).good() &&
        dataset->findAndGetFloat64(tag, columnSpacing, 1).good() && rowSpacing > 0.0 && columnSpacing > 0.0)
    {
      header.rowSpacing = rowSpacing;
      header.columnSpacing = columnSpacing;
    }
  }
  if (dataset->findAndGetFloat64(DCM_SliceThickness, number).good())
    header.sliceThickness = number;
  if (dataset->findAndGetFloat64(DCM_SpacingBetweenSlices, number).good())
    header.spacingBetweenSlices = number;
  if (dataset->findAndGetFloat64(DCM_RescaleSlope, number).good() && number != 0.0)
    header.slope = number;
  if (dataset->findAndGetFloat64(DCM_RescaleIntercept, number).good())
    header.intercept = number;
  header.lossyCompressed = GetString(dataset, DCM_LossyImageCompression) == "01";
  return header;
}

// The transfer syntax of `dicom` and whether it lost information: a lossy syntax marks the pixels lossy even
// when the writer forgot LossyImageCompression.
void
ParseTransferSyntax(DcmFileFormat & dicom, SliceHeader & header)
{
  header.transferSyntaxUID = GetString(dicom.getMetaInfo(), DCM_TransferSyntaxUID);
  if (header.transferSyntaxUID.empty())
  {
    header.transferSyntaxUID = DcmXfer(dicom.getDataset()->getOriginalXfer()).getXferID();
  }
  header.lossyCompressed = header.lossyCompressed || IsLossyTransferSyntax(header.transferSyntaxUID);
}

// What this reader supports, checked per file so the message names it.
void
CheckSupportedPixels(const SliceHeader & header)
{
  if (header.rows == 0 || header.columns == 0)
  {
    throw FileError(header.file, "has no Rows/Columns: not an image");
  }
  if (header.samplesPerPixel != 1 || (header.photometric != "MONOCHROME1" && header.photometric != "MONOCHROME2"))
  {
    throw FileError(header.file,
                    "is a colour image (PhotometricInterpretation '" + header.photometric +
                      "'); only greyscale (MONOCHROME1/2) slices are supported");
  }
  if (header.bitsAllocated != 8 && header.bitsAllocated != 16)
  {
    throw FileError(header.file,
                    "has " + std::to_string(header.bitsAllocated) +
                      "-bit pixels; only 8- and 16-bit pixels are supported");
  }
  if (header.bitsStored == 0 || header.bitsStored > header.bitsAllocated || header.highBit + 1 < header.bitsStored ||
      header.highBit >= header.bitsAllocated)
  {
    throw FileError(header.file,
                    "has inconsistent BitsStored (" + std::to_string(header.bitsStored) + ") and HighBit (" +
                      std::to_string(header.highBit) + ")");
  }
  if (header.frames != 1)
  {
    throw FileError(header.file,
                    "is a multi-frame image (" + std::to_string(header.frames) +
                      " frames); only series of single-frame slices are supported");
  }
}

// The stored values of one slice, decoded (DCMTK's codecs, GDCM's for JPEG 2000) and turned into physical values.
void
ReadSlicePixels(DcmFileFormat & dicom, const SliceHeader & header, float * output)
{
  DcmDataset *  dataset = dicom.getDataset();
  const DcmXfer transferSyntax(dataset->getOriginalXfer());
  // The syntax first: DCMTK parses a file in a syntax it does not know as if it were uncompressed.
  const std::string decoder = DicomDecoderFor(header.transferSyntaxUID);
  if (decoder.empty())
  {
    throw FileError(header.file,
                    "is compressed as " + DescribeTransferSyntax(header.transferSyntaxUID) +
                      ", which neither DCMTK nor GDCM decodes here; supported: uncompressed, deflate, RLE, JPEG, "
                      "JPEG-LS (DCMTK), JPEG 2000 (GDCM)");
  }
  DcmElement * pixelData = nullptr;
  if (dataset->findAndGetElement(DCM_PixelData, pixelData).bad() || pixelData == nullptr ||
      (!transferSyntax.isEncapsulated() && pixelData->getLength() == 0))
  {
    throw FileError(header.file, "has no pixel data");
  }
  Uint32 frameSize = 0;
  if (pixelData->getUncompressedFrameSize(dataset, frameSize).bad())
  {
    throw FileError(header.file, "has pixel attributes that do not describe its pixel data");
  }
  const std::size_t pixels = static_cast<std::size_t>(header.rows) * header.columns;
  if (frameSize < pixels * (header.bitsAllocated / 8))
  {
    throw FileError(header.file,
                    "has a frame of " + std::to_string(frameSize) + " bytes, too small for " +
                      std::to_string(header.rows) + "x" + std::to_string(header.columns) + " pixels");
  }
  if (!transferSyntax.isEncapsulated() && pixelData->getLength() < frameSize)
  {
    throw FileError(header.file,
                    "has " + std::to_string(pixelData->getLength()) + " bytes of pixel data, expected " +
                      std::to_string(frameSize) + " (truncated?)");
  }
  std::vector<Uint8> buffer(frameSize + (frameSize & 1u));
  if (decoder == "GDCM")
  {
    const auto samples = DecodeFrameWithGdcm(
      header.file, header.transferSyntaxUID, 0, header.rows, header.columns, header.bitsAllocated, frameSize);
    std::copy(samples.begin(), samples.end(), buffer.begin());
  }
  else
  {
    Uint32            startFragment = 0;
    OFString          colourModel;
    const OFCondition status = pixelData->getUncompressedFrame(
      dataset, 0, startFragment, buffer.data(), static_cast<Uint32>(buffer.size()), colourModel);
    if (status.bad())
    {
      throw FileError(header.file, std::string("pixel data cannot be decoded (") + status.text() + "): truncated?");
    }
  }

  // Stored values sit in bits [highBit - bitsStored + 1, highBit] of each sample; signed ones are two's complement.
  const unsigned int shift = header.highBit + 1 - header.bitsStored;
  const Uint32       mask = header.bitsStored >= 32 ? 0xffffffffu : ((1u << header.bitsStored) - 1u);
  const Uint32       signBit = 1u << (header.bitsStored - 1);
  const auto *       samples16 = reinterpret_cast<const Uint16 *>(buffer.data()); // DCMTK gives local byte order
  for (std::size_t i = 0; i < pixels; ++i)
  {
    const Uint32 raw = ((header.bitsAllocated == 8 ? buffer[i] : samples16[i]) >> shift) & mask;
    const double stored =
      header.isSigned && (raw & signBit) != 0 ? static_cast<double>(raw) - static_cast<double>(mask) - 1.0 : raw;
    output[i] = static_cast<float>(stored * header.slope + header.intercept);
  }
}

} // namespace

DicomVolume
ReadDicomSeries(const DicomSeriesSummary & series, double spacingTolerance)
{
  if (series.files.empty())
  {
    throw DicomError("series " + series.seriesInstanceUID + " has no files");
  }
  // Headers first: check every file and order the slices before reading any pixels.
  std::vector<SliceHeader> headers;
  for (const std::string & file : series.files)
  {
    auto dicom = LoadDicomFile(file, true);
    headers.push_back(ParseSliceHeader(dicom->getDataset(), file));
    ParseTransferSyntax(*dicom, headers.back());
    CheckSupportedPixels(headers.back());
  }
  const SliceHeader & first = headers.front();
  for (const SliceHeader & header : headers)
  {
    if (header.rows != first.rows || header.columns != first.columns)
    {
      throw FileError(header.file,
                      "is " + std::to_string(header.columns) + "x" + std::to_string(header.rows) + " pixels but " +
                        first.file + " is " + std::to_string(first.columns) + "x" + std::to_string(first.rows) +
                        ": slices of one series must have the same size");
    }
    if (headers.size() > 1 && (!header.hasPosition || !header.hasOrientation))
    {
      throw FileError(header.file,
                      "has no ImagePositionPatient/ImageOrientationPatient, so its slice cannot be placed");
    }
    if (Distance(header.rowDirection, first.rowDirection) > 1e-4 ||
        Distance(header.columnDirection, first.columnDirection) > 1e-4)
    {
      throw FileError(header.file,
                      "is oriented differently from " + first.file +
                        ": the series mixes slice orientations (a localizer?)");
    }
  }
  const Vector3 normal = Cross(first.rowDirection, first.columnDirection);
  std::stable_sort(headers.begin(), headers.end(), [&normal](const SliceHeader & a, const SliceHeader & b) {
    return Dot(a.position, normal) < Dot(b.position, normal);
  });

  double            sliceSpacing = first.spacingBetweenSlices > 0.0 ? first.spacingBetweenSlices
                                   : first.sliceThickness > 0.0     ? first.sliceThickness
                                                                    : 1.0;
  const std::size_t slices = headers.size();
  if (slices > 1)
  {
    sliceSpacing = (Dot(headers.back().position, normal) - Dot(headers.front().position, normal)) / (slices - 1);
    const double tolerance = spacingTolerance * sliceSpacing;
    for (std::size_t k = 1; k < slices; ++k)
    {
      if (Dot(headers[k].position, normal) - Dot(headers[k - 1].position, normal) <= tolerance)
      {
        throw FileError(headers[k].file,
                        "lies at the same position as " + headers[k - 1].file +
                          ": the series has several images per slice position (echoes, phases?)");
      }
    }
    for (std::size_t k = 0; k < slices; ++k)
    {
      Vector3 expected = headers.front().position;
      for (unsigned int i = 0; i < 3; ++i)
      {
        expected[i] += static_cast<double>(k) * sliceSpacing * normal[i];
      }
      const double offset = Distance(headers[k].position, expected);
      if (offset > tolerance)
      {
        std::ostringstream what;
        what << "lies " << offset << " mm from where a uniform slice spacing of " << sliceSpacing << " mm puts slice "
             << k << " " << FormatVector(expected) << ": unequal slice spacing or a missing slice (tolerance "
             << tolerance << " mm)";
        throw FileError(headers[k].file, what.str());
      }
    }
  }

  DicomVolume volume;
  volume.seriesInstanceUID = series.seriesInstanceUID;
  volume.seriesDescription = series.seriesDescription;
  volume.format = { first.bitsAllocated, first.bitsStored, first.isSigned };
  volume.image = DicomVolumeImage::New();
  DicomVolumeImage::SizeType size{ { first.columns, first.rows, slices } };
  volume.image->SetRegions(DicomVolumeImage::RegionType(size));
  DicomVolumeImage::SpacingType spacing;
  spacing[0] = first.columnSpacing;
  spacing[1] = first.rowSpacing;
  spacing[2] = sliceSpacing;
  volume.image->SetSpacing(spacing);
  DicomVolumeImage::PointType     origin;
  DicomVolumeImage::DirectionType direction;
  for (unsigned int i = 0; i < 3; ++i)
  {
    origin[i] = headers.front().position[i];
    direction[i][0] = first.rowDirection[i];
    direction[i][1] = first.columnDirection[i];
    direction[i][2] = normal[i];
  }
  volume.image->SetOrigin(origin);
  volume.image->SetDirection(direction);
  volume.image->Allocate();

  float * buffer = volume.image->GetBufferPointer();
  for (std::size_t k = 0; k < slices; ++k)
  {
    auto dicom = LoadDicomFile(headers[k].file, false);
    ReadSlicePixels(*dicom, headers[k], buffer + k * first.rows * first.columns);
    volume.slices.push_back({ headers[k].file,
                              headers[k].slope,
                              headers[k].intercept,
                              headers[k].transferSyntaxUID,
                              headers[k].lossyCompressed });
  }
  return volume;
}

} // namespace svdlr_io
