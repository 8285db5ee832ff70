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
#ifndef SVDLowRankDicomSeries_h
#define SVDLowRankDicomSeries_h

// Reading a DICOM series into a volume through DCMTK: finding the series in files and folders,
// grouping them by SeriesInstanceUID, ordering slices along the slice normal, and building the
// volume's geometry (LPS, as ITK's GDCM reader does). No DCMTK type appears in this header.

#include "itkImage.h"
#include "SVDLowRankImageFileErrors.h"

#include <cstddef>
#include <string>
#include <vector>

namespace svdlr_io
{

/** Volumes read from DICOM hold physical values (RescaleSlope and RescaleIntercept applied). */
using DicomVolumeImage = itk::Image<float, 3>;

/** A file that cannot be read or does not fit its series. The message names the file. */
SVDLR_DECLARE_ERROR(DicomError, std::runtime_error);

/** A file that belongs to a series but cannot be used as one of its images, and why. */
struct DicomUnusableFile
{
  std::string file;
  std::string reason;
};

/** What part of the complex MR signal an image holds: from ComplexImageComponent (0008,9208), ImageType (0008,0008)
 * or GE's private image type (0043,102F), as DicomComplexPartOf (SVDLowRankDicomComplexPairs.h) reads them. */
enum class DicomComplexPart
{
  Unknown,
  Magnitude,
  Phase,
  Real,
  Imaginary
};

/** One series found among the input files, as --list-series shows it. */
struct DicomSeriesSummary
{
  std::string              seriesInstanceUID;
  std::string              seriesNumber;
  std::string              seriesDescription;
  std::string              modality;
  unsigned int             rows{ 0 };
  unsigned int             columns{ 0 };
  std::vector<std::string> files; // in the order found; ReadDicomSeries orders them
  std::string              studyInstanceUID;
  std::string              frameOfReferenceUID;
  std::string              manufacturer;
  /** The distinct complex parts of its files, in the order first seen: one for a magnitude or a phase series, two
   * where a series holds both (GE's and Philips' magnitude and phase in one series). */
  std::vector<DicomComplexPart> complexParts;
  /** Files of this series (by SeriesInstanceUID) that are no usable image (no Rows or Columns, an image SOP class
   * or none): the series would lack their slices, so it is not read at all (DicomSeriesProblem says why). */
  std::vector<DicomUnusableFile> unusable;
};

/** What FindDicomSeries tells besides the series it found. */
struct DicomSearchNotes
{
  /** Files left out as clearly no part of an image series, each "path: why": a DICOMDIR, a non-image object (a
   * structured report, a presentation state), a file that is not DICOM at all. Tools print each as a note. */
  std::vector<std::string> leftOut;
  /** Set it to collect, in `unreadable` ("path: why"), the files that cannot be read and whose series therefore
   * cannot be told, instead of failing at the first one (--list-series lists every readable series). */
  bool                     listUnreadable{ false };
  std::vector<std::string> unreadable;
};

/** How the source stored its pixels: what a derived series is written back in. */
struct DicomPixelFormat
{
  unsigned int bitsAllocated{ 16 };
  unsigned int bitsStored{ 16 };
  bool         isSigned{ false };
};

/** Where one slice of a volume came from, with the rescale that turned its stored values into the
 * volume's values. */
struct DicomSliceSource
{
  std::string  file;
  unsigned int frame{ 0 };        // 0-based frame within the file
  unsigned int framesInFile{ 1 }; // > 1: one frame of a multi-frame (Enhanced) file
  double       rescaleSlope{ 1.0 };
  double       rescaleIntercept{ 0.0 };
  /** The file's transfer syntax UID (svdlr_io::DescribeTransferSyntax names it). */
  std::string transferSyntaxUID;
  /** Its pixels lost information to compression (LossyImageCompression "01" or a lossy transfer syntax):
   * whatever is derived from them says so too. */
  bool lossyCompressed{ false };
};

/** A series read as a volume. slices[k] is the file (and frame) of slice k along the volume's third axis. */
struct DicomVolume
{
  DicomVolumeImage::Pointer     image;
  std::vector<DicomSliceSource> slices;
  DicomPixelFormat              format;
  std::string                   seriesInstanceUID;
  std::string                   seriesDescription;
};

/** Registers DCMTK's decoders (JPEG, JPEG-LS, RLE) and encoders (JPEG, JPEG-LS, RLE) once per process.
 * Called by the functions below; call it yourself before decoding with DCMTK directly. */
void
RegisterDicomCodecs();

/** Keeps DCMTK's own log messages off stderr: what goes wrong comes back as a DicomError instead. */
void
SilenceDicomWarnings();

/** Whether `path` is a regular file that starts like a DICOM Part 10 file ("DICM" after the preamble). */
bool
HasDicomPreamble(const std::string & path);

/** The image series among `paths` (files, and folders searched recursively), ordered by series number then UID.
 * Nothing is left out without a word. In a folder, hidden files and folders (.git, macOS's ._ files, staged
 * outputs) are not looked at, as in the batch's search, nor are files that neither start like DICOM ("DICM" after
 * the preamble) nor are named like it (.dcm, .dicom, .ima, no extension). Of the others:
 * - a file clearly no part of an image series (a DICOMDIR, a non-image SOP class, a file without the preamble or
 *   any DICOM attribute) is left out and listed in `notes->leftOut`;
 * - a file of an image series that is no usable image goes to its series' `unusable`, and that series cannot be
 *   read (DicomSeriesProblem);
 * - a file that cannot be opened or parsed, whose series is therefore unknown, is a DicomError naming it (or is
 *   listed in `notes->unreadable` when `notes->listUnreadable`).
 * A file named in `paths` is taken as DICOM whatever its name: it is a DicomError (or listed) if it is no image. */
std::vector<DicomSeriesSummary>
FindDicomSeries(const std::vector<std::string> & paths, DicomSearchNotes * notes = nullptr);

/** Why `series` cannot be read whole ("" when it can): the files of it that are unusable, named with their reason.
 * ReadDicomSeries, ReadDicomImages and the batch's inputs refuse such a series with this message. */
std::string
DicomSeriesProblem(const DicomSeriesSummary & series);

/** A table of `series` for people: number, files, size, modality, description, UID; below it, the series that
 * cannot be read whole and why. */
std::string
DescribeDicomSeries(const std::vector<DicomSeriesSummary> & series);

/** The series picked by `choice`: its SeriesInstanceUID, or its 1-based row in DescribeDicomSeries().
 * An empty choice is fine when there is exactly one series. Otherwise a DicomError that lists them. */
const DicomSeriesSummary &
SelectDicomSeries(const std::vector<DicomSeriesSummary> & series, const std::string & choice);

/** Reads one series as a volume (classic single-frame files, or an Enhanced multi-frame file whose frames
 * form one volume): slices ordered by their position along the slice normal (not by file
 * name or InstanceNumber), origin at the first slice's ImagePositionPatient, direction from
 * ImageOrientationPatient, spacing from PixelSpacing and the measured distance between slices,
 * RescaleSlope/Intercept applied. Each slice must lie within `spacingTolerance` (relative to the slice
 * spacing) of a regular grid. Throws DicomError naming the file for anything it cannot read, and for series
 * that form no single volume (ReadDicomImages in SVDLowRankDicomFrames.h reads those). */
DicomVolume
ReadDicomSeries(const DicomSeriesSummary & series, double spacingTolerance = 0.01);

} // namespace svdlr_io

#endif
