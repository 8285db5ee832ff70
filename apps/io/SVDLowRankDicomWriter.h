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
#ifndef SVDLowRankDicomWriter_h
#define SVDLowRankDicomWriter_h

// Writing a volume as a derived DICOM series through DCMTK: one file per slice along the volume's
// third axis, new Series and SOP Instance UIDs, ImageType DERIVED\SECONDARY, the source's patient,
// study and frame of reference carried over, pixels in the source's representation.

#include "SVDLowRankDicomCodecs.h"
#include "SVDLowRankDicomSeries.h"
#include "SVDLowRankStagedOutput.h"

#include <string>
#include <vector>

namespace svdlr_io
{

struct DicomWriteOptions
{
  /** SeriesDescription (LO, cut to 64 characters), e.g. "SVD rank 20 of t1_mprage". */
  std::string seriesDescription;
  /** DerivationDescription: how the pixels were made. */
  std::string derivationDescription;
  /** The series the volume was derived from, slice for slice; null for a volume that did not come from
   * DICOM, which then starts a new (anonymous) patient and study as an MR image series, stored in 16 bits:
   * whole numbers as they are, other values spanning the range through RescaleSlope/Intercept. */
  const DicomVolume * source{ nullptr };
  /** 0: the source's SeriesNumber + 1000 (or 1000 without a source). */
  int seriesNumber{ 0 };
  /** The transfer syntax of the files (ResolveDicomOutputSyntax): by default each slice's source syntax where
   * it can be written losslessly, else Explicit VR Little Endian. */
  DicomOutputSyntax transferSyntax{ DicomOutputSyntax::Keep };
};

/** RescaleSlope and RescaleIntercept for stored pixels: value = stored * slope + intercept. */
struct DicomRescale
{
  double slope{ 1.0 };
  double intercept{ 0.0 };
};

/** The rescale that stores values in [low, high] in `format`: `preferred` (the source's) when the values
 * fit it; else the same slope with the intercept shifted by whole steps (the source's quantisation
 * grid is kept); else a larger slope spanning the format's range. */
DicomRescale
ChooseDicomRescale(double low, double high, const DicomPixelFormat & format, const DicomRescale & preferred);

/** The files a derived series is written as: IM0001.dcm, ... (what --overwrite may replace in a folder output). */
inline NumberedFiles
DicomSeriesFiles()
{
  return { "IM", ".dcm" };
}

/** Writes `image` as a derived series into the existing folder `directory` (IM0001.dcm, ...), in
 * `options.transferSyntax`. A slice whose source lost information to compression says so
 * (LossyImageCompression "01", with the method when known). Returns the files written, slice 0 first.
 * Throws DicomError, before writing any file when the transfer syntax cannot be written. */
std::vector<std::string>
WriteDicomSeries(const DicomVolumeImage * image, const std::string & directory, const DicomWriteOptions & options);

/** Writes several volumes as one derived series (one SeriesInstanceUID, InstanceNumbers and file names running
 * on from part to part): the volumes of a 4D series, or the images of a series that forms no volume (one-slice
 * parts, each with its own position, orientation, spacing and size). sources[p] is the source of images[p], or
 * null; options.source is not used. One rescale spans all parts. A frame of a multi-frame (Enhanced) source is
 * written as a classic single-frame MR image. Transfer syntax and lossy marking per slice as WriteDicomSeries. */
std::vector<std::string>
WriteDicomSeriesParts(const std::vector<const DicomVolumeImage *> & images,
                      const std::vector<const DicomVolume *> &      sources,
                      const std::string &                           directory,
                      const DicomWriteOptions &                     options);

} // namespace svdlr_io

#endif
