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
#ifndef SVDLowRankDicomFrames_h
#define SVDLowRankDicomFrames_h

// The frames of a DICOM series: one 2D image each, from a single-frame file or from one frame of a
// multi-frame file (Enhanced MR: geometry, rescale and 4D keys from the Shared and Per-frame Functional
// Groups). Their headers, their pixels, and the volumes they form: one volume, the volumes of a 4D series
// (by echo, temporal position, diffusion b-value and direction), or images that form no volume and are
// read one by one with their own geometry. No DCMTK type appears in this header.

#include "SVDLowRankDicomSeries.h"

#include <array>
#include <limits>
#include <string>
#include <vector>

namespace svdlr_io
{

using DicomVector3 = std::array<double, 3>;

/** What tells the volumes of a 4D series apart. NaN or -1 where a frame does not say. */
struct DicomFrameKey
{
  static constexpr double Unknown = std::numeric_limits<double>::quiet_NaN();

  int              echoNumber{ -1 };        // EchoNumbers (0018,0086)
  double           echoTime{ Unknown };     // EchoTime (0018,0081), Enhanced: EffectiveEchoTime (0018,9082)
  int              temporalPosition{ -1 };  // TemporalPositionIdentifier (0020,0100), Enhanced: TemporalPositionIndex
  double           triggerTime{ Unknown };  // TriggerTime (0018,1060), Enhanced: NominalCardiacTriggerDelayTime
  int              acquisitionNumber{ -1 }; // AcquisitionNumber (0020,0012)
  double           bValue{ Unknown };       // DiffusionBValue (0018,9087), or the Siemens/GE private ones
  DicomVector3     gradient{ { Unknown, Unknown, Unknown } }; // DiffusionGradientOrientation (0018,9089)
  std::vector<int> dimensionIndex; // Enhanced: DimensionIndexValues without the in-stack position
};

/** One 2D image of a series and how to read it. */
struct DicomFrame
{
  std::string   file;
  unsigned int  frame{ 0 };                // 0-based frame number within the file
  unsigned int  framesInFile{ 1 };         // > 1: a multi-frame file
  unsigned int  rows{ 0 };
  unsigned int  columns{ 0 };
  bool          hasPosition{ false };
  DicomVector3  position{ { 0.0, 0.0, 0.0 } };
  bool          hasOrientation{ false };
  DicomVector3  rowDirection{ { 1.0, 0.0, 0.0 } };    // along a row: increasing column index
  DicomVector3  columnDirection{ { 0.0, 1.0, 0.0 } }; // down a column: increasing row index
  double        rowSpacing{ 1.0 };                    // PixelSpacing[0]: between rows
  double        columnSpacing{ 1.0 };                 // PixelSpacing[1]: between columns
  double        sliceThickness{ 0.0 };
  double        spacingBetweenSlices{ 0.0 };
  unsigned int  bitsAllocated{ 0 };
  unsigned int  bitsStored{ 0 };
  unsigned int  highBit{ 0 };
  bool          isSigned{ false };
  unsigned int  samplesPerPixel{ 1 };
  std::string   photometric;
  double        slope{ 1.0 };
  double        intercept{ 0.0 };
  std::string   transferSyntaxUID;        // the file's, from its meta information
  bool          lossyCompressed{ false }; // LossyImageCompression "01", or a lossy transfer syntax
  DicomFrameKey key;

  /** "file" or "file, frame 3" (1-based, as DICOM counts frames): how messages name the frame. */
  std::string
  Name() const
  {
    return framesInFile > 1 ? file + ", frame " + std::to_string(frame + 1) : file;
  }
};

/** The headers of every frame of `series`, checked (greyscale, 8 or 16 bits), in file order. */
std::vector<DicomFrame>
ReadDicomFrames(const DicomSeriesSummary & series);

/** Why `frames` (any order) do not form one volume with slices on a regular grid (within
 * `spacingTolerance` of the slice spacing); "" when they do. The message names the frame at fault. */
std::string
WhyNotOneVolume(const std::vector<DicomFrame> & frames, double spacingTolerance = 0.01);

/** How a series was read. */
enum class DicomLayout
{
  Volume,  // one volume, as ReadDicomSeries reads it
  Volumes, // the volumes of a 4D series, one part each
  Images   // no volume: one part per image, each with its own geometry
};

/** A series read whole: one part (Volume), one per 4D group (Volumes) or one per image (Images, each part a
 * one-slice volume). */
struct DicomImageSet
{
  DicomLayout              layout{ DicomLayout::Volume };
  std::vector<DicomVolume> parts;
  std::vector<std::string> names;  // per part: "echo 2 (TE 20 ms)", or the image's file (and frame)
  std::string              by;     // Volumes: what the groups differ by ("echo", "b-value, gradient", ...)
  std::string              reason; // Images: why the series forms no volume (WhyNotOneVolume's message)
};

/** Reads a series, classic or Enhanced multi-frame, as volumes where it forms them and image by image where
 * it does not. With `requireVolume` anything but one volume is a DicomError, as ReadDicomSeries. */
DicomImageSet
ReadDicomImages(const DicomSeriesSummary & series, bool requireVolume = false, double spacingTolerance = 0.01);

/** "one volume", "3 volumes by echo", "5 images (no volume: ...)" for summaries. */
std::string
DescribeDicomLayout(const DicomImageSet & set);

} // namespace svdlr_io

#endif
