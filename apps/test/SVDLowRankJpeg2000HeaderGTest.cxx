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
// The JPEG 2000 frame header check that runs before GDCM (SVDLowRankJpeg2000Header.h): code streams built here
// field by field (ISO/IEC 15444-1 A.5.1), cut short at every byte, and made to disagree with the DICOM header one
// field at a time; then the fuzz findings' form on a real file (pydicom's 693_J2KI, the seed they were mutated
// from), patched here rather than committed: a marker segment that runs past the frame, and a SIZ wider than the
// DICOM header's Columns. Both gave GDCM 3.0.21 a read outside its buffer (SEGV in GetHeaderInfo under ASan).
#include "SVDLowRankDicomSeries.h"
#include "SVDLowRankJpeg2000Header.h"
#include "svdlrDicomTestData.h"
#include "svdlrToolRun.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace
{
using namespace svdlr_test;
using Bytes = std::vector<std::uint8_t>;

void
PutBig(Bytes & bytes, std::uint64_t value, int count)
{
  for (int i = count - 1; i >= 0; --i)
  {
    bytes.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
  }
}

/** The fields of a SIZ segment; the defaults describe a 96 x 80 image of one 12-bit component, one tile. */
struct Siz
{
  std::uint32_t width{ 96 }, height{ 80 }, xOffset{ 0 }, yOffset{ 0 };
  std::uint32_t xTile{ 96 }, yTile{ 80 }, xTileOffset{ 0 }, yTileOffset{ 0 };
  unsigned      components{ 1 };
  std::uint8_t  ssiz{ 11 }; // precision - 1, sign in bit 7
  std::uint8_t  xr{ 1 }, yr{ 1 };
};

/** SOC, SIZ, COD (12 bytes), QCD, SOT, SOD and four bytes of data: what a decoder reads before the data. */
Bytes
CodeStream(const Siz & siz)
{
  Bytes b;
  PutBig(b, 0xFF4F, 2);
  PutBig(b, 0xFF51, 2);
  PutBig(b, 38 + 3 * siz.components, 2);
  PutBig(b, 0, 2); // Rsiz
  for (const std::uint32_t v : { siz.width + siz.xOffset, siz.height + siz.yOffset, siz.xOffset, siz.yOffset,
                                 siz.xTile, siz.yTile, siz.xTileOffset, siz.yTileOffset })
  {
    PutBig(b, v, 4);
  }
  PutBig(b, siz.components, 2);
  for (unsigned c = 0; c < siz.components; ++c)
  {
    b.insert(b.end(), { siz.ssiz, siz.xr, siz.yr });
  }
  PutBig(b, 0xFF52, 2); // COD: Lcod 12, Scod, progression, 1 layer, no MCT, 5 levels, 64x64 blocks, 5-3 wavelet
  PutBig(b, 12, 2);
  b.insert(b.end(), { 0, 0, 0, 1, 0, 5, 4, 4, 0, 1 });
  PutBig(b, 0xFF5C, 2); // QCD: no quantization, one exponent
  PutBig(b, 4, 2);
  b.insert(b.end(), { 0x40, 0x48 });
  PutBig(b, 0xFF90, 2); // SOT: tile 0, its length unknown (0), part 0 of 1
  PutBig(b, 10, 2);
  PutBig(b, 0, 2);
  PutBig(b, 0, 4);
  b.insert(b.end(), { 0, 1 });
  PutBig(b, 0xFF93, 2); // SOD
  b.insert(b.end(), { 0x80, 0x80, 0x80, 0x80 });
  return b;
}

std::string
Problem(const Bytes & bytes, svdlr_io::Jpeg2000ImageHeader & header, bool whole = true)
{
  return svdlr_io::ReadJpeg2000ImageHeader(bytes.data(), bytes.size(), whole, header);
}

std::string
Mismatch(const Siz & siz, unsigned int rows = 80, unsigned int columns = 96, unsigned int samples = 1,
         unsigned int bitsAllocated = 16)
{
  svdlr_io::Jpeg2000ImageHeader header;
  const std::string             problem = Problem(CodeStream(siz), header);
  return problem.empty() ? svdlr_io::Jpeg2000HeaderMismatch(header, rows, columns, samples, bitsAllocated) : problem;
}

TEST(SVDLowRankJpeg2000Header, SoundCodeStreamIsReadFieldByField)
{
  Siz siz;
  siz.xOffset = 7;
  siz.yOffset = 3;
  siz.xTileOffset = 7; // one tile: the image's own
  siz.yTileOffset = 3;
  siz.ssiz = 0x80 | 15; // 16-bit signed
  svdlr_io::Jpeg2000ImageHeader header;
  ASSERT_EQ(Problem(CodeStream(siz), header), "");
  EXPECT_EQ(header.width, 96u);
  EXPECT_EQ(header.height, 80u);
  EXPECT_EQ(header.tiles, 1u);
  ASSERT_EQ(header.components.size(), 1u);
  EXPECT_EQ(header.components[0].precision, 16u);
  EXPECT_TRUE(header.components[0].isSigned);
  EXPECT_EQ(svdlr_io::Jpeg2000HeaderMismatch(header, 80, 96, 1, 16), "");
  siz.xTileOffset = 0; // the tile grid from the origin: 2 x 2 tiles of 96 x 80 cover 7..102 x 3..82
  siz.yTileOffset = 0;
  ASSERT_EQ(Problem(CodeStream(siz), header), "");
  EXPECT_EQ(header.tiles, 4u);
}

TEST(SVDLowRankJpeg2000Header, CodeStreamInsideAJp2FileIsRead)
{
  const Bytes stream = CodeStream(Siz{});
  Bytes       jp2 = { 0x00, 0x00, 0x00, 0x0C, 'j', 'P', ' ', ' ', 0x0D, 0x0A, 0x87, 0x0A };
  PutBig(jp2, 20, 4); // ftyp: brand jp2, version 0, one compatible brand
  jp2.insert(jp2.end(), { 'f', 't', 'y', 'p', 'j', 'p', '2', ' ', 0, 0, 0, 0, 'j', 'p', '2', ' ' });
  PutBig(jp2, 8 + stream.size(), 4);
  jp2.insert(jp2.end(), { 'j', 'p', '2', 'c' });
  jp2.insert(jp2.end(), stream.begin(), stream.end());
  svdlr_io::Jpeg2000ImageHeader header;
  ASSERT_EQ(Problem(jp2, header), "");
  EXPECT_EQ(header.width, 96u);
}

TEST(SVDLowRankJpeg2000Header, CodeStreamCutShortAnywhereBeforeItsDataIsRefused)
{
  const Bytes stream = CodeStream(Siz{});
  const std::size_t data = stream.size() - 6; // SOD and the data after it
  for (std::size_t size = 0; size < data + 2; ++size)
  {
    svdlr_io::Jpeg2000ImageHeader header;
    EXPECT_NE(Problem(Bytes(stream.begin(), stream.begin() + static_cast<std::ptrdiff_t>(size)), header), "")
      << "cut after " << size << " of " << stream.size() << " bytes";
  }
}

TEST(SVDLowRankJpeg2000Header, MarkerSegmentRunningPastTheFrameIsRefused)
{
  Bytes stream = CodeStream(Siz{});
  const std::size_t cod = 4 + 38 + 3; // SOC, SIZ marker, Lsiz bytes
  ASSERT_EQ(stream[cod], 0xFF);
  ASSERT_EQ(stream[cod + 1], 0x52);
  stream[cod + 2] = 0xC1; // Lcod 49653, the fuzz input's length, in a stream of 79 bytes
  stream[cod + 3] = 0xF5;
  svdlr_io::Jpeg2000ImageHeader header;
  const std::string             problem = Problem(stream, header);
  EXPECT_NE(problem.find("marker segment (FF52, 49653 bytes) that runs past the end of the frame"), std::string::npos)
    << problem;
  // The same bytes as the start of a longer frame: more than the check reads is no verdict on the stream.
  EXPECT_NE(Problem(stream, header, false).find("header longer than"), std::string::npos);
  stream[cod + 2] = 0;
  stream[cod + 3] = 11; // Lcod below the 12 bytes every COD has
  EXPECT_NE(Problem(stream, header).find("FF52 of length 11"), std::string::npos) << Problem(stream, header);
}

TEST(SVDLowRankJpeg2000Header, SizFieldsOutsideTheStandardsRangesAreRefused)
{
  Siz zeroTile;
  zeroTile.xTile = 0;
  EXPECT_NE(Mismatch(zeroTile).find("tile grid"), std::string::npos);
  Siz lateTiles; // the tile grid starts after the image
  lateTiles.xOffset = 4;
  lateTiles.xTileOffset = 5;
  EXPECT_NE(Mismatch(lateTiles).find("tile grid"), std::string::npos);
  Siz tinyTiles; // 96 x 80 one-pixel tiles would do, 4096 x 80 would not
  tinyTiles.width = 4096;
  tinyTiles.xTile = 1;
  tinyTiles.yTile = 1;
  EXPECT_NE(Mismatch(tinyTiles, 80, 4096).find("327680 tiles"), std::string::npos) << Mismatch(tinyTiles, 80, 4096);
  Siz deep;
  deep.ssiz = 40; // 41 bits
  EXPECT_NE(Mismatch(deep).find("41 bits"), std::string::npos) << Mismatch(deep);
  Siz unsampled;
  unsampled.yr = 0;
  EXPECT_NE(Mismatch(unsampled).find("every 1 x 0"), std::string::npos) << Mismatch(unsampled);
  Bytes stream = CodeStream(Siz{});
  stream[5] = 44; // Lsiz for 2 components, Csiz says 1
  svdlr_io::Jpeg2000ImageHeader header;
  EXPECT_NE(Problem(stream, header).find("(Lsiz)"), std::string::npos) << Problem(stream, header);
}

TEST(SVDLowRankJpeg2000Header, FrameDescribingAnotherImageThanTheDicomHeaderIsRefused)
{
  EXPECT_EQ(Mismatch(Siz{}), "");
  EXPECT_NE(Mismatch(Siz{}, 80, 104).find("describes a 96 x 80 image in its SIZ, the DICOM header 104 x 80"),
            std::string::npos);
  EXPECT_NE(Mismatch(Siz{}, 81, 96).find("96 x 80 image"), std::string::npos);
  EXPECT_NE(Mismatch(Siz{}, 80, 96, 3).find("1 components in its SIZ, the DICOM header 3 (SamplesPerPixel)"),
            std::string::npos);
  Siz three;
  three.components = 3;
  EXPECT_NE(Mismatch(three).find("3 components"), std::string::npos);
  EXPECT_NE(Mismatch(Siz{}, 80, 96, 1, 8).find("12-bit samples in its SIZ, more than the DICOM header's 8"),
            std::string::npos);
  Siz halved;
  halved.xr = 2;
  EXPECT_NE(Mismatch(halved).find("every 2 x 1"), std::string::npos);
}

/** `path`'s bytes, with the code stream's first marker after SIZ (COD in pydicom's file) given `length`, or its
 * Xsiz moved by `widen`. */
std::string
PatchedCodeStream(const std::string & path, unsigned int length, unsigned int widen)
{
  std::string       bytes = ReadText(path);
  const std::size_t soc = bytes.find(std::string("\xFF\x4F\xFF\x51", 4));
  if (soc == std::string::npos)
  {
    return {};
  }
  const auto        at = [&](std::size_t i) { return static_cast<unsigned char>(bytes[soc + i]); };
  const std::size_t lsiz = (at(4) << 8) | at(5);
  if (length > 0)
  {
    bytes[soc + 4 + lsiz + 2] = static_cast<char>(length >> 8);
    bytes[soc + 4 + lsiz + 3] = static_cast<char>(length & 0xFF);
  }
  const std::uint32_t xsiz = (at(8) << 24) | (at(9) << 16) | (at(10) << 8) | at(11);
  for (int i = 0; i < 4; ++i)
  {
    bytes[soc + 8 + i] = static_cast<char>((xsiz + widen) >> (8 * (3 - i)));
  }
  return bytes;
}

class SVDLowRankJpeg2000Frames : public RandomTest
{};

TEST_F(SVDLowRankJpeg2000Frames, FuzzFindingsFormsAreRefusedNamingTheFileAndFrame)
{
  SVDLR_REAL_DATA_OR_SKIP(path, "pydicom/693_J2KI.dcm");
  struct Case
  {
    const char * name;
    unsigned int length, widen;
    const char * expected;
  };
  for (const Case & c : { Case{ "marker-past-the-frame", 49653, 0, "that runs past the end of the frame" },
                          Case{ "wider-than-columns", 0, 8, "image in its SIZ, the DICOM header" } })
  {
    const std::string bytes = PatchedCodeStream(path, c.length, c.widen);
    ASSERT_FALSE(bytes.empty()) << "no SOC and SIZ in " << path;
    const std::string file = Folder(c.name) + "/slice.dcm";
    std::ofstream(file, std::ios::binary) << bytes;
    SVDLR_ERROR_MESSAGE(svdlr_io::ReadDicomSeries(svdlr_io::FindDicomSeries({ file }).at(0)), message);
    EXPECT_EQ(message.rfind(file + ": frame 1 of 1: its JPEG 2000 code stream", 0), 0u) << message;
    EXPECT_NE(message.find(c.expected), std::string::npos) << message;
  }
}

TEST_F(SVDLowRankJpeg2000Frames, RealJpeg2000FilesPassTheCheck)
{
  for (const char * name : { "pydicom/693_J2KI.dcm", "pydicom/JPEG2000.dcm", "pydicom/MR_small_jp2klossless.dcm",
                             "pydicom/J2K_pixelrep_mismatch.dcm" })
  {
    SVDLR_REAL_DATA_OR_SKIP(path, name);
    EXPECT_NO_THROW(svdlr_io::ReadDicomSeries(svdlr_io::FindDicomSeries({ path }).at(0))) << name;
  }
}

} // namespace
