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
// The JPEG 2000 frame header check that runs before GDCM (SVDLowRankJpeg2000Header.h): code streams built here field by
// field (ISO/IEC 15444-1 A.5.1), cut short, and made to disagree with the DICOM header one field at a time; then the
// fuzz findings' form on a real file (pydicom's 693_J2KI, the seed they were mutated from), patched here rather than
// committed: a marker segment that runs past the frame, and a SIZ wider than the DICOM header's Columns. Both gave GDCM
// 3.0.21 a read outside its buffer (SEGV in GetHeaderInfo under ASan). Last, a header whose tiles make OpenJPEG
// allocate hundreds of MB, refused under the child's cap.
#include "SVDLowRankDicomSeries.h"
#include "SVDLowRankJpeg2000Header.h"
#include "svdlrDicomTestData.h"
#include "svdlrToolRun.h"

#include "dcmtk/dcmdata/dcfilefo.h"
#include "dcmtk/dcmdata/dcpixel.h"
#include "dcmtk/dcmdata/dcpixseq.h"
#include "dcmtk/dcmdata/dcpxitem.h"

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

/** The bytes from SOT on: SOT (12 bytes), SOD and four bytes of data. */
constexpr std::size_t kFirstTileBytes = 18;

/** SOC, SIZ, COD (12 bytes), QCD, SOT, SOD and four bytes of data: what a decoder reads before the data. */
Bytes
CodeStream(const Siz & siz)
{
  Bytes b;
  PutBig(b, 0xFF4F, 2);
  PutBig(b, 0xFF51, 2);
  PutBig(b, 38 + 3 * siz.components, 2);
  PutBig(b, 0, 2); // Rsiz
  for (const std::uint32_t v : { siz.width + siz.xOffset,
                                 siz.height + siz.yOffset,
                                 siz.xOffset,
                                 siz.yOffset,
                                 siz.xTile,
                                 siz.yTile,
                                 siz.xTileOffset,
                                 siz.yTileOffset })
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
Problem(const Bytes & bytes,
        unsigned int  rows = 80,
        unsigned int  columns = 96,
        unsigned int  samples = 1,
        unsigned int  bitsAllocated = 16)
{
  return svdlr_io::Jpeg2000FrameProblem({ { bytes.data(), bytes.size() } }, rows, columns, samples, bitsAllocated);
}

std::string
Mismatch(const Siz &  siz,
         unsigned int rows = 80,
         unsigned int columns = 96,
         unsigned int samples = 1,
         unsigned int bitsAllocated = 16)
{
  return Problem(CodeStream(siz), rows, columns, samples, bitsAllocated);
}

TEST(SVDLowRankJpeg2000Header, SoundCodeStreamOfTheDicomHeadersImagePasses)
{
  Siz siz;
  siz.xOffset = 7;
  siz.yOffset = 3;
  siz.xTileOffset = 7; // one tile: the image's own
  siz.yTileOffset = 3;
  siz.ssiz = 0x80 | 15; // 16-bit signed
  EXPECT_EQ(Mismatch(siz), "");
  siz.xTileOffset = 0; // the tile grid from the origin: 2 x 2 tiles of 96 x 80 cover 7..102 x 3..82
  siz.yTileOffset = 0;
  EXPECT_EQ(Mismatch(siz), "");
}

TEST(SVDLowRankJpeg2000Header, CodeStreamSplitAcrossFragmentsIsRead)
{
  const Bytes stream = CodeStream(Siz{});
  for (const std::size_t cut : { std::size_t{ 1 }, std::size_t{ 5 }, std::size_t{ 40 }, stream.size() - 1 })
  {
    EXPECT_EQ(svdlr_io::Jpeg2000FrameProblem(
                { { stream.data(), cut }, { stream.data() + cut, stream.size() - cut } }, 80, 96, 1, 16),
              "")
      << "fragments of " << cut << " and " << stream.size() - cut << " bytes";
  }
}

TEST(SVDLowRankJpeg2000Header, CodeStreamInsideAJp2FileIsRead)
{
  const Bytes stream = CodeStream(Siz{});
  Bytes       jp2 = { 0x00, 0x00, 0x00, 0x0C, 'j', 'P', ' ', ' ', 0x0D, 0x0A, 0x87, 0x0A };
  PutBig(jp2, 20, 4); // ftyp: brand jp2, version 0, one compatible brand
  jp2.insert(jp2.end(), { 'f', 't', 'y', 'p', 'j', 'p', '2', ' ', 0, 0, 0, 0, 'j', 'p', '2', ' ' });
  PutBig(jp2, 8 + 22 + 15,
         4); // jp2h: ihdr (80 x 96, 1 component, 12 bits), colr (greyscale)
  jp2.insert(jp2.end(), { 'j', 'p', '2', 'h' });
  PutBig(jp2, 22, 4);
  jp2.insert(jp2.end(), { 'i', 'h', 'd', 'r' });
  PutBig(jp2, 80, 4);
  PutBig(jp2, 96, 4);
  PutBig(jp2, 1, 2);
  jp2.insert(jp2.end(), { 11, 7, 0, 0 });
  PutBig(jp2, 15, 4);
  jp2.insert(jp2.end(), { 'c', 'o', 'l', 'r', 1, 0, 0 });
  PutBig(jp2, 17, 4);
  PutBig(jp2, 8 + stream.size(), 4);
  jp2.insert(jp2.end(), { 'j', 'p', '2', 'c' });
  jp2.insert(jp2.end(), stream.begin(), stream.end());
  EXPECT_EQ(Problem(jp2), "");
  EXPECT_NE(Problem(jp2, 80, 104).find("96 x 80 image"), std::string::npos) << Problem(jp2, 80, 104);
}

TEST(SVDLowRankJpeg2000Header, CodeStreamCutShortAnywhereInItsMainHeaderIsRefused)
{
  const Bytes stream = CodeStream(Siz{});
  // OpenJPEG's header ends with the first tile-part's SOT marker: a cut before it leaves the header unread.
  for (std::size_t size = 0; size < stream.size() - kFirstTileBytes + 2; ++size)
  {
    EXPECT_NE(Problem(Bytes(stream.begin(), stream.begin() + static_cast<std::ptrdiff_t>(size))), "")
      << "cut after " << size << " of " << stream.size() << " bytes";
  }
}

TEST(SVDLowRankJpeg2000Header, MarkerSegmentRunningPastTheFrameIsRefused)
{
  Bytes             stream = CodeStream(Siz{});
  const std::size_t cod = 4 + 38 + 3; // SOC, SIZ marker, Lsiz bytes
  ASSERT_EQ(stream[cod], 0xFF);
  ASSERT_EQ(stream[cod + 1], 0x52);
  stream[cod + 2] = 0xC1; // Lcod 49653, the fuzz input's length, in a stream of 83 bytes
  stream[cod + 3] = 0xF5;
  EXPECT_NE(
    Problem(stream).find("header that runs past the end of the frame (" + std::to_string(stream.size()) + " bytes)"),
    std::string::npos)
    << Problem(stream);
  stream[cod + 2] = 0;
  stream[cod + 3] = 11; // Lcod below the 12 bytes every COD has
  EXPECT_NE(Problem(stream).find("OpenJPEG refuses"), std::string::npos) << Problem(stream);
}

TEST(SVDLowRankJpeg2000Header, SizFieldsOutsideTheStandardsRangesAreRefused)
{
  Siz zeroTile;
  zeroTile.xTile = 0;
  Siz lateTiles; // the tile grid starts after the image
  lateTiles.xOffset = 4;
  lateTiles.xTileOffset = 5;
  Siz deep;
  deep.ssiz = 40; // 41 bits
  Siz unsampled;
  unsampled.yr = 0;
  for (const Siz & siz : { zeroTile, lateTiles, deep, unsampled })
  {
    EXPECT_NE(Mismatch(siz).find("OpenJPEG refuses"), std::string::npos) << Mismatch(siz);
  }
  Siz tinyTiles; // 96 x 80 one-pixel tiles would do, 4096 x 80 would not: more than 65535 tiles
  tinyTiles.width = 4096;
  tinyTiles.xTile = 1;
  tinyTiles.yTile = 1;
  EXPECT_NE(Mismatch(tinyTiles, 80, 4096).find("OpenJPEG refuses"), std::string::npos) << Mismatch(tinyTiles, 80, 4096);
  Bytes stream = CodeStream(Siz{});
  stream[5] = 44; // Lsiz for 2 components, Csiz says 1
  EXPECT_NE(Problem(stream).find("OpenJPEG refuses"), std::string::npos) << Problem(stream);
}

TEST(SVDLowRankJpeg2000Header, FrameDescribingAnotherImageThanTheDicomHeaderIsRefused)
{
  EXPECT_EQ(Mismatch(Siz{}), "");
  EXPECT_NE(Mismatch(Siz{}, 80, 104)
              .find("describes a 96 x 80 image in its SIZ, the DICOM header "
                    "104 x 80"),
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

/** `path`'s bytes, with the code stream's first marker after SIZ (COD in pydicom's file) given `length`, or its Xsiz
 * moved by `widen`. */
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

TEST_F(SVDLowRankJpeg2000Frames, HeaderMakingOpenJpegAllocateHundredsOfMegabytesIsRefusedUnderTheCap)
{
  SVDLR_REAL_DATA_OR_SKIP(path, "pydicom/MR_small_jp2klossless.dcm"); // 64 x 64, one 16-bit sample
  // The DICOM header's image in 4096 one-pixel tiles of 128 components: OpenJPEG 2.5.0 takes 594 MB for them while it
  // reads the header, more than the child's 256 MB cap for it. Without the cap it would read the header, and the frame
  // would be refused for its 128 components instead.
  Siz siz;
  siz.width = siz.height = 64;
  siz.xTile = siz.yTile = 1;
  siz.components = 128;
  siz.ssiz = 15;
  const Bytes   stream = CodeStream(siz);
  DcmFileFormat dicom;
  ASSERT_TRUE(dicom.loadFile(path.c_str()).good());
  DcmPixelData * pixelData = nullptr;
  ASSERT_TRUE(dicom.getDataset()->findAndGetElement(DCM_PixelData, reinterpret_cast<DcmElement *&>(pixelData)).good());
  DcmPixelSequence * sequence = nullptr;
  ASSERT_TRUE(pixelData->getEncapsulatedRepresentation(EXS_JPEG2000LosslessOnly, nullptr, sequence).good());
  ASSERT_EQ(sequence->card(), 2u); // the Basic Offset Table and one fragment
  DcmPixelItem * fragment = nullptr;
  ASSERT_TRUE(sequence->getItem(fragment, 1).good());
  ASSERT_TRUE(fragment->putUint8Array(stream.data(), static_cast<unsigned long>(stream.size())).good());
  const std::string file = Folder("many-tiles") + "/slice.dcm";
  ASSERT_TRUE(dicom.saveFile(file.c_str(), EXS_JPEG2000LosslessOnly).good());
  SVDLR_ERROR_MESSAGE(svdlr_io::ReadDicomSeries(svdlr_io::FindDicomSeries({ file }).at(0)), message);
  EXPECT_EQ(message.rfind(file + ": frame 1 of 1: its JPEG 2000 code stream "
                                 "has a header OpenJPEG refuses",
                          0),
            0u)
    << message;
}

TEST_F(SVDLowRankJpeg2000Frames, RealJpeg2000FilesPassTheCheck)
{
  for (const char * name : { "pydicom/693_J2KI.dcm",
                             "pydicom/JPEG2000.dcm",
                             "pydicom/MR_small_jp2klossless.dcm",
                             "pydicom/J2K_pixelrep_mismatch.dcm" })
  {
    SVDLR_REAL_DATA_OR_SKIP(path, name);
    EXPECT_NO_THROW(svdlr_io::ReadDicomSeries(svdlr_io::FindDicomSeries({ path }).at(0))) << name;
  }
}

} // namespace
