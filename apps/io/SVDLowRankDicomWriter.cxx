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

} // namespace

DicomRescale
ChooseDicomRescale(double low, double high, const DicomPixelFormat & format, const DicomRescale & preferred)
{
  const double storedMin = format.isSigned ? -std::ldexp(1.0, format.bitsStored - 1) : 0.0;
  const double storedMax =
    format.isSigned ? std::ldexp(1.0, format.bitsStored - 1) - 1.0 : std::ldexp(1.0, format.bitsStored) - 1.0;
  auto fits = [&](const DicomRescale & r) {
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
  if (images.empty() || sources.size() != images.size())
  {
    throw DicomError("a derived series needs one source (or null) per part: " + std::to_string(images.size()) +
                     " parts, " + std::to_string(sources.size()) + " sources");
  }
  std::size_t files = 0;
  float       low = 0.0f, high = 0.0f;
  bool        integral = true;
  // Every slice's transfer syntax before any file is written: one that cannot be written stops here.
  std::vector<std::vector<std::string>> transferSyntaxes(images.size());
  for (std::size_t part = 0; part < images.size(); ++part)
  {
    const auto size = images[part]->GetLargestPossibleRegion().GetSize();
    if (sources[part] != nullptr && sources[part]->slices.size() != size[2])
    {
      throw DicomError("the volume has " + std::to_string(size[2]) + " slices but its source series has " +
                       std::to_string(sources[part]->slices.size()));
    }
    if (size[0] > 65535 || size[1] > 65535)
    {
      throw DicomError("slices of " + std::to_string(size[0]) + "x" + std::to_string(size[1]) +
                       " pixels are too large for DICOM");
    }
    // One rescale for the whole series, so that readers which assume one (dcm2niix) are right too.
    const float *     values = images[part]->GetBufferPointer();
    const std::size_t count = size[0] * size[1] * size[2];
    const auto [lowIt, highIt] = std::minmax_element(values, values + count);
    low = part == 0 ? *lowIt : std::min(low, *lowIt);
    high = part == 0 ? *highIt : std::max(high, *highIt);
    integral = integral && std::all_of(values, values + count, [](float v) { return v == std::round(v); });
    files += size[2];
    for (std::size_t k = 0; k < size[2]; ++k)
    {
      transferSyntaxes[part].push_back(ResolveDicomOutputSyntax(
        options.transferSyntax, sources[part] != nullptr ? sources[part]->slices[k].transferSyntaxUID : ""));
    }
  }
  const DicomVolume * firstSource = sources.front();
  // A DICOM source keeps its representation. Otherwise whole numbers that fit 16 bits are stored as they
  // are, and anything else spans the unsigned 16-bit range.
  DicomPixelFormat format{ 16, 16, false };
  DicomRescale     preferred{ 0.0, 0.0 }; // slope 0: no preference
  if (firstSource != nullptr)
  {
    format = firstSource->format;
    preferred = { firstSource->slices.front().rescaleSlope, firstSource->slices.front().rescaleIntercept };
  }
  else if (integral && low >= -32768.0 && high <= (low < 0.0 ? 32767.0 : 65535.0))
  {
    format.isSigned = low < 0.0;
    preferred = { 1.0, 0.0 };
  }
  const DicomRescale rescale = ChooseDicomRescale(low, high, format, preferred);
  const double       storedMin = format.isSigned ? -std::ldexp(1.0, format.bitsStored - 1) : 0.0;
  const double       storedMax =
    format.isSigned ? std::ldexp(1.0, format.bitsStored - 1) - 1.0 : std::ldexp(1.0, format.bitsStored) - 1.0;

  OFString date, time;
  DcmDate::getCurrentDate(date);
  DcmTime::getCurrentTime(time);
  const std::string seriesUID = NewUID(SITE_SERIES_UID_ROOT);
  const std::string studyUID = NewUID(SITE_STUDY_UID_ROOT);
  const std::string frameOfReferenceUID = NewUID(SITE_UID_ROOT ".1.5");
  const int         digits = std::max(4, static_cast<int>(std::to_string(files).size()));

  std::vector<std::string> written;
  for (std::size_t part = 0; part < images.size(); ++part)
  {
    const DicomVolumeImage * image = images[part];
    const DicomVolume *      source = sources[part];
    const auto               size = image->GetLargestPossibleRegion().GetSize();
    const std::size_t        slicePixels = size[0] * size[1];
    const float *            values = image->GetBufferPointer();
    const auto &             direction = image->GetDirection();
    std::string              orientation;
    for (unsigned int column = 0; column < 2; ++column)
    {
      for (unsigned int i = 0; i < 3; ++i)
      {
        orientation += (orientation.empty() ? "" : "\\") + FormatDecimalString(direction[i][column]);
      }
    }
    const auto &      spacing = image->GetSpacing();
    const std::string pixelSpacing = FormatDecimalString(spacing[1]) + "\\" + FormatDecimalString(spacing[0]);

    for (std::size_t k = 0; k < size[2]; ++k)
    {
      DcmFileFormat file;
      DcmDataset *  dataset = file.getDataset();
      std::string   sourceSeriesNumber;
      DcmFileFormat sourceFile;
      if (source != nullptr)
      {
        const DicomSliceSource & sourceSlice = source->slices[k];
        const std::string &      sourcePath = sourceSlice.file;
        const OFCondition        status = sourceFile.loadFileUntilTag(
          sourcePath.c_str(), EXS_Unknown, EGL_noChange, DCM_MaxReadLength, ERM_autoDetect, DCM_PixelData);
        if (status.bad())
        {
          throw DicomError(sourcePath + ": cannot be read again as the source of the derived series: " + status.text());
        }
        dataset->copyFrom(*sourceFile.getDataset());
        if (sourceSlice.framesInFile > 1)
        {
          // One frame of a multi-frame file becomes a classic single-frame image (docs/dicom.md says why).
          FlattenFunctionalGroups(dataset, sourceSlice.frame);
        }
        RemoveSourcePixelAttributes(dataset);
        sourceSeriesNumber = GetString(dataset, DCM_SeriesNumber);
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
      else
      {
        PutNewStudy(dataset, studyUID, frameOfReferenceUID, date.c_str(), time.c_str(), spacing[2]);
      }
      const int seriesNumber = options.seriesNumber != 0     ? options.seriesNumber
                               : !sourceSeriesNumber.empty() ? std::atoi(sourceSeriesNumber.c_str()) + 1000
                                                             : 1000;

      Put(dataset, DCM_SOPInstanceUID, NewUID(SITE_INSTANCE_UID_ROOT));
      Put(dataset, DCM_SeriesInstanceUID, seriesUID);
      Put(dataset, DCM_SeriesNumber, std::to_string(seriesNumber));
      Put(dataset, DCM_SeriesDescription, options.seriesDescription.substr(0, 64));
      Put(dataset, DCM_SeriesDate, date.c_str());
      Put(dataset, DCM_SeriesTime, time.c_str());
      Put(dataset, DCM_ContentDate, date.c_str());
      Put(dataset, DCM_ContentTime, time.c_str());
      Put(dataset, DCM_InstanceCreationDate, date.c_str());
      Put(dataset, DCM_InstanceCreationTime, time.c_str());
      Put(dataset, DCM_ImageType, ImageTypeOf(source != nullptr ? sourceFile.getDataset() : nullptr));
      Put(dataset, DCM_DerivationDescription, options.derivationDescription.substr(0, 1024));
      Put(dataset, DCM_InstanceNumber, std::to_string(written.size() + 1));

      // Per-slice geometry, from the volume's grid.
      DicomVolumeImage::IndexType corner{ { 0, 0, static_cast<itk::IndexValueType>(k) } };
      DicomVolumeImage::PointType position;
      image->TransformIndexToPhysicalPoint(corner, position);
      Put(dataset,
          DCM_ImagePositionPatient,
          FormatDecimalString(position[0]) + "\\" + FormatDecimalString(position[1]) + "\\" +
            FormatDecimalString(position[2]));
      Put(dataset, DCM_ImageOrientationPatient, orientation);
      Put(dataset, DCM_PixelSpacing, pixelSpacing);
      // A source without the Image Plane module (secondary capture, NM) has none of what it needs: the slice
      // thickness (Type 2) and a frame of reference for the positions written (one new one for the series).
      if (!dataset->tagExists(DCM_SliceThickness))
      {
        Put(dataset, DCM_SliceThickness, "");
      }
      if (GetString(dataset, DCM_FrameOfReferenceUID).empty())
      {
        Put(dataset, DCM_FrameOfReferenceUID, frameOfReferenceUID);
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
      if (size[2] > 1)
      {
        Put(dataset, DCM_SpacingBetweenSlices, FormatDecimalString(spacing[2]));
      }

      // Pixels in the source representation.
      Put(dataset, DCM_SamplesPerPixel, "1");
      if (GetString(dataset, DCM_PhotometricInterpretation).empty())
      {
        Put(dataset, DCM_PhotometricInterpretation, "MONOCHROME2");
      }
      dataset->putAndInsertUint16(DCM_Rows, static_cast<Uint16>(size[1]));
      dataset->putAndInsertUint16(DCM_Columns, static_cast<Uint16>(size[0]));
      dataset->putAndInsertUint16(DCM_BitsAllocated, static_cast<Uint16>(format.bitsAllocated));
      dataset->putAndInsertUint16(DCM_BitsStored, static_cast<Uint16>(format.bitsStored));
      dataset->putAndInsertUint16(DCM_HighBit, static_cast<Uint16>(format.bitsStored - 1));
      dataset->putAndInsertUint16(DCM_PixelRepresentation, format.isSigned ? 1 : 0);
      const bool identity = rescale.slope == 1.0 && rescale.intercept == 0.0;
      if (!identity || (source != nullptr && source->slices[k].rescaleSlope != 1.0) ||
          (source != nullptr && source->slices[k].rescaleIntercept != 0.0))
      {
        Put(dataset, DCM_RescaleSlope, FormatDecimalString(rescale.slope));
        Put(dataset, DCM_RescaleIntercept, FormatDecimalString(rescale.intercept));
      }
      // DS keeps 16 characters: quantise with the rescale as written, so that readers get these values.
      Float64 slope = 1.0, intercept = 0.0;
      if (dataset->findAndGetFloat64(DCM_RescaleSlope, slope).bad() ||
          dataset->findAndGetFloat64(DCM_RescaleIntercept, intercept).bad())
      {
        slope = 1.0; // DCMTK zeroes the value when the attribute is absent
        intercept = 0.0;
      }

      const float *       slice = values + k * slicePixels;
      std::vector<Uint16> stored16(format.bitsAllocated == 16 ? slicePixels : 0);
      std::vector<Uint8>  stored8(format.bitsAllocated == 8 ? slicePixels : 0);
      const double        mask = std::ldexp(1.0, format.bitsAllocated); // two's complement wrap
      for (std::size_t i = 0; i < slicePixels; ++i)
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
      if (source != nullptr && source->slices[k].lossyCompressed)
      {
        // The source's loss is in these pixels too (PS3.3 C.7.6.1.1.5: once lossy, always "01").
        Put(dataset, DCM_LossyImageCompression, "01");
        const std::string method = LossyCompressionMethod(source->slices[k].transferSyntaxUID);
        if (!method.empty() && GetString(dataset, DCM_LossyImageCompressionMethod).empty())
        {
          Put(dataset, DCM_LossyImageCompressionMethod, method);
        }
      }
      const OFCondition pixelStatus =
        format.bitsAllocated == 16
          ? dataset->putAndInsertUint16Array(DCM_PixelData, stored16.data(), static_cast<unsigned long>(slicePixels))
          : dataset->putAndInsertUint8Array(DCM_PixelData, stored8.data(), static_cast<unsigned long>(slicePixels));
      if (pixelStatus.bad())
      {
        throw DicomError(std::string("cannot store pixel data: ") + pixelStatus.text());
      }

      std::ostringstream name;
      name << directory << "/IM" << std::setw(digits) << std::setfill('0') << written.size() + 1 << ".dcm";
      const std::string & transferSyntax = transferSyntaxes[part][k];
      EncodeDicomPixelData(dataset, transferSyntax);
      const OFCondition status = file.saveFile(name.str().c_str(), DcmXfer(transferSyntax.c_str()).getXfer());
      if (status.bad())
      {
        throw DicomError(name.str() + ": cannot be written: " + status.text());
      }
      written.push_back(name.str());
    }
  }
  return written;
}

} // namespace svdlr_io
