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
#ifndef SVDLowRankDicomCodecs_h
#define SVDLowRankDicomCodecs_h

// Which transfer syntaxes the DICOM I/O reads and writes, and by which library. DCMTK reads every header
// and decodes the pixels of the syntaxes it has codecs for (uncompressed, deflate, RLE, JPEG, JPEG-LS);
// GDCM (built with OpenJPEG) decodes the pixel data of those DCMTK 3.6.7 lacks (JPEG 2000). Writing goes
// through DCMTK's encoders only. No DCMTK or GDCM header is included here.

#include "SVDLowRankDicomSeries.h"

#include <cstdint>
#include <string>
#include <vector>

class DcmDataset;

class DcmFileFormat;

namespace svdlr_io
{

/** The transfer syntax of a written series, as the tool's --transfer-syntax names it. */
enum class DicomOutputSyntax
{
  Keep,                 // the source's syntax where it can be written losslessly, else ExplicitLittleEndian
  ExplicitLittleEndian, // 1.2.840.10008.1.2.1
  ImplicitLittleEndian, // 1.2.840.10008.1.2
  RLE,                  // 1.2.840.10008.1.2.5, DCMTK's dcmrle
  JPEGLossless,         // 1.2.840.10008.1.2.4.70 (process 14, first-order prediction), DCMTK's dcmjpeg
  JPEGLSLossless        // 1.2.840.10008.1.2.4.80: refused, see DicomOutputSyntaxProblem()
};

/** The names --transfer-syntax accepts, in the order of the enum: keep, explicit-le, implicit-le, rle,
 * jpeg-lossless, jpeg-ls. */
const std::vector<std::string> &
DicomOutputSyntaxNames();

/** The syntax named `name` (one of DicomOutputSyntaxNames()); a DicomError listing them otherwise. */
DicomOutputSyntax
ParseDicomOutputSyntax(const std::string & name);

/** Why `syntax` cannot be written here; empty when it can. JPEG-LS cannot: DCMTK 3.6.7's JPEG-LS encoder
 * writes outside its buffer whenever a frame's code stream has an odd length (about every other frame),
 * aborts on 12-bit signed images and writes undecodable streams for noisy 8-bit images
 * (apps/test/dcmtk-jpegls/ reproduces all three). */
std::string
DicomOutputSyntaxProblem(DicomOutputSyntax syntax);

/** The transfer syntax UID to write a slice in: `choice`, or for Keep the source slice's syntax
 * (`sourceTransferSyntaxUID`, empty for a volume that did not come from DICOM) when it is one of those that
 * can be written losslessly, else Explicit VR Little Endian. Throws DicomError for a syntax that cannot be
 * written (DicomOutputSyntaxProblem). */
std::string
ResolveDicomOutputSyntax(DicomOutputSyntax choice, const std::string & sourceTransferSyntaxUID);

/** Whether the transfer syntax `uid` compresses with loss (JPEG baseline/extended, JPEG-LS near-lossless,
 * JPEG 2000 .91/.93, ...). */
bool
IsLossyTransferSyntax(const std::string & uid);

/** The LossyImageCompressionMethod defined term for the lossy syntax `uid` (ISO_10918_1, ISO_14495_1,
 * ISO_15444_1); empty when there is none. */
std::string
LossyCompressionMethod(const std::string & uid);

/** "name (uid)" for people, e.g. "JPEG 2000 Compression (Lossless Only) (1.2.840.10008.1.2.4.90)". */
std::string
DescribeTransferSyntax(const std::string & uid);

/** Which library decodes the pixel data of `uid` here: "DCMTK", "GDCM", or "" when none can. */
std::string
DicomDecoderFor(const std::string & uid);

/** The stored samples of the `frames` frames of `file` (whose pixel data is in `transferSyntaxUID`, a syntax
 * only GDCM decodes), in this machine's byte order, `frameBytes` bytes per frame, frame 0 first: per frame what
 * DCMTK's getUncompressedFrame() gives for the syntaxes it decodes. GDCM decodes a file's frames together, so
 * they all come at once (the reader keeps them for a multi-frame file's other frames). The header (size,
 * bits, frames) comes from DCMTK; GDCM's view of it must agree. Throws DicomError naming the file.
 * GDCM never parses `file` itself: it reads `dicom` (the file as DCMTK loaded it, pixel data included) written
 * again by DCMTK in the same transfer syntax, because Debian's GDCM 3.0.21 aborts (assert) on some malformed
 * headers that DCMTK parses or refuses cleanly (found by apps/fuzz). */
std::vector<std::uint8_t>
DecodeFramesWithGdcm(DcmFileFormat &     dicom,
                     const std::string & file,
                     const std::string & transferSyntaxUID,
                     unsigned int        frames,
                     unsigned int        rows,
                     unsigned int        columns,
                     unsigned int        bitsAllocated,
                     std::size_t         frameBytes);

/** How the child process that GDCM decodes in (DecodeFramesWithGdcm) is bounded. The tools leave them as they are;
 * the fuzz targets set them, so that what GDCM does on a hostile code stream stays the child's death, which the
 * reader reports as the file's error, and never becomes a finding of the harness that runs the reader. */
struct GdcmChildLimits
{
  /** The child is killed after this many seconds and the file refused; 0: no limit. */
  unsigned int seconds{ 0 };
  /** Address space the child may map beyond what it holds when it starts; 0: no limit. An allocation past it
   * fails in the child (its error, or its death), before anything outside it sees the allocation. */
  std::size_t addressSpaceBytes{ 0 };
  /** Called in the child before GDCM, after its signal handlers are reset and the limits set: the fuzz targets
   * silence their sanitizer's report and libFuzzer's crash callback there. */
  void (*setup)(){ nullptr };
};

/** Sets the limits of every later DecodeFramesWithGdcm in this process. */
void
SetGdcmChildLimits(const GdcmChildLimits & limits);

/** Puts the native pixel data of `dataset` into the transfer syntax `uid` (from ResolveDicomOutputSyntax)
 * through DCMTK's encoder, ready for saveFile() in that syntax. Throws DicomError when DCMTK cannot. */
void
EncodeDicomPixelData(DcmDataset * dataset, const std::string & uid);

} // namespace svdlr_io

#endif
