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

// The image header of each JPEG 2000 frame, read by OpenJPEG (opj_read_header) and checked against the DICOM header
// before GDCM decodes the frame: GDCM 3.0.21 reads outside its buffers on code streams whose header runs past the frame
// or describes another image than the DICOM header does (found by apps/fuzz). OpenJPEG allocates for the tiles and
// components a SIZ declares while it reads the header, so this runs in GDCM's child process, under a cap on its address
// space (DecodeFramesWithGdcm), never in the reading process.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

class DcmFileFormat;

namespace svdlr_io
{

/** A fragment of a frame: a frame's code stream may be cut anywhere between fragments. */
struct Jpeg2000Piece
{
  const std::uint8_t * data{ nullptr };
  std::size_t          size{ 0 };
};

/** Why the frame held by `pieces` (a code stream, or a JP2 file holding one) is not an image of `columns` x `rows` with
 * `samplesPerPixel` components of at most `bitsAllocated` bits, each sampled on the whole grid: OpenJPEG cannot read
 * its header, the header runs past the frame's end, or it describes another image. Empty when it is. */
std::string
Jpeg2000FrameProblem(const std::vector<Jpeg2000Piece> & pieces,
                     unsigned int                       rows,
                     unsigned int                       columns,
                     unsigned int                       samplesPerPixel,
                     unsigned int                       bitsAllocated);

/** Checks the header of each of the `frames` frames of `dicom`'s encapsulated pixel data (JPEG 2000) against its Rows,
 * Columns, SamplesPerPixel and BitsAllocated (given, as the reader read them). Throws DicomError naming `file` and the
 * frame for a frame whose header OpenJPEG refuses, is cut short or describes another image. */
void
CheckJpeg2000Frames(DcmFileFormat &     dicom,
                    const std::string & file,
                    unsigned int        frames,
                    unsigned int        rows,
                    unsigned int        columns,
                    unsigned int        bitsAllocated);

} // namespace svdlr_io

#endif
