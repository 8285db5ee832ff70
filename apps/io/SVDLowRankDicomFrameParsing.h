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
#ifndef SVDLowRankDicomFrameParsing_h
#define SVDLowRankDicomFrameParsing_h

// Inside the I/O library: the DCMTK side of SVDLowRankDicomFrames.h, shared by the volume reader (classic
// headers, pixels), the Enhanced multi-frame parser and the writer (which turns an Enhanced frame's header into
// a classic one). Includes DCMTK.

#include "SVDLowRankDicomFrames.h"
#include "SVDLowRankDicomTags.h"

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace svdlr_io
{

inline DicomVector3
Cross(const DicomVector3 & a, const DicomVector3 & b)
{
  return { { a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0] } };
}

inline double
Dot(const DicomVector3 & a, const DicomVector3 & b)
{
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/** "(x, y, z)" for messages. */
inline std::string
FormatVector(const DicomVector3 & v)
{
  std::ostringstream text;
  text << "(" << v[0] << ", " << v[1] << ", " << v[2] << ")";
  return text.str();
}

/** The first `count` values of the decimal attribute `tag` of `item` into `values`; false, when `item` is null or a
 * value is missing, after the values before it. */
inline bool
GetDecimals(DcmItem * item, const DcmTagKey & tag, double * values, unsigned long count)
{
  Float64 value = 0.0;
  for (unsigned long i = 0; i < count; ++i)
  {
    if (item == nullptr || item->findAndGetFloat64(tag, value, i).bad())
      return false;
    values[i] = value;
  }
  return true;
}

/** The header of a classic image (top-level attributes): geometry, pixel format, rescale, 4D keys. For a
 * multi-frame file it describes every frame alike (frame 0, framesInFile set). */
DicomFrame
ParseClassicFrame(DcmItem * dataset, const std::string & file);

/** Sets `frame`'s transfer syntax from the loaded `dicom`'s meta information, and marks it lossy when that
 * syntax is (ParseClassicFrame marks it lossy for LossyImageCompression "01"). */
void
ParseTransferSyntax(DcmFileFormat & dicom, DicomFrame & frame);

/** Refuses what the reader cannot read (colour, other bit depths, inconsistent bits), naming the frame. */
void
CheckSupportedPixels(const DicomFrame & frame);

/** Refuses a NumberOfFrames its file cannot hold (native frames need their pixels' bytes, encapsulated ones at least
 * an 8-byte item each), from the header alone and before a frame entry is made for each: a fuzzed 2 KB file that
 * declared 98,890,234 frames of 16 x 16 pixels filled 24 GB. Call it after CheckSupportedPixels. */
void
CheckFrameCount(const DicomFrame & frame);

/** Refuses non-finite or degenerate geometry and rescales that overflow floats, naming the frame. */
void
CheckFiniteNumbers(const DicomFrame & frame);

/** The frames of a multi-frame file with functional groups (Enhanced MR and its kin): `common` (the file's
 * top-level header) with each frame's position, orientation, spacing, rescale and 4D keys from its Per-frame
 * Functional Groups, else from the Shared ones. Empty when the file has no functional groups. */
std::vector<DicomFrame>
ParseFunctionalGroupFrames(DcmItem * dataset, const DicomFrame & common);

/** The stored values of `frame` of the loaded `dicom`, decoded (DCMTK, or GDCM for JPEG 2000) and turned into
 * physical values. GDCM decodes every frame of a file at once: `decodedFrames`, when given, keeps them for the
 * file's other frames (empty on the first call for a file; the caller clears it when the file changes). */
void
ReadFramePixels(DcmFileFormat &             dicom,
                const DicomFrame &          frame,
                float *                     output,
                std::vector<std::uint8_t> * decodedFrames = nullptr);

/** Turns a copy of an Enhanced multi-frame header into the header of its frame `frame` as a classic
 * single-frame MR image: the frame's functional group attributes moved to the top level (position, orientation,
 * spacing, echo time, repetition time, diffusion, trigger time, window), the multi-frame structure removed,
 * SOP Class MR Image Storage. */
void
FlattenFunctionalGroups(DcmItem * dataset, unsigned int frame);

} // namespace svdlr_io

#endif
