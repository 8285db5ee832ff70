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
#ifndef SVDLowRankJpeg2000Header_h
#define SVDLowRankJpeg2000Header_h

// The image header of a JPEG 2000 frame (ISO/IEC 15444-1 Annex A.5.1, the SIZ marker segment), read and checked
// against the DICOM header before any JPEG 2000 decoder sees the frame. GDCM 3.0.21 and OpenJPEG 2.5.0 read
// outside their buffers, abort or allocate without bound on code streams whose SIZ is cut short or describes
// another image than the DICOM header does (found by apps/fuzz); the frames they would decode must describe
// the image the reader expects: Rows x Columns, SamplesPerPixel components, at most BitsAllocated bits each.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

class DcmFileFormat;

namespace svdlr_io
{

/** One component of the SIZ segment: Ssiz (precision and sign), XRsiz and YRsiz (its sub-sampling). */
struct Jpeg2000Component
{
  unsigned int precision{ 0 }; // bits, 1..38
  bool         isSigned{ false };
  unsigned int xSubsampling{ 0 };
  unsigned int ySubsampling{ 0 };
};

/** What the SIZ segment says about the image. */
struct Jpeg2000ImageHeader
{
  std::uint32_t                  width{ 0 };  // Xsiz - XOsiz
  std::uint32_t                  height{ 0 }; // Ysiz - YOsiz
  std::uint64_t                  tiles{ 0 };
  std::vector<Jpeg2000Component> components; // Csiz of them
};

/** Reads the SIZ segment at the start of `size` bytes at `data`: a code stream (SOC, then SIZ), or a JP2 file
 * whose contiguous code stream box holds one; `whole` says whether the bytes are the whole frame or its start.
 * Returns why it cannot (no SOC, no SIZ, cut short, a field outside the ranges of ISO/IEC 15444-1 Table A.9, more
 * than 65535 tiles, or a marker segment before the first tile's data that does not fit the bytes); empty when
 * `header` was filled. */
std::string
ReadJpeg2000ImageHeader(const std::uint8_t * data, std::size_t size, bool whole, Jpeg2000ImageHeader & header);

/** Why a frame with `header` is not an image of `columns` x `rows` with `samplesPerPixel` components of at most
 * `bitsAllocated` bits, each sampled on the whole grid; empty when it is. */
std::string
Jpeg2000HeaderMismatch(const Jpeg2000ImageHeader & header, unsigned int rows, unsigned int columns,
                       unsigned int samplesPerPixel, unsigned int bitsAllocated);

/** Checks the SIZ segment of each of the `frames` frames of `dicom`'s encapsulated pixel data (JPEG 2000) against
 * its Rows, Columns, SamplesPerPixel and BitsAllocated (given, as the reader read them). Throws DicomError naming
 * `file` and the frame for a frame whose SIZ is missing, cut short or describes another image. */
void
CheckJpeg2000Frames(DcmFileFormat &     dicom,
                    const std::string & file,
                    unsigned int        frames,
                    unsigned int        rows,
                    unsigned int        columns,
                    unsigned int        bitsAllocated);

} // namespace svdlr_io

#endif
