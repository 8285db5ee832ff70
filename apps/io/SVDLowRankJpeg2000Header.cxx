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
// The SIZ marker segment of a JPEG 2000 frame (ISO/IEC 15444-1 A.5.1), and its check against the DICOM header.
#include "SVDLowRankJpeg2000Header.h"
#include "SVDLowRankDicomTags.h"

#include "dcmtk/dcmdata/dccodec.h"
#include "dcmtk/dcmdata/dcfilefo.h"
#include "dcmtk/dcmdata/dcpixel.h"
#include "dcmtk/dcmdata/dcpixseq.h"
#include "dcmtk/dcmdata/dcpxitem.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace svdlr_io
{
namespace
{

constexpr std::uint32_t kStartOfCodeStream = 0xFF4F; // SOC
constexpr std::uint32_t kImageAndTileSize = 0xFF51;  // SIZ
/** Lsiz counts itself, Rsiz, the eight 32-bit sizes and offsets and Csiz (38 bytes), then 3 bytes a component. */
constexpr std::size_t kSizFixedBytes = 38;
constexpr std::size_t kMaximumComponents = 16384;   // Csiz
constexpr unsigned    kMaximumPrecision = 38;       // Ssiz: 1..38 bits
constexpr std::uint64_t kMaximumTiles = 65535;      // Isot of SOT counts tiles in 16 bits
/** The bytes of a frame's first fragments read for its header: a JP2 file's boxes before the code stream (an ICC
 * profile among them) and a SIZ of 16384 components fit. */
constexpr std::size_t kFrameHeaderBytes = std::size_t{ 1 } << 20;

/** The big-endian unsigned integer of `bytes` bytes at `at`. */
std::uint64_t
BigEndian(const std::uint8_t * at, std::size_t bytes)
{
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < bytes; ++i)
  {
    value = (value << 8) | at[i];
  }
  return value;
}

/** Moves `data` and `size` to the contiguous code stream box ('jp2c') of a JP2 file (ISO/IEC 15444-1 Annex I);
 * leaves them as they are for anything that does not start with the JP2 signature box. False for a JP2 file
 * without a code stream box in these bytes. */
bool
SkipJp2Boxes(const std::uint8_t *& data, std::size_t & size)
{
  static const std::uint8_t signature[12] = { 0x00, 0x00, 0x00, 0x0C, 'j', 'P', ' ', ' ', 0x0D, 0x0A, 0x87, 0x0A };
  if (size < sizeof(signature) || std::memcmp(data, signature, sizeof(signature)) != 0)
  {
    return true;
  }
  std::size_t at = 0;
  while (size - at >= 8)
  {
    std::uint64_t length = BigEndian(data + at, 4);
    std::size_t   header = 8;
    if (length == 1) // the length follows in 64 bits
    {
      if (size - at < 16)
      {
        return false;
      }
      length = BigEndian(data + at + 8, 8);
      header = 16;
    }
    else if (length == 0) // the box runs to the end
    {
      length = size - at;
    }
    if (BigEndian(data + at + 4, 4) == 0x6A703263) // 'jp2c': its code stream may run on beyond these bytes
    {
      data += at + header;
      size -= at + header;
      return true;
    }
    if (length < header || length > size - at)
    {
      return false;
    }
    at += static_cast<std::size_t>(length);
  }
  return false;
}

std::string
Count(std::uint64_t value)
{
  return std::to_string(value);
}

/** A marker as the standard writes it: "FF52". */
std::string
Marker(std::uint32_t marker)
{
  char text[8];
  std::snprintf(text, sizeof(text), "%04X", static_cast<unsigned int>(marker & 0xFFFFu));
  return text;
}

/** Why the marker segments from `data` (just after SIZ) to the first tile's data (SOD) do not lie within the
 * `size` bytes (`whole`: all of the frame); empty when they do. GDCM 3.0.21 walks them by their lengths without
 * checking them against its buffer (JPEG2000Codec::GetHeaderInfo, a SEGV found by apps/fuzz). */
std::string
MarkerSegmentsProblem(const std::uint8_t * data, std::size_t size, bool whole)
{
  constexpr std::uint32_t kStartOfData = 0xFF93;  // SOD: the tile-part's data follow
  constexpr std::uint32_t kCodingStyle = 0xFF52;  // COD, whose Lcod is 12 to 45 (A.6.1)
  std::size_t at = 0;
  while (size - at >= 2)
  {
    const std::uint32_t marker = static_cast<std::uint32_t>(BigEndian(data + at, 2));
    if ((marker >> 8) != 0xFF)
    {
      return "has no marker at byte " + Count(at) + " after its SIZ (" + Marker(marker) + ")";
    }
    if (marker == kStartOfData)
    {
      return {};
    }
    at += 2;
    if ((marker >= 0xFF30 && marker <= 0xFF3F) || marker == 0xFF92) // no length: reserved, EPH
    {
      continue;
    }
    if (size - at < 2)
    {
      break;
    }
    const std::uint64_t length = BigEndian(data + at, 2);
    if (length < 2 || (marker == kCodingStyle && length < 12))
    {
      return "has a marker segment " + Marker(marker) + " of length " + Count(length) + " in its header";
    }
    if (length > size - at)
    {
      if (!whole)
      {
        return "has a header longer than " + Count(kFrameHeaderBytes) + " bytes";
      }
      return "has a marker segment (" + Marker(marker) + ", " + Count(length) + " bytes) that runs past the end of "
             "the frame (" + Count(size - at) + " bytes left)";
    }
    at += static_cast<std::size_t>(length);
  }
  return whole ? "ends before its first tile's data (no SOD marker)" : "has a header longer than " +
                                                                       Count(kFrameHeaderBytes) + " bytes";
}

/** The first kFrameHeaderBytes of the frame held by items [first, end) of `sequence` (its fragments joined: a code
 * stream may be cut anywhere); `whole` says whether that is all of it. */
std::vector<std::uint8_t>
FrameStart(DcmPixelSequence & sequence, unsigned long first, unsigned long end, bool & whole)
{
  std::vector<std::uint8_t> bytes;
  whole = true;
  for (unsigned long item = first; item < end; ++item)
  {
    DcmPixelItem * fragment = nullptr;
    Uint8 *        values = nullptr;
    if (sequence.getItem(fragment, item).bad() || fragment == nullptr || fragment->getLength() == 0 ||
        fragment->getUint8Array(values).bad() || values == nullptr)
    {
      continue;
    }
    const std::size_t take = std::min<std::size_t>(fragment->getLength(), kFrameHeaderBytes - bytes.size());
    bytes.insert(bytes.end(), values, values + take);
    if (bytes.size() == kFrameHeaderBytes && (take < fragment->getLength() || item + 1 < end))
    {
      whole = false;
      break;
    }
  }
  return bytes;
}

/** Whether item `index` of `sequence` starts a code stream (SOC then SIZ) or a JP2 file. */
bool
StartsAFrame(DcmPixelSequence & sequence, unsigned long index)
{
  DcmPixelItem * fragment = nullptr;
  Uint8 *        values = nullptr;
  if (sequence.getItem(fragment, index).bad() || fragment == nullptr || fragment->getLength() < 12 ||
      fragment->getUint8Array(values).bad() || values == nullptr)
  {
    return false;
  }
  const std::uint8_t * data = values;
  std::size_t          size = fragment->getLength();
  return SkipJp2Boxes(data, size) && size >= 4 && BigEndian(data, 2) == kStartOfCodeStream &&
         BigEndian(data + 2, 2) == kImageAndTileSize;
}

/** The index of the first fragment of each of `frames` frames: from the Basic Offset Table, or one fragment a
 * frame (DCMTK's rule); else the fragments that start a code stream, when there are `frames` of them. Empty when
 * neither tells. */
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
ReadJpeg2000ImageHeader(const std::uint8_t * data, std::size_t size, bool whole, Jpeg2000ImageHeader & header)
{
  if (!SkipJp2Boxes(data, size))
  {
    return "is a JP2 file without a contiguous code stream box";
  }
  if (size < 2 || BigEndian(data, 2) != kStartOfCodeStream)
  {
    return "does not start with a JPEG 2000 code stream (no SOC marker FF4F)";
  }
  if (size < 4 || BigEndian(data + 2, 2) != kImageAndTileSize)
  {
    return "has no SIZ marker segment (FF51) after its SOC marker";
  }
  const std::uint8_t * siz = data + 4;
  const std::size_t    available = size - 4;
  if (available < kSizFixedBytes)
  {
    return "has a SIZ marker segment cut short (" + Count(available) + " of at least " + Count(kSizFixedBytes) +
           " bytes)";
  }
  const std::uint64_t length = BigEndian(siz, 2);
  const std::uint64_t xSize = BigEndian(siz + 4, 4), ySize = BigEndian(siz + 8, 4);
  const std::uint64_t xOffset = BigEndian(siz + 12, 4), yOffset = BigEndian(siz + 16, 4);
  const std::uint64_t xTile = BigEndian(siz + 20, 4), yTile = BigEndian(siz + 24, 4);
  const std::uint64_t xTileOffset = BigEndian(siz + 28, 4), yTileOffset = BigEndian(siz + 32, 4);
  const std::uint64_t components = BigEndian(siz + 36, 2);
  if (components < 1 || components > kMaximumComponents)
  {
    return "has " + Count(components) + " components in its SIZ (Csiz: 1 to 16384)";
  }
  if (length != kSizFixedBytes + 3 * components)
  {
    return "has a SIZ of " + Count(length) + " bytes (Lsiz) for " + Count(components) + " components, which take " +
           Count(kSizFixedBytes + 3 * components);
  }
  if (available < length)
  {
    return "has a SIZ marker segment cut short (" + Count(available) + " of " + Count(length) + " bytes)";
  }
  if (xSize <= xOffset || ySize <= yOffset)
  {
    return "describes an empty image in its SIZ (Xsiz " + Count(xSize) + ", XOsiz " + Count(xOffset) + ", Ysiz " +
           Count(ySize) + ", YOsiz " + Count(yOffset) + ")";
  }
  // ISO/IEC 15444-1 B.3: the tile grid starts at or before the image and its first tile reaches into it.
  if (xTile == 0 || yTile == 0 || xTileOffset > xOffset || yTileOffset > yOffset || xTile + xTileOffset <= xOffset ||
      yTile + yTileOffset <= yOffset)
  {
    return "has a tile grid in its SIZ that does not cover the image (XTsiz " + Count(xTile) + ", YTsiz " +
           Count(yTile) + ", XTOsiz " + Count(xTileOffset) + ", YTOsiz " + Count(yTileOffset) + ")";
  }
  const std::uint64_t tiles =
    ((xSize - xTileOffset + xTile - 1) / xTile) * ((ySize - yTileOffset + yTile - 1) / yTile);
  if (tiles > kMaximumTiles)
  {
    return "has " + Count(tiles) + " tiles in its SIZ; a code stream holds at most 65535";
  }
  std::vector<Jpeg2000Component> parsed(static_cast<std::size_t>(components));
  for (std::size_t c = 0; c < parsed.size(); ++c)
  {
    const std::uint8_t * component = siz + kSizFixedBytes + 3 * c;
    parsed[c].precision = (component[0] & 0x7Fu) + 1u;
    parsed[c].isSigned = (component[0] & 0x80u) != 0;
    parsed[c].xSubsampling = component[1];
    parsed[c].ySubsampling = component[2];
    if (parsed[c].precision > kMaximumPrecision || parsed[c].xSubsampling == 0 || parsed[c].ySubsampling == 0)
    {
      return "has component " + Count(c) + " of " + Count(parsed[c].precision) + " bits sampled every " +
             Count(parsed[c].xSubsampling) + " x " + Count(parsed[c].ySubsampling) +
             " in its SIZ (1 to 38 bits, every 1 to 255)";
    }
  }
  const std::string segments = MarkerSegmentsProblem(siz + length, available - static_cast<std::size_t>(length), whole);
  if (!segments.empty())
  {
    return segments;
  }
  header.width = static_cast<std::uint32_t>(xSize - xOffset);
  header.height = static_cast<std::uint32_t>(ySize - yOffset);
  header.tiles = tiles;
  header.components = std::move(parsed);
  return {};
}

std::string
Jpeg2000HeaderMismatch(const Jpeg2000ImageHeader & header, unsigned int rows, unsigned int columns,
                       unsigned int samplesPerPixel, unsigned int bitsAllocated)
{
  if (header.width != columns || header.height != rows)
  {
    return "describes a " + Count(header.width) + " x " + Count(header.height) +
           " image in its SIZ, the DICOM header " + Count(columns) + " x " + Count(rows) + " (Columns x Rows)";
  }
  if (header.components.size() != samplesPerPixel)
  {
    return "has " + Count(header.components.size()) + " components in its SIZ, the DICOM header " +
           Count(samplesPerPixel) + " (SamplesPerPixel)";
  }
  for (std::size_t c = 0; c < header.components.size(); ++c)
  {
    const Jpeg2000Component & component = header.components[c];
    if (component.xSubsampling != 1 || component.ySubsampling != 1)
    {
      return "samples component " + Count(c) + " every " + Count(component.xSubsampling) + " x " +
             Count(component.ySubsampling) + " in its SIZ, not on every pixel";
    }
    if (component.precision > bitsAllocated)
    {
      return "has " + Count(component.precision) + "-bit samples in its SIZ, more than the DICOM header's " +
             Count(bitsAllocated) + " (BitsAllocated)";
    }
  }
  return {};
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
    throw FileError(file, "has pixel data whose " + Count(frames) +
                            " JPEG 2000 frames cannot be told apart (no Basic Offset Table, and not one fragment, "
                            "or one code stream start, a frame)");
  }
  for (unsigned int frame = 0; frame < frames; ++frame)
  {
    const unsigned long             end = frame + 1 < frames ? first[frame + 1] : sequence->card();
    bool                            whole = true;
    const std::vector<std::uint8_t> bytes = FrameStart(*sequence, first[frame], end, whole);
    Jpeg2000ImageHeader             header;
    std::string                     problem = ReadJpeg2000ImageHeader(bytes.data(), bytes.size(), whole, header);
    if (problem.empty())
    {
      problem = Jpeg2000HeaderMismatch(header, rows, columns, samplesPerPixel, bitsAllocated);
    }
    if (!problem.empty())
    {
      throw FileError(file, "frame " + Count(frame + 1) + " of " + Count(frames) + ": its JPEG 2000 code stream " +
                              problem + ", so it is not decoded");
    }
  }
}

} // namespace svdlr_io
