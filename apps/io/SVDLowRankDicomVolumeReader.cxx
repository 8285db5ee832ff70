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
// ReadDicomSeries: one series' files as a volume; and what SVDLowRankDicomFrames.cxx builds on: a classic
// image's header (geometry, pixel format, rescale, 4D keys, transfer syntax) and one frame's pixels through DCMTK
// (GDCM for the syntaxes DCMTK lacks: SVDLowRankDicomCodecs.h).
#include "SVDLowRankDicomFrameParsing.h"
#include "SVDLowRankDicomCodecs.h"

#include "dcmtk/dcmdata/dccodec.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <sstream>

namespace svdlr_io
{
namespace
{

// A decimal value of `tag` in `item`, or `fallback` when absent.
double
GetDecimal(DcmItem * item, const DcmTagKey & tag, double fallback)
{
  Float64 value = 0.0;
  return item->findAndGetFloat64(tag, value).good() ? value : fallback;
}

int
GetInteger(DcmItem * item, const DcmTagKey & tag)
{
  Sint32 value = 0;
  return item->findAndGetSint32(tag, value).good() ? static_cast<int>(value) : -1;
}

} // namespace

DicomFrame
ParseClassicFrame(DcmItem * dataset, const std::string & file)
{
  DicomFrame header;
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
  if (dataset->findAndGetSint32(DCM_NumberOfFrames, frames).good() && frames > 1)
    header.framesInFile = static_cast<unsigned int>(frames);
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
    double spacing[2];
    if (GetDecimals(dataset, tag, spacing, 2) && spacing[0] > 0.0 && spacing[1] > 0.0)
    {
      header.rowSpacing = spacing[0];
      header.columnSpacing = spacing[1];
    }
  }
  GetDecimals(dataset, DCM_SliceThickness, &header.sliceThickness, 1);
  GetDecimals(dataset, DCM_SpacingBetweenSlices, &header.spacingBetweenSlices, 1);
  if (dataset->findAndGetFloat64(DCM_RescaleSlope, number).good() && number != 0.0)
    header.slope = number;
  GetDecimals(dataset, DCM_RescaleIntercept, &header.intercept, 1);
  header.lossyCompressed = GetString(dataset, DCM_LossyImageCompression) == "01";

  // What tells the volumes of a 4D series apart.
  DicomFrameKey & key = header.key;
  key.echoNumber = GetInteger(dataset, DCM_EchoNumbers);
  key.echoTime = GetDecimal(dataset, DCM_EchoTime, DicomFrameKey::Unknown);
  key.temporalPosition = GetInteger(dataset, DCM_TemporalPositionIdentifier);
  key.triggerTime = GetDecimal(dataset, DCM_TriggerTime, DicomFrameKey::Unknown);
  key.acquisitionNumber = GetInteger(dataset, DCM_AcquisitionNumber);
  key.bValue = GetDecimal(dataset, DCM_DiffusionBValue, DicomFrameKey::Unknown);
  for (unsigned long i = 0; i < 3; ++i)
  {
    if (dataset->findAndGetFloat64(DCM_DiffusionGradientOrientation, number, i).good())
      key.gradient[i] = number;
  }
  return header;
}

void
ParseTransferSyntax(DcmFileFormat & dicom, DicomFrame & header)
{
  header.transferSyntaxUID = GetString(dicom.getMetaInfo(), DCM_TransferSyntaxUID);
  if (header.transferSyntaxUID.empty())
  {
    header.transferSyntaxUID = DcmXfer(dicom.getDataset()->getOriginalXfer()).getXferID();
  }
  // A lossy syntax marks the pixels lossy even when the writer forgot LossyImageCompression.
  header.lossyCompressed = header.lossyCompressed || IsLossyTransferSyntax(header.transferSyntaxUID);
}

void
CheckFrameCount(const DicomFrame & header)
{
  if (header.framesInFile <= 1)
  {
    return;
  }
  std::error_code error;
  const std::uintmax_t fileBytes = std::filesystem::file_size(header.file, error);
  if (error)
  {
    return; // the loader has just read it; the pixel reader judges its frames
  }
  // A native frame takes its pixels' bytes, an encapsulated one at least a fragment's 8-byte item header.
  const bool          encapsulated = DcmXfer(header.transferSyntaxUID.c_str()).isEncapsulated();
  const std::uint64_t frameBytes = encapsulated ? 8
                                                : std::uint64_t{ header.rows } * header.columns * header.samplesPerPixel *
                                                    (header.bitsAllocated / 8u);
  if (frameBytes * header.framesInFile > fileBytes)
  {
    throw FileError(header.file,
                    "declares " + std::to_string(header.framesInFile) + " frames (NumberOfFrames), more than its " +
                      std::to_string(fileBytes) + " bytes can hold (truncated?)");
  }
}

// What this reader supports, checked per frame so the message names it.
void
CheckSupportedPixels(const DicomFrame & header)
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
}

// Numbers the geometry and the pixel values are made of, checked per frame so that bad tags give an error naming the
// frame instead of NaN or Inf in the volume (ITK's direction checks abort() on those; found by apps/fuzz).
void
CheckFiniteNumbers(const DicomFrame & header)
{
  using Vector3 = DicomVector3;
  const auto finite = [](const Vector3 & v) {
    return std::isfinite(v[0]) && std::isfinite(v[1]) && std::isfinite(v[2]);
  };
  if (!finite(header.position))
  {
    throw FileError(header.Name(), "has a non-finite ImagePositionPatient " + FormatVector(header.position));
  }
  const Vector3 & a = header.rowDirection;
  const Vector3 & b = header.columnDirection;
  const Vector3   normal = Cross(a, b);
  if (!finite(a) || !finite(b) || !(std::hypot(normal[0], normal[1], normal[2]) > 1e-3))
  {
    throw FileError(header.Name(),
                    "has a degenerate ImageOrientationPatient " + FormatVector(a) + ", " + FormatVector(b) +
                      ": its row and column directions span no plane");
  }
  // Direction cosines are unit vectors (PS3.3 C.7.6.2.1.1); rounded to a few digits they stay well within 10 %. A
  // column of 1e200 made the volume's direction matrix overflow its determinant (found by the DICOM fuzzer).
  for (const Vector3 * cosines : { &a, &b })
  {
    const double length = std::hypot((*cosines)[0], (*cosines)[1], (*cosines)[2]);
    if (!(length > 0.9 && length < 1.1))
    {
      std::ostringstream what;
      what << "has an ImageOrientationPatient " << FormatVector(a) << ", " << FormatVector(b)
           << " whose directions are not unit vectors (one of length " << length << ")";
      throw FileError(header.Name(), what.str());
    }
  }
  for (const double spacing :
       { header.rowSpacing, header.columnSpacing, header.sliceThickness, header.spacingBetweenSlices })
  {
    if (!std::isfinite(spacing))
    {
      throw FileError(header.Name(), "has a non-finite PixelSpacing, SliceThickness or SpacingBetweenSlices");
    }
  }
  // The largest physical value must fit a 32-bit float: |slope| * 2^bitsStored + |intercept|.
  const double largest =
    std::abs(header.slope) * std::ldexp(1.0, static_cast<int>(header.bitsStored)) + std::abs(header.intercept);
  if (!(largest < 1e38))
  {
    std::ostringstream what;
    what << "has RescaleSlope " << header.slope << " and RescaleIntercept " << header.intercept
         << ", which put its values beyond 32-bit floats";
    throw FileError(header.Name(), what.str());
  }
}

// The stored values of one frame, decoded (DCMTK's codecs, GDCM's for JPEG 2000) and turned into physical values.
void
ReadFramePixels(DcmFileFormat &             dicom,
                const DicomFrame &          header,
                float *                     output,
                std::vector<std::uint8_t> * decodedFrames)
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
  if (!transferSyntax.isEncapsulated() && pixelData->getLength() < static_cast<Uint64>(frameSize) * header.framesInFile)
  {
    throw FileError(header.file,
                    "has " + std::to_string(pixelData->getLength()) + " bytes of pixel data, expected " +
                      std::to_string(static_cast<Uint64>(frameSize) * header.framesInFile) + " (truncated?)");
  }
  std::vector<Uint8> buffer(frameSize + (frameSize & 1u));
  if (decoder == "GDCM")
  {
    // GDCM decodes the whole file's pixel data at once: decoded once per file, kept for its other frames.
    std::vector<std::uint8_t> own;
    std::vector<std::uint8_t> & all = decodedFrames != nullptr ? *decodedFrames : own;
    if (all.empty())
    {
      all = DecodeFramesWithGdcm(dicom,
                                 header.file,
                                 header.transferSyntaxUID,
                                 header.framesInFile,
                                 header.rows,
                                 header.columns,
                                 header.bitsAllocated,
                                 frameSize);
    }
    const auto first = all.begin() + static_cast<std::ptrdiff_t>(header.frame) * frameSize;
    std::copy(first, first + frameSize, buffer.begin());
  }
  else
  {
    Uint32            startFragment = 0;
    OFString          colourModel;
    const OFCondition status = pixelData->getUncompressedFrame(
      dataset, header.frame, startFragment, buffer.data(), static_cast<Uint32>(buffer.size()), colourModel);
    if (status.bad())
    {
      throw FileError(header.Name(), std::string("pixel data cannot be decoded (") + status.text() + "): truncated?");
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

DicomVolume
ReadDicomSeries(const DicomSeriesSummary & series, double spacingTolerance)
{
  // Headers first: every frame and the geometry are checked before any pixels are read.
  return std::move(ReadDicomImages(series, true, spacingTolerance).parts.front());
}

} // namespace svdlr_io
