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
#include "SVDLowRankDicomWriter.h"
#include "SVDLowRankDicomFrameParsing.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <memory>
#include <sstream>
#include <utility>

namespace svdlr_io
{
namespace
{

std::string
NewUID(const char * root)
{
  char uid[100];
  return dcmGenerateUniqueIdentifier(uid, root);
}

void
Put(DcmItem * item, const DcmTagKey & tag, const std::string & value)
{
  const OFCondition status = item->putAndInsertString(tag, value.c_str());
  if (status.bad())
  {
    throw DicomError("cannot set " + std::string(DcmTag(tag).getTagName()) + " to '" + value + "': " + status.text());
  }
}

// Attributes of the source that would misdescribe the derived pixels, or that only the source may carry.
void
RemoveSourcePixelAttributes(DcmItem * dataset)
{
  for (const DcmTagKey & tag : { DCM_PixelData,
                                 DCM_SmallestImagePixelValue,
                                 DCM_LargestImagePixelValue,
                                 DCM_SmallestPixelValueInSeries,
                                 DCM_LargestPixelValueInSeries,
                                 DCM_PixelPaddingValue,
                                 DCM_PixelPaddingRangeLimit,
                                 DCM_IconImageSequence,
                                 DCM_PlanarConfiguration,
                                 DCM_NumberOfFrames,
                                 DCM_ModalityLUTSequence,
                                 DCM_SourceImageSequence,
                                 DCM_DerivationCodeSequence,
                                 DCM_DigitalSignaturesSequence,
                                 DCM_MACParametersSequence,
                                 DCM_DataSetTrailingPadding,
                                 DCM_RescaleSlope,
                                 DCM_RescaleIntercept })
  {
    dataset->findAndDeleteElement(tag, OFTrue);
  }
  // Vendors' private attributes describe the acquisition they came with, not this derived image.
  for (unsigned long i = dataset->card(); i-- > 0;)
  {
    if (dataset->getElement(i)->getTag().isPrivate())
    {
      delete dataset->remove(i);
    }
  }
}

// A new patient, study and frame of reference for a volume that did not come from DICOM, with the
// attributes the MR Image IOD requires.
void
PutNewStudy(DcmItem *           dataset,
            const std::string & studyUID,
            const std::string & frameOfReferenceUID,
            const std::string & date,
            const std::string & time,
            double              sliceThickness)
{
  Put(dataset, DCM_SOPClassUID, UID_MRImageStorage);
  Put(dataset, DCM_PatientName, "Anonymous^SVDLR");
  Put(dataset, DCM_PatientID, "SVDLR");
  Put(dataset, DCM_PatientBirthDate, "");
  Put(dataset, DCM_PatientSex, "");
  Put(dataset, DCM_StudyInstanceUID, studyUID);
  Put(dataset, DCM_StudyDate, date);
  Put(dataset, DCM_StudyTime, time);
  Put(dataset, DCM_ReferringPhysicianName, "");
  Put(dataset, DCM_StudyID, "1");
  Put(dataset, DCM_AccessionNumber, "");
  Put(dataset, DCM_Modality, "MR");
  Put(dataset, DCM_FrameOfReferenceUID, frameOfReferenceUID);
  Put(dataset, DCM_PositionReferenceIndicator, "");
  Put(dataset, DCM_Manufacturer, "");
  Put(dataset, DCM_ScanningSequence, "RM");
  Put(dataset, DCM_SequenceVariant, "NONE");
  Put(dataset, DCM_ScanOptions, "");
  Put(dataset, DCM_MRAcquisitionType, "");
  Put(dataset, DCM_EchoTime, "");
  Put(dataset, DCM_EchoTrainLength, "");
  Put(dataset, DCM_RepetitionTime, "");
  Put(dataset, DCM_SliceThickness, FormatDecimalString(sliceThickness));
  Put(dataset, DCM_PhotometricInterpretation, "MONOCHROME2");
}

std::string
ImageTypeOf(DcmItem * source)
{
  std::string imageType = "DERIVED\\SECONDARY";
  OFString    value;
  for (unsigned long i = 2; source != nullptr && source->findAndGetOFString(DCM_ImageType, value, i).good(); ++i)
  {
    imageType += "\\" + std::string(value.c_str());
  }
  return imageType;
}

// The steps of writing a derived series, in the order WriteDicomSeriesParts takes them.

/** The range of every value of every part, and whether they are all whole numbers: one rescale spans the whole
 * series, so that readers which assume one (dcm2niix) are right too. */
struct ValueRange
{
  float low{ 0.0f };
  float high{ 0.0f };
  bool  integral{ true };
};

/** What the whole series shares, settled before any file is written. */
struct SeriesPlan
{
  std::vector<std::vector<std::string>> transferSyntaxes; // [part][slice]: one that cannot be written stops here
  std::size_t                           files{ 0 };
  DicomPixelFormat                      format{ 16, 16, false };
  DicomRescale                          rescale;
  std::string                           seriesUID;
  std::string                           studyUID;
  std::string                           frameOfReferenceUID;
  std::string                           date;
  std::string                           time;
};

double
StoredMinimum(const DicomPixelFormat & format)
{
  return format.isSigned ? -std::ldexp(1.0, format.bitsStored - 1) : 0.0;
}

double
StoredMaximum(const DicomPixelFormat & format)
{
  return format.isSigned ? std::ldexp(1.0, format.bitsStored - 1) - 1.0 : std::ldexp(1.0, format.bitsStored) - 1.0;
}

/** Throws DicomError for a part DICOM cannot hold or whose source does not match it slice for slice. */
void
CheckPartFits(const DicomVolumeImage * image, const DicomVolume * source)
{
  const auto size = image->GetLargestPossibleRegion().GetSize();
  if (source != nullptr && source->slices.size() != size[2])
  {
    throw DicomError("the volume has " + std::to_string(size[2]) + " slices but its source series has " +
                     std::to_string(source->slices.size()));
  }
  if (size[0] > 65535 || size[1] > 65535)
  {
    throw DicomError("slices of " + std::to_string(size[0]) + "x" + std::to_string(size[1]) +
                     " pixels are too large for DICOM");
  }
}

ValueRange
RangeOfValues(const std::vector<const DicomVolumeImage *> & images)
{
  ValueRange range;
  for (std::size_t part = 0; part < images.size(); ++part)
  {
    const float *     values = images[part]->GetBufferPointer();
    const std::size_t count = images[part]->GetLargestPossibleRegion().GetNumberOfPixels();
    const auto [lowIt, highIt] = std::minmax_element(values, values + count);
    range.low = part == 0 ? *lowIt : std::min(range.low, *lowIt);
    range.high = part == 0 ? *highIt : std::max(range.high, *highIt);
    range.integral = range.integral && std::all_of(values, values + count, [](float v) { return v == std::round(v); });
  }
  return range;
}

/** A DICOM source keeps its representation. Otherwise whole numbers that fit 16 bits are stored as they are, and
 * anything else spans the unsigned 16-bit range. */
void
ChooseStoredRepresentation(const DicomVolume * firstSource, const ValueRange & range, SeriesPlan & plan)
{
  DicomRescale preferred{ 0.0, 0.0 }; // slope 0: no preference
  if (firstSource != nullptr)
  {
    plan.format = firstSource->format;
    preferred = { firstSource->slices.front().rescaleSlope, firstSource->slices.front().rescaleIntercept };
  }
  else if (range.integral && range.low >= -32768.0 && range.high <= (range.low < 0.0 ? 32767.0 : 65535.0))
  {
    plan.format.isSigned = range.low < 0.0;
    preferred = { 1.0, 0.0 };
  }
  plan.rescale = ChooseDicomRescale(range.low, range.high, plan.format, preferred);
}

SeriesPlan
PlanSeries(const std::vector<const DicomVolumeImage *> & images,
           const std::vector<const DicomVolume *> &      sources,
           const DicomWriteOptions &                     options)
{
  if (images.empty() || sources.size() != images.size())
  {
    throw DicomError("a derived series needs one source (or null) per part: " + std::to_string(images.size()) +
                     " parts, " + std::to_string(sources.size()) + " sources");
  }
  SeriesPlan plan;
  plan.transferSyntaxes.resize(images.size());
  for (std::size_t part = 0; part < images.size(); ++part)
  {
    CheckPartFits(images[part], sources[part]);
    const std::size_t slices = images[part]->GetLargestPossibleRegion().GetSize(2);
    plan.files += slices;
    for (std::size_t k = 0; k < slices; ++k)
    {
      plan.transferSyntaxes[part].push_back(ResolveDicomOutputSyntax(
        options.transferSyntax, sources[part] != nullptr ? sources[part]->slices[k].transferSyntaxUID : ""));
    }
  }
  ChooseStoredRepresentation(sources.front(), RangeOfValues(images), plan);
  OFString date, time;
  DcmDate::getCurrentDate(date);
  DcmTime::getCurrentTime(time);
  plan.date = date.c_str();
  plan.time = time.c_str();
  plan.seriesUID = NewUID(SITE_SERIES_UID_ROOT);
  plan.studyUID = NewUID(SITE_STUDY_UID_ROOT);
  plan.frameOfReferenceUID = NewUID(SITE_UID_ROOT ".1.5");
  return plan;
}

/** The source slice's attributes, less those that would misdescribe the derived pixels, with a reference back
 * to it; `sourceFile` keeps the source's own dataset for the attributes taken from it later. */
void
CopySourceSlice(DcmDataset * dataset, const DicomSliceSource & sourceSlice, DcmFileFormat & sourceFile)
{
  const OFCondition status = sourceFile.loadFileUntilTag(
    sourceSlice.file.c_str(), EXS_Unknown, EGL_noChange, DCM_MaxReadLength, ERM_autoDetect, DCM_PixelData);
  if (status.bad())
  {
    throw DicomError(sourceSlice.file + ": cannot be read again as the source of the derived series: " +
                     status.text());
  }
  dataset->copyFrom(*sourceFile.getDataset());
  if (sourceSlice.framesInFile > 1)
  {
    // One frame of a multi-frame file becomes a classic single-frame image (docs/dicom.md says why).
    FlattenFunctionalGroups(dataset, sourceSlice.frame);
  }
  RemoveSourcePixelAttributes(dataset);
  DcmItem * reference = nullptr;
  if (dataset->findOrCreateSequenceItem(DCM_SourceImageSequence, reference, -2).good())
  {
    Put(reference, DCM_ReferencedSOPClassUID, GetString(sourceFile.getDataset(), DCM_SOPClassUID));
    Put(reference, DCM_ReferencedSOPInstanceUID, GetString(sourceFile.getDataset(), DCM_SOPInstanceUID));
    if (sourceSlice.framesInFile > 1)
    {
      Put(reference, DCM_ReferencedFrameNumber, std::to_string(sourceSlice.frame + 1));
    }
  }
}

/** The new series' identity and dates, its description, and the instance's number within it. */
void
PutSeriesAttributes(DcmDataset *              dataset,
                    const DicomWriteOptions & options,
                    const SeriesPlan &        plan,
                    DcmItem *                 sourceDataset,
                    std::size_t               instanceNumber)
{
  const std::string sourceSeriesNumber = sourceDataset != nullptr ? GetString(dataset, DCM_SeriesNumber) : "";
  const int         seriesNumber = options.seriesNumber != 0     ? options.seriesNumber
                                   : !sourceSeriesNumber.empty() ? std::atoi(sourceSeriesNumber.c_str()) + 1000
                                                                 : 1000;
  Put(dataset, DCM_SOPInstanceUID, NewUID(SITE_INSTANCE_UID_ROOT));
  Put(dataset, DCM_SeriesInstanceUID, plan.seriesUID);
  Put(dataset, DCM_SeriesNumber, std::to_string(seriesNumber));
  Put(dataset, DCM_SeriesDescription, options.seriesDescription.substr(0, 64));
  for (const auto & [dateTag, timeTag] : { std::pair{ DCM_SeriesDate, DCM_SeriesTime },
                                           std::pair{ DCM_ContentDate, DCM_ContentTime },
                                           std::pair{ DCM_InstanceCreationDate, DCM_InstanceCreationTime } })
  {
    Put(dataset, dateTag, plan.date);
    Put(dataset, timeTag, plan.time);
  }
  Put(dataset, DCM_ImageType, ImageTypeOf(sourceDataset));
  Put(dataset, DCM_DerivationDescription, options.derivationDescription.substr(0, 1024));
  Put(dataset, DCM_InstanceNumber, std::to_string(instanceNumber));
}

/** Slice k's position, orientation and spacing, from the volume's grid. */
void
PutSliceGeometry(DcmDataset * dataset, const DicomVolumeImage * image, std::size_t k, const SeriesPlan & plan)
{
  const auto &                direction = image->GetDirection();
  const auto &                spacing = image->GetSpacing();
  DicomVolumeImage::IndexType corner{ { 0, 0, static_cast<itk::IndexValueType>(k) } };
  DicomVolumeImage::PointType position;
  image->TransformIndexToPhysicalPoint(corner, position);
  std::string orientation;
  for (unsigned int column = 0; column < 2; ++column)
  {
    for (unsigned int i = 0; i < 3; ++i)
    {
      orientation += (orientation.empty() ? "" : "\\") + FormatDecimalString(direction[i][column]);
    }
  }
  Put(dataset,
      DCM_ImagePositionPatient,
      FormatDecimalString(position[0]) + "\\" + FormatDecimalString(position[1]) + "\\" +
        FormatDecimalString(position[2]));
  Put(dataset, DCM_ImageOrientationPatient, orientation);
  Put(dataset, DCM_PixelSpacing, FormatDecimalString(spacing[1]) + "\\" + FormatDecimalString(spacing[0]));
  // A source without the Image Plane module (secondary capture, NM) has none of what it needs: the slice
  // thickness (Type 2) and a frame of reference for the positions written (one new one for the series).
  if (!dataset->tagExists(DCM_SliceThickness))
  {
    Put(dataset, DCM_SliceThickness, "");
  }
  if (GetString(dataset, DCM_FrameOfReferenceUID).empty())
  {
    Put(dataset, DCM_FrameOfReferenceUID, plan.frameOfReferenceUID);
    if (!dataset->tagExists(DCM_PositionReferenceIndicator))
    {
      Put(dataset, DCM_PositionReferenceIndicator, "");
    }
  }
  double sliceLocation = 0.0;
  for (unsigned int i = 0; i < 3; ++i)
  {
    sliceLocation += position[i] * direction[i][2];
  }
  Put(dataset, DCM_SliceLocation, FormatDecimalString(sliceLocation));
  if (image->GetLargestPossibleRegion().GetSize(2) > 1)
  {
    Put(dataset, DCM_SpacingBetweenSlices, FormatDecimalString(spacing[2]));
  }
}

/** The image pixel module and the rescale in the series' representation; `sourceSlice` (or null) tells whether
 * the source carried a rescale of its own, which is then written even when it is the identity. */
void
PutPixelDescription(DcmDataset *               dataset,
                    std::size_t                columns,
                    std::size_t                rows,
                    const SeriesPlan &         plan,
                    const DicomSliceSource *   sourceSlice)
{
  const DicomPixelFormat & format = plan.format;
  Put(dataset, DCM_SamplesPerPixel, "1");
  if (GetString(dataset, DCM_PhotometricInterpretation).empty())
  {
    Put(dataset, DCM_PhotometricInterpretation, "MONOCHROME2");
  }
  dataset->putAndInsertUint16(DCM_Rows, static_cast<Uint16>(rows));
  dataset->putAndInsertUint16(DCM_Columns, static_cast<Uint16>(columns));
  dataset->putAndInsertUint16(DCM_BitsAllocated, static_cast<Uint16>(format.bitsAllocated));
  dataset->putAndInsertUint16(DCM_BitsStored, static_cast<Uint16>(format.bitsStored));
  dataset->putAndInsertUint16(DCM_HighBit, static_cast<Uint16>(format.bitsStored - 1));
  dataset->putAndInsertUint16(DCM_PixelRepresentation, format.isSigned ? 1 : 0);
  const bool identity = plan.rescale.slope == 1.0 && plan.rescale.intercept == 0.0;
  if (!identity || (sourceSlice != nullptr && sourceSlice->rescaleSlope != 1.0) ||
      (sourceSlice != nullptr && sourceSlice->rescaleIntercept != 0.0))
  {
    Put(dataset, DCM_RescaleSlope, FormatDecimalString(plan.rescale.slope));
    Put(dataset, DCM_RescaleIntercept, FormatDecimalString(plan.rescale.intercept));
  }
}

/** The slice's values stored through the rescale as written in `dataset` (DS keeps 16 characters: quantising
 * with it gives readers these values), clamped to the format's range. */
void
PutStoredPixels(DcmDataset * dataset, const float * slice, std::size_t count, const DicomPixelFormat & format)
{
  Float64 slope = 1.0, intercept = 0.0;
  if (dataset->findAndGetFloat64(DCM_RescaleSlope, slope).bad() ||
      dataset->findAndGetFloat64(DCM_RescaleIntercept, intercept).bad())
  {
    slope = 1.0; // DCMTK zeroes the value when the attribute is absent
    intercept = 0.0;
  }
  const double        storedMin = StoredMinimum(format);
  const double        storedMax = StoredMaximum(format);
  const double        mask = std::ldexp(1.0, format.bitsAllocated); // two's complement wrap
  std::vector<Uint16> stored16(format.bitsAllocated == 16 ? count : 0);
  std::vector<Uint8>  stored8(format.bitsAllocated == 8 ? count : 0);
  for (std::size_t i = 0; i < count; ++i)
  {
    double stored = std::min(storedMax, std::max(storedMin, std::round((slice[i] - intercept) / slope)));
    if (stored < 0.0)
    {
      stored += mask;
    }
    if (format.bitsAllocated == 16)
      stored16[i] = static_cast<Uint16>(stored);
    else
      stored8[i] = static_cast<Uint8>(stored);
  }
  const OFCondition status =
    format.bitsAllocated == 16
      ? dataset->putAndInsertUint16Array(DCM_PixelData, stored16.data(), static_cast<unsigned long>(count))
      : dataset->putAndInsertUint8Array(DCM_PixelData, stored8.data(), static_cast<unsigned long>(count));
  if (status.bad())
  {
    throw DicomError(std::string("cannot store pixel data: ") + status.text());
  }
}

/** The source's loss is in these pixels too (PS3.3 C.7.6.1.1.5: once lossy, always "01"). */
void
MarkLossySource(DcmDataset * dataset, const DicomSliceSource & sourceSlice)
{
  if (!sourceSlice.lossyCompressed)
  {
    return;
  }
  Put(dataset, DCM_LossyImageCompression, "01");
  const std::string method = LossyCompressionMethod(sourceSlice.transferSyntaxUID);
  if (!method.empty() && GetString(dataset, DCM_LossyImageCompressionMethod).empty())
  {
    Put(dataset, DCM_LossyImageCompressionMethod, method);
  }
}

/** Encodes the pixels in `transferSyntax` and saves the file as <directory>/IM<number>.dcm; returns its path. */
std::string
SaveSlice(DcmFileFormat &     file,
          const std::string & directory,
          std::size_t         number,
          std::size_t         files,
          const std::string & transferSyntax)
{
  const int          digits = std::max(4, static_cast<int>(std::to_string(files).size()));
  std::ostringstream name;
  name << directory << "/" << DicomSeriesFiles().prefix << std::setw(digits) << std::setfill('0') << number
       << DicomSeriesFiles().extension;
  EncodeDicomPixelData(file.getDataset(), transferSyntax);
  const OFCondition status = file.saveFile(name.str().c_str(), DcmXfer(transferSyntax.c_str()).getXfer());
  if (status.bad())
  {
    throw DicomError(name.str() + ": cannot be written: " + status.text());
  }
  return name.str();
}

} // namespace

DicomRescale
ChooseDicomRescale(double low, double high, const DicomPixelFormat & format, const DicomRescale & preferred)
{
  const double storedMin = StoredMinimum(format);
  const double storedMax = StoredMaximum(format);
  auto         fits = [&](const DicomRescale & r) {
    return std::round((low - r.intercept) / r.slope) >= storedMin &&
           std::round((high - r.intercept) / r.slope) <= storedMax;
  };
  if (preferred.slope > 0.0 && fits(preferred))
  {
    return preferred;
  }
  if (preferred.slope > 0.0)
  {
    DicomRescale shifted = preferred;
    shifted.intercept += (std::floor((low - preferred.intercept) / preferred.slope) - storedMin) * preferred.slope;
    if (fits(shifted))
    {
      return shifted;
    }
  }
  DicomRescale spanning;
  spanning.slope = high > low ? (high - low) / (storedMax - storedMin) : 1.0;
  spanning.intercept = low - storedMin * spanning.slope;
  return spanning;
}

std::vector<std::string>
WriteDicomSeries(const DicomVolumeImage * image, const std::string & directory, const DicomWriteOptions & options)
{
  return WriteDicomSeriesParts({ image }, { options.source }, directory, options);
}

std::vector<std::string>
WriteDicomSeriesParts(const std::vector<const DicomVolumeImage *> & images,
                      const std::vector<const DicomVolume *> &      sources,
                      const std::string &                           directory,
                      const DicomWriteOptions &                     options)
{
  RegisterDicomCodecs();
  const SeriesPlan plan = PlanSeries(images, sources, options);
  std::vector<std::string> written;
  for (std::size_t part = 0; part < images.size(); ++part)
  {
    const DicomVolumeImage * image = images[part];
    const DicomVolume *      source = sources[part];
    const auto               size = image->GetLargestPossibleRegion().GetSize();
    for (std::size_t k = 0; k < size[2]; ++k)
    {
      DcmFileFormat            file;
      DcmDataset *             dataset = file.getDataset();
      DcmFileFormat            sourceFile;
      const DicomSliceSource * sourceSlice = source != nullptr ? &source->slices[k] : nullptr;
      if (sourceSlice != nullptr)
      {
        CopySourceSlice(dataset, *sourceSlice, sourceFile);
      }
      else
      {
        PutNewStudy(dataset, plan.studyUID, plan.frameOfReferenceUID, plan.date, plan.time, image->GetSpacing()[2]);
      }
      PutSeriesAttributes(
        dataset, options, plan, sourceSlice != nullptr ? sourceFile.getDataset() : nullptr, written.size() + 1);
      PutSliceGeometry(dataset, image, k, plan);
      PutPixelDescription(dataset, size[0], size[1], plan, sourceSlice);
      PutStoredPixels(dataset, image->GetBufferPointer() + k * size[0] * size[1], size[0] * size[1], plan.format);
      if (sourceSlice != nullptr)
      {
        MarkLossySource(dataset, *sourceSlice);
      }
      written.push_back(SaveSlice(file, directory, written.size() + 1, plan.files, plan.transferSyntaxes[part][k]));
    }
  }
  return written;
}

} // namespace svdlr_io
