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
// Each JPEG 2000 frame's header through OpenJPEG, and its check against the DICOM header.
#include "SVDLowRankJpeg2000Header.h"
#include "SVDLowRankDicomTags.h"

#include "dcmtk/dcmdata/dccodec.h"
#include "dcmtk/dcmdata/dcfilefo.h"
#include "dcmtk/dcmdata/dcpixel.h"
#include "dcmtk/dcmdata/dcpixseq.h"
#include "dcmtk/dcmdata/dcpxitem.h"

#include <openjpeg.h>

#include <algorithm>
#include <cstring>
#include <memory>

namespace svdlr_io
{
namespace
{

/** The JP2 signature box (ISO/IEC 15444-1 I.5.1): a JP2 file, not a bare code stream. */
bool
IsJp2File(const Jpeg2000Piece & first)
{
  static const std::uint8_t signature[12] = { 0x00, 0x00, 0x00, 0x0C, 'j', 'P', ' ', ' ', 0x0D, 0x0A, 0x87, 0x0A };
  return first.size >= sizeof(signature) && std::memcmp(first.data, signature, sizeof(signature)) == 0;
}

/** The fragments of a frame as one OpenJPEG input stream. OpenJPEG's stream buffer is one byte, so every read asks for
 * what the header needs: a read asking for more than is left is a header running past the frame. */
struct FrameStream
{
  const std::vector<Jpeg2000Piece> * pieces{ nullptr };
  std::uint64_t                      size{ 0 };
  std::uint64_t                      at{ 0 };
  bool                               pastTheEnd{ false };

  static OPJ_SIZE_T
  Read(void * buffer, OPJ_SIZE_T bytes, void * self)
  {
    auto & stream = *static_cast<FrameStream *>(self);
    if (bytes > stream.size - stream.at)
    {
      stream.pastTheEnd = true;
    }
    if (stream.at == stream.size)
    {
      return static_cast<OPJ_SIZE_T>(-1);
    }
    auto *        out = static_cast<std::uint8_t *>(buffer);
    std::uint64_t start = 0;
    OPJ_SIZE_T    copied = 0;
    for (const Jpeg2000Piece & piece : *stream.pieces)
    {
      const std::uint64_t end = start + piece.size;
      if (copied < bytes && stream.at < end)
      {
        const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(end - stream.at, bytes - copied));
        std::memcpy(out + copied, piece.data + (stream.at - start), take);
        copied += take;
        stream.at += take;
      }
      start = end;
    }
    return copied;
  }

  static OPJ_OFF_T
  Skip(OPJ_OFF_T bytes, void * self)
  {
    auto &              stream = *static_cast<FrameStream *>(self);
    const std::uint64_t left = stream.size - stream.at;
    if (bytes < 0 || static_cast<std::uint64_t>(bytes) > left)
    {
      stream.pastTheEnd = bytes > 0;
      return -1;
    }
    stream.at += static_cast<std::uint64_t>(bytes);
    return bytes;
  }

  static OPJ_BOOL
  Seek(OPJ_OFF_T to, void * self)
  {
    auto & stream = *static_cast<FrameStream *>(self);
    if (to < 0 || static_cast<std::uint64_t>(to) > stream.size)
    {
      stream.pastTheEnd = to > 0;
      return OPJ_FALSE;
    }
    stream.at = static_cast<std::uint64_t>(to);
    return OPJ_TRUE;
  }
};

/** OpenJPEG's first error message, without its line end. */
void
KeepFirstError(const char * message, void * kept)
{
  auto & first = *static_cast<std::string *>(kept);
  if (first.empty() && message != nullptr)
  {
    first = message;
    first.erase(first.find_last_not_of("\r\n") + 1);
  }
}

/** Why the header OpenJPEG read (`image`) is not the DICOM header's image; empty when it is. */
std::string
Mismatch(const opj_image_t & image,
         unsigned int        rows,
         unsigned int        columns,
         unsigned int        samplesPerPixel,
         unsigned int        bitsAllocated)
{
  const std::uint64_t width = image.x1 - image.x0, height = image.y1 - image.y0;
  if (width != columns || height != rows)
  {
    return "describes a " + std::to_string(width) + " x " + std::to_string(height) +
           " image in its SIZ, the DICOM header " + std::to_string(columns) + " x " + std::to_string(rows) +
           " (Columns x Rows)";
  }
  if (image.numcomps != samplesPerPixel)
  {
    return "has " + std::to_string(image.numcomps) + " components in its SIZ, the DICOM header " +
           std::to_string(samplesPerPixel) + " (SamplesPerPixel)";
  }
  for (std::size_t c = 0; c < image.numcomps; ++c)
  {
    const opj_image_comp_t & component = image.comps[c];
    if (component.dx != 1 || component.dy != 1)
    {
      return "samples component " + std::to_string(c) + " every " + std::to_string(component.dx) + " x " +
             std::to_string(component.dy) + " in its SIZ, not on every pixel";
    }
    if (component.prec > bitsAllocated)
    {
      return "has " + std::to_string(component.prec) + "-bit samples in its SIZ, more than the DICOM header's " +
             std::to_string(bitsAllocated) + " (BitsAllocated)";
    }
  }
  return {};
}

/** The fragments (items [first, end) of `sequence`) that hold one frame. */
std::vector<Jpeg2000Piece>
FramePieces(DcmPixelSequence & sequence, unsigned long first, unsigned long end)
{
  std::vector<Jpeg2000Piece> pieces;
  for (unsigned long item = first; item < end; ++item)
  {
    DcmPixelItem * fragment = nullptr;
    Uint8 *        values = nullptr;
    if (sequence.getItem(fragment, item).good() && fragment != nullptr && fragment->getLength() > 0 &&
        fragment->getUint8Array(values).good() && values != nullptr)
    {
      pieces.push_back({ values, fragment->getLength() });
    }
  }
  return pieces;
}

/** Whether item `index` of `sequence` starts a code stream (SOC then SIZ) or a JP2 file. */
bool
StartsAFrame(DcmPixelSequence & sequence, unsigned long index)
{
  const std::vector<Jpeg2000Piece> pieces = FramePieces(sequence, index, index + 1);
  static const std::uint8_t        startOfCodeStream[4] = { 0xFF, 0x4F, 0xFF, 0x51 }; // SOC, SIZ
  return !pieces.empty() &&
         (IsJp2File(pieces[0]) || (pieces[0].size >= 4 && std::memcmp(pieces[0].data, startOfCodeStream, 4) == 0));
}

/** The index of the first fragment of each of `frames` frames: from the Basic Offset Table, or one fragment a frame
 * (DCMTK's rule); else the fragments that start a code stream, when there are `frames` of them. Empty when neither
 * tells. */
std::vector<unsigned long>
FirstFragments(DcmPixelSequence & sequence, unsigned int frames)
{
  std::vector<unsigned long> first;
  for (unsigned int frame = 0; frame < frames; ++frame)
  {
    Uint32 item = 0;
    if (DcmCodec::determineStartFragment(frame, static_cast<Sint32>(frames), &sequence, item).bad())
    {
      first.clear();
      break;
    }
    first.push_back(item);
  }
  if (first.size() == frames)
  {
    return first;
  }
  for (unsigned long item = 1; item < sequence.card(); ++item) // item 0 is the Basic Offset Table
  {
    if (StartsAFrame(sequence, item))
    {
      first.push_back(item);
    }
  }
  return first.size() == frames ? first : std::vector<unsigned long>();
}

} // namespace

std::string
Jpeg2000FrameProblem(const std::vector<Jpeg2000Piece> & pieces,
                     unsigned int                       rows,
                     unsigned int                       columns,
                     unsigned int                       samplesPerPixel,
                     unsigned int                       bitsAllocated)
{
  FrameStream frame;
  frame.pieces = &pieces;
  for (const Jpeg2000Piece & piece : pieces)
  {
    frame.size += piece.size;
  }
  if (frame.size == 0)
  {
    return "is empty";
  }
  const std::unique_ptr<opj_stream_t, void (*)(opj_stream_t *)> stream(opj_stream_create(1, OPJ_TRUE),
                                                                       &opj_stream_destroy);
  const std::unique_ptr<opj_codec_t, void (*)(opj_codec_t *)>   codec(
    opj_create_decompress(IsJp2File(pieces.front()) ? OPJ_CODEC_JP2 : OPJ_CODEC_J2K), &opj_destroy_codec);
  if (stream == nullptr || codec == nullptr)
  {
    return "cannot be read: OpenJPEG cannot start";
  }
  opj_stream_set_user_data(stream.get(), &frame, nullptr);
  opj_stream_set_user_data_length(stream.get(), frame.size);
  opj_stream_set_read_function(stream.get(), &FrameStream::Read);
  opj_stream_set_skip_function(stream.get(), &FrameStream::Skip);
  opj_stream_set_seek_function(stream.get(), &FrameStream::Seek);
  std::string error;
  opj_set_error_handler(codec.get(), &KeepFirstError, &error);
  opj_dparameters_t parameters;
  opj_set_default_decoder_parameters(&parameters);
  opj_image_t * read = nullptr;
  const bool    readable =
    opj_setup_decoder(codec.get(), &parameters) && opj_read_header(stream.get(), codec.get(), &read);
  const std::unique_ptr<opj_image_t, void (*)(opj_image_t *)> image(read, &opj_image_destroy);
  if (!readable || image == nullptr)
  {
    return frame.pastTheEnd
             ? "has a header that runs past the end of the frame (" + std::to_string(frame.size) + " bytes)"
             : "has a header OpenJPEG refuses (" + (error.empty() ? std::string("no reason given") : error) + ")";
  }
  return Mismatch(*image, rows, columns, samplesPerPixel, bitsAllocated);
}

void
CheckJpeg2000Frames(DcmFileFormat &     dicom,
                    const std::string & file,
                    unsigned int        frames,
                    unsigned int        rows,
                    unsigned int        columns,
                    unsigned int        bitsAllocated)
{
  DcmDataset * dataset = dicom.getDataset();
  DcmElement * element = nullptr;
  dataset->findAndGetElement(DCM_PixelData, element);
  auto *             pixelData = dynamic_cast<DcmPixelData *>(element);
  DcmPixelSequence * sequence = nullptr;
  if (pixelData == nullptr ||
      pixelData->getEncapsulatedRepresentation(dataset->getOriginalXfer(), nullptr, sequence).bad() ||
      sequence == nullptr)
  {
    throw FileError(file, "has no encapsulated pixel data for its JPEG 2000 frames");
  }
  Uint16 samplesPerPixel = 1;
  dataset->findAndGetUint16(DCM_SamplesPerPixel, samplesPerPixel);
  const std::vector<unsigned long> first = FirstFragments(*sequence, frames);
  if (first.size() != frames)
  {
    throw FileError(file,
                    "has pixel data whose " + std::to_string(frames) +
                      " JPEG 2000 frames cannot be told apart (no "
                      "Basic Offset Table, and not one fragment, "
                      "or one code stream start, a frame)");
  }
  for (unsigned int frame = 0; frame < frames; ++frame)
  {
    const unsigned long end = frame + 1 < frames ? first[frame + 1] : sequence->card();
    const std::string   problem =
      Jpeg2000FrameProblem(FramePieces(*sequence, first[frame], end), rows, columns, samplesPerPixel, bitsAllocated);
    if (!problem.empty())
    {
      throw FileError(file,
                      "frame " + std::to_string(frame + 1) + " of " + std::to_string(frames) +
                        ": its JPEG 2000 code stream " + problem + ", so it is not decoded");
    }
  }
}

} // namespace svdlr_io
