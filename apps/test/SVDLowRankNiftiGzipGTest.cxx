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
// The tools' own .nii.gz reader and writer (SVDLowRankGzip, SVDLowRankNiftiRead, SVDLowRankNiftiWrite): the pixels
// they read equal ITK 5.2's reader's bit for bit, for every scalar type and for scaled files; what they write is one
// gzip stream of several members that zlib and ITK read back exactly; a cut stream is reported with its missing
// bytes; the size rule past 4 GiB; a full disk leaves nothing.
#include "SVDLowRankGzip.h"
#include "svdlr/CpuThreads.h"
#include "SVDLowRankImageFileCheck.h"
#include "SVDLowRankNiftiHeaderRead.h"
#include "SVDLowRankNiftiRead.h"
#include "SVDLowRankNiftiWrite.h"
#include "SVDLowRankStagedOutput.h"
#include "svdlrJobOnAnotherThread.h"
#include "svdlrTestScratch.h"
#include "svdlrToolRun.h"

#include "itkImage.h"
#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itkVectorImage.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <csignal>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace
{
namespace fs = std::filesystem;

std::vector<unsigned char>
FileBytes(const std::string & path)
{
  std::ifstream file(path, std::ios::binary);
  return std::vector<unsigned char>(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

/** The file decompressed by zlib's gzread, which reads every member of a multi-member file. */
std::vector<unsigned char>
ZlibDecompressed(const std::string & path)
{
  gzFile                     file = gzopen(path.c_str(), "rb");
  std::vector<unsigned char> bytes, chunk(1 << 16);
  int                        got = 0;
  while (file != nullptr && (got = gzread(file, chunk.data(), static_cast<unsigned>(chunk.size()))) > 0)
  {
    bytes.insert(bytes.end(), chunk.begin(), chunk.begin() + got);
  }
  if (file != nullptr)
  {
    gzclose(file);
  }
  return bytes;
}

/** How many gzip members the file holds: each starts with 1f 8b 08 where the previous one ended (decompressed by
 * zlib's inflate one member at a time). */
int
MemberCount(const std::vector<unsigned char> & file)
{
  int         members = 0;
  std::size_t at = 0;
  while (at + 18 <= file.size() && svdlr_io::StartsGzipMember(file.data() + at, file.size() - at))
  {
    z_stream stream{};
    inflateInit2(&stream, 16 + MAX_WBITS);
    std::vector<unsigned char> sink(1 << 16);
    stream.next_in = const_cast<unsigned char *>(file.data() + at);
    stream.avail_in = static_cast<uInt>(file.size() - at);
    int code = Z_OK;
    while (code == Z_OK)
    {
      stream.next_out = sink.data();
      stream.avail_out = static_cast<uInt>(sink.size());
      code = inflate(&stream, Z_NO_FLUSH);
    }
    at += stream.total_in;
    inflateEnd(&stream);
    if (code != Z_STREAM_END)
    {
      return -1;
    }
    ++members;
  }
  return members;
}

class NiftiGzip : public svdlr_test::RandomTest
{
protected:
  std::vector<unsigned char>
  RandomBytes(std::size_t size, bool compressible)
  {
    std::vector<unsigned char>         bytes(size);
    std::uniform_int_distribution<int> byte(0, 255);
    for (std::size_t i = 0; i < size; ++i)
    {
      bytes[i] = static_cast<unsigned char>(compressible ? (i / 977) % 7 + (byte(m_Random) < 8 ? 1 : 0) : byte(m_Random));
    }
    return bytes;
  }

  template <typename TImage>
  typename TImage::Pointer
  RandomImage(const typename TImage::SizeType & size, double low, double high)
  {
    auto image = TImage::New();
    image->SetRegions(size);
    image->Allocate();
    std::uniform_real_distribution<double> value(low, high);
    using Pixel = typename TImage::PixelType;
    for (Pixel * p = image->GetBufferPointer(); p != image->GetBufferPointer() + image->GetPixelContainer()->Size(); ++p)
    {
      *p = static_cast<Pixel>(value(m_Random));
    }
    return image;
  }

  /** Writes `image` as .nii, then sets scl_slope and scl_inter in its header and gzips it to `path`. */
  template <typename TImage>
  void
  WriteScaled(const TImage * image, const std::string & path, float slope, float intercept)
  {
    const std::string plain = Path("scaled-source.nii");
    itk::WriteImage(image, plain, false);
    std::vector<unsigned char> bytes = FileBytes(plain);
    std::memcpy(bytes.data() + 112, &slope, 4);
    std::memcpy(bytes.data() + 116, &intercept, 4);
    gzFile out = gzopen(path.c_str(), "wb");
    ASSERT_NE(out, nullptr);
    ASSERT_EQ(gzwrite(out, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
    gzclose(out);
  }
};

/** Ours and ITK's reader give the same pixels, bit for bit, as TOutput. */
template <typename TOutput>
void
ExpectSameAsItk(const std::string & path)
{
  const auto ours = svdlr_io::ReadImageFile<TOutput>(path);
  const auto itks = itk::ReadImage<TOutput>(path);
  ASSERT_EQ(ours->GetLargestPossibleRegion(), itks->GetLargestPossibleRegion()) << path;
  EXPECT_EQ(ours->GetSpacing(), itks->GetSpacing()) << path;
  EXPECT_EQ(ours->GetOrigin(), itks->GetOrigin()) << path;
  EXPECT_EQ(ours->GetDirection(), itks->GetDirection()) << path;
  const std::size_t bytes = itks->GetPixelContainer()->Size() * sizeof(typename TOutput::PixelType);
  EXPECT_EQ(std::memcmp(ours->GetBufferPointer(), itks->GetBufferPointer(), bytes), 0) << path;
}

TEST(GzipSizeRule, MemberOver4GiBIsSizedFromItsIsizeAndWhatItHeldAlready)
{
  const std::uint64_t seed = svdlr::test::FreshSeed();
  SCOPED_TRACE(svdlr::test::SeedTrace(seed));
  std::mt19937_64                              random(seed);
  std::uniform_int_distribution<std::uint64_t> size(0, std::uint64_t{ 1 } << 40);
  for (int i = 0; i < 1000; ++i)
  {
    const std::uint64_t n = size(random);
    const auto          isize = static_cast<std::uint32_t>(n); // RFC 1952: the size modulo 2^32
    const std::uint64_t below = n > (std::uint64_t{ 1 } << 32) ? n - (std::uint64_t{ 1 } << 32) + 1 : 0;
    std::uniform_int_distribution<std::uint64_t> atLeast(below, n);
    EXPECT_EQ(svdlr_io::GzipMemberSize(isize, atLeast(random)), n) << "n " << n;
  }
  EXPECT_EQ(svdlr_io::GzipMemberSize(5, 0), 5u);
  EXPECT_EQ(svdlr_io::GzipMemberSize(5, 6), 5u + (std::uint64_t{ 1 } << 32)) << "a member known to hold more";
  EXPECT_EQ(svdlr_io::GzipMemberSize(0, std::uint64_t{ 1 } << 32), std::uint64_t{ 1 } << 32) << "exactly 4 GiB";
}

// Level 1, the default, is ISA-L's igzip where the I/O library is built with it, and level 6 libdeflate's: both give
// members that zlib and our decoder read back whole, also from incompressible bytes (stored blocks).
TEST_F(NiftiGzip, CompressedMembersDecompressWholeThroughOursAndZlib)
{
  for (const auto & [compressible, level] : std::vector<std::pair<bool, int>>{ { true, 0 }, { false, 0 }, { true, 6 },
                                                                               { false, 6 } })
  {
    SCOPED_TRACE("level " + std::to_string(level) + (compressible ? ", compressible" : ", incompressible"));
    const auto data = RandomBytes(2 * svdlr_io::kGzipMemberBytes + 12345, compressible);
    std::vector<unsigned char> file;
    // A header part of its own, then the rest: 1 member, then 3 (2 whole and the remainder).
    const std::size_t head = 352;
    svdlr_io::CompressGzip({ { data.data(), head }, { data.data() + head, data.size() - head } },
                           level,
                           compressible ? 2 : 16,
                           [&](const unsigned char * bytes, std::size_t size) {
                             file.insert(file.end(), bytes, bytes + size);
                           });
    EXPECT_EQ(MemberCount(file), 4);
    {
      std::ofstream(Path("members.gz"), std::ios::binary).write(reinterpret_cast<const char *>(file.data()), file.size());
    }
    EXPECT_EQ(ZlibDecompressed(Path("members.gz")), data) << "zlib's gzread reads every member";
    for (const std::uint64_t expected : { std::uint64_t{ data.size() }, std::uint64_t{ 100 }, std::uint64_t{ 0 } })
    {
      const auto ours = svdlr_io::DecompressGzip(file.data(), file.size(), expected);
      EXPECT_TRUE(ours.complete) << "expected " << expected;
      EXPECT_EQ(std::vector<unsigned char>(ours.bytes.begin(), ours.bytes.end()), data) << "expected " << expected << " (below the size: the buffer grows)";
    }
    file.resize(file.size() - 1 - std::uniform_int_distribution<std::size_t>(0, file.size() / 2)(m_Random));
    EXPECT_FALSE(svdlr_io::DecompressGzip(file.data(), file.size(), data.size()).complete) << "a cut stream";

    // No bytes at all: one empty member, still gzip.
    std::vector<unsigned char> empty;
    svdlr_io::CompressGzip({}, level, 2, [&](const unsigned char * bytes, std::size_t size) {
      empty.insert(empty.end(), bytes, bytes + size);
    });
    EXPECT_EQ(MemberCount(empty), 1);
    const auto none = svdlr_io::DecompressGzip(empty.data(), empty.size(), 0);
    EXPECT_TRUE(none.complete);
    EXPECT_EQ(none.bytes.size(), 0u);
  }
}

TEST_F(NiftiGzip, PixelsEqualItksReaderForEveryScalarType)
{
  using Size3 = itk::Size<3>;
  using Size4 = itk::Size<4>;
  const Size3 size3{ { 11, 7, 5 } };
  const Size4 size4{ { 6, 5, 4, 3 } };
  const auto  both = [&](auto image, const std::string & stem) {
    using Image = typename decltype(image)::ObjectType;
    for (const char * extension : { ".nii.gz", ".nii" })
    {
      const std::string path = Path(stem + extension);
      itk::WriteImage(image.GetPointer(), path, std::string(extension) == ".nii.gz");
      ExpectSameAsItk<Image>(path);
      ExpectSameAsItk<itk::Image<float, Image::ImageDimension>>(path);
      ExpectSameAsItk<itk::Image<double, Image::ImageDimension>>(path);
    }
  };
  both(RandomImage<itk::Image<unsigned char, 3>>(size3, 0, 255), "u8");
  both(RandomImage<itk::Image<signed char, 3>>(size3, -128, 127), "s8");
  both(RandomImage<itk::Image<short, 3>>(size3, -32768, 32767), "s16");
  both(RandomImage<itk::Image<unsigned short, 4>>(size4, 0, 65535), "u16");
  both(RandomImage<itk::Image<int, 3>>(size3, -1e9, 1e9), "s32");
  both(RandomImage<itk::Image<unsigned int, 3>>(size3, 0, 4e9), "u32");
  both(RandomImage<itk::Image<float, 4>>(size4, -1e3, 1e3), "f32");
  both(RandomImage<itk::Image<double, 3>>(size3, -1e3, 1e3), "f64");
}

TEST_F(NiftiGzip, ScaledFilesEqualItksReader)
{
  const itk::Size<3> size{ { 9, 8, 7 } };
  std::uniform_real_distribution<float> slope(0.01f, 3.0f), intercept(-100.0f, 100.0f);
  const float a = slope(m_Random), b = intercept(m_Random);
  WriteScaled(RandomImage<itk::Image<short, 3>>(size, -32768, 32767).GetPointer(), Path("s16.nii.gz"), a, b);
  ExpectSameAsItk<itk::Image<float, 3>>(Path("s16.nii.gz"));
  ExpectSameAsItk<itk::Image<double, 3>>(Path("s16.nii.gz"));
  WriteScaled(RandomImage<itk::Image<unsigned char, 3>>(size, 0, 255).GetPointer(), Path("u8.nii.gz"), a, 0.0f);
  ExpectSameAsItk<itk::Image<float, 3>>(Path("u8.nii.gz"));
  WriteScaled(RandomImage<itk::Image<float, 3>>(size, -10, 10).GetPointer(), Path("f32.nii.gz"), a, b);
  ExpectSameAsItk<itk::Image<float, 3>>(Path("f32.nii.gz"));
  WriteScaled(RandomImage<itk::Image<double, 3>>(size, -10, 10).GetPointer(), Path("f64.nii.gz"), 1.0f, b);
  ExpectSameAsItk<itk::Image<double, 3>>(Path("f64.nii.gz"));
  WriteScaled(RandomImage<itk::Image<short, 3>>(size, -300, 300).GetPointer(), Path("zero.nii.gz"), 0.0f, b);
  ExpectSameAsItk<itk::Image<float, 3>>(Path("zero.nii.gz")); // slope 0 reads as 1, the intercept still applies
}

TEST_F(NiftiGzip, Colin27EqualsItksReader)
{
#ifdef SVDLR_COLIN27_NII
  if (!fs::exists(SVDLR_COLIN27_NII))
  {
    GTEST_SKIP() << "Colin27 (mricron-data) not installed";
  }
  ExpectSameAsItk<itk::Image<unsigned char, 3>>(SVDLR_COLIN27_NII);
  ExpectSameAsItk<itk::Image<float, 3>>(SVDLR_COLIN27_NII);
#else
  GTEST_SKIP() << "Colin27 (mricron-data) not configured";
#endif
}

TEST_F(NiftiGzip, ChecksAndReadDecompressOnceAndStillSeeAChangedFile)
{
  auto image = RandomImage<itk::Image<float, 3>>(itk::Size<3>{ { 10, 9, 8 } }, -5, 5);
  itk::WriteImage(image.GetPointer(), Path("a.nii.gz"), true);
  svdlr_io::CheckImageFile(Path("a.nii.gz"), svdlr_io::ImageFileScan::ValuesForRead); // kept for the read
  image->FillBuffer(7.0f);
  itk::WriteImage(image.GetPointer(), Path("a.nii.gz"), true); // rewritten after the check
  const auto read = svdlr_io::ReadImageFile<itk::Image<float, 3>>(Path("a.nii.gz"));
  EXPECT_EQ(read->GetPixel({ { 3, 4, 5 } }), 7.0f) << "the bytes kept by the check were of an older file";
}

TEST_F(NiftiGzip, WrittenFileIsMembersThatItkAndZlibReadBackExactly)
{
  using Image = itk::Image<float, 4>;
  // 4 x 4 MiB of floats: several members.
  const auto image = RandomImage<Image>(itk::Size<4>{ { 64, 64, 32, 16 } }, -1, 1);
  svdlr_io::ImageWriteSettings settings;
  settings.niftiFields = svdlr_io::NiftiHeaderFields{ 4, 2, "made by a test", 16 };
  svdlr_io::WriteImageFile(image.GetPointer(), Path("ours.nii.gz"), settings);
  itk::WriteImage(image.GetPointer(), Path("itk.nii"), false);
  EXPECT_GT(MemberCount(FileBytes(Path("ours.nii.gz"))), 1);
  auto expected = FileBytes(Path("itk.nii"));
  ASSERT_TRUE(svdlr_io::PatchNiftiHeaderFields(expected.data(), *settings.niftiFields));
  EXPECT_EQ(ZlibDecompressed(Path("ours.nii.gz")), expected) << "ITK's .nii with the fields set";
  const auto back = itk::ReadImage<Image>(Path("ours.nii.gz"));
  EXPECT_EQ(std::memcmp(back->GetBufferPointer(), image->GetBufferPointer(), image->GetPixelContainer()->Size() * 4), 0);
  const auto head = svdlr_io::ReadDecompressedHead(Path("ours.nii.gz"), svdlr_io::kNiftiHeaderBytes);
  const auto header = svdlr_io::ParseNiftiHeader(head.data(), head.size());
  ASSERT_TRUE(header);
  EXPECT_EQ(header->qformCode, 4);
  EXPECT_EQ(header->sformCode, 2);
  EXPECT_EQ(header->description, "made by a test");
  EXPECT_EQ(header->xyztUnits & 0x38, 16);
  EXPECT_TRUE(svdlr_test::Listing(m_Directory).count("ours.nii.gz")) << "and nothing beside it but the test's files";
  for (const auto & name : svdlr_test::Listing(m_Directory))
  {
    EXPECT_EQ(name.find("uncompressed"), std::string::npos) << name;
  }
}

/** Writes `image` through our writer to STEM.nii.gz and ITK's to STEM.nii: the same bytes once ours is decompressed,
 * and ITK's reader reads ours back with the same geometry and pixels. */
template <typename TImage>
void
ExpectWrittenLikeItk(const TImage * image, const std::string & stem)
{
  SCOPED_TRACE(stem);
  svdlr_io::WriteImageFile(image, stem + ".nii.gz");
  itk::WriteImage(image, stem + ".nii", false);
  EXPECT_EQ(ZlibDecompressed(stem + ".nii.gz"), FileBytes(stem + ".nii")) << "header and pixels as ITK writes them";
  const auto back = itk::ReadImage<TImage>(stem + ".nii.gz"); // several members
  const auto itks = itk::ReadImage<TImage>(stem + ".nii");
  EXPECT_EQ(back->GetLargestPossibleRegion(), image->GetLargestPossibleRegion());
  EXPECT_EQ(back->GetSpacing(), itks->GetSpacing());
  EXPECT_EQ(back->GetOrigin(), itks->GetOrigin());
  EXPECT_EQ(back->GetDirection(), itks->GetDirection());
  const std::size_t bytes = image->GetPixelContainer()->Size() * sizeof(typename TImage::PixelType);
  EXPECT_EQ(std::memcmp(back->GetBufferPointer(), image->GetBufferPointer(), bytes), 0);
}

TEST_F(NiftiGzip, ImagesWrittenFromTheirBufferEqualItksFileForEveryShapeAndType)
{
  // Oblique geometry, axes of 1 (which niftilib may drop from dim[0]), every scalar type, and an image of several
  // members, so that the header taken from ITK's small copy must be the one ITK writes for the whole image.
  std::uniform_real_distribution<double> angle(0.05, 1.5), spacing(0.4, 3.0), origin(-100.0, 100.0);
  const auto                             place = [&](auto & image) {
    auto         direction = image.GetDirection();
    const double a = angle(m_Random);
    direction[0][0] = std::cos(a);
    direction[0][1] = -std::sin(a);
    direction[1][0] = std::sin(a);
    direction[1][1] = std::cos(a);
    image.SetDirection(direction);
    auto s = image.GetSpacing();
    auto o = image.GetOrigin();
    for (unsigned int i = 0; i < s.Size(); ++i)
    {
      s[i] = spacing(m_Random);
      o[i] = origin(m_Random);
    }
    image.SetSpacing(s);
    image.SetOrigin(o);
  };
  auto f4 = RandomImage<itk::Image<float, 4>>(itk::Size<4>{ { 96, 64, 30, 5 } }, -1e3, 1e3); // 3.5 MiB: 5 members
  place(*f4);
  ExpectWrittenLikeItk(f4.GetPointer(), Path("f4"));
  auto oneVolume = RandomImage<itk::Image<float, 4>>(itk::Size<4>{ { 7, 6, 5, 1 } }, -1, 1);
  place(*oneVolume);
  ExpectWrittenLikeItk(oneVolume.GetPointer(), Path("one-volume"));
  auto oneSlice = RandomImage<itk::Image<short, 4>>(itk::Size<4>{ { 7, 6, 1, 4 } }, -32768, 32767);
  place(*oneSlice);
  ExpectWrittenLikeItk(oneSlice.GetPointer(), Path("one-slice"));
  auto line = RandomImage<itk::Image<unsigned char, 3>>(itk::Size<3>{ { 1, 9, 1 } }, 0, 255);
  ExpectWrittenLikeItk(line.GetPointer(), Path("line"));
  auto u16 = RandomImage<itk::Image<unsigned short, 3>>(itk::Size<3>{ { 13, 11, 9 } }, 0, 65535);
  place(*u16);
  ExpectWrittenLikeItk(u16.GetPointer(), Path("u16"));
  auto f64 = RandomImage<itk::Image<double, 3>>(itk::Size<3>{ { 5, 4, 3 } }, -1, 1);
  ExpectWrittenLikeItk(f64.GetPointer(), Path("f64"));
  auto s32 = RandomImage<itk::Image<int, 2>>(itk::Size<2>{ { 17, 3 } }, -1e9, 1e9);
  ExpectWrittenLikeItk(s32.GetPointer(), Path("s32"));
  auto s8 = RandomImage<itk::Image<signed char, 3>>(itk::Size<3>{ { 4, 4, 4 } }, -128, 127);
  ExpectWrittenLikeItk(s8.GetPointer(), Path("s8"));
  for (const auto & name : svdlr_test::Listing(m_Directory))
  {
    EXPECT_EQ(name.find("uncompressed"), std::string::npos) << name << ": the small copy is removed";
  }
}

TEST_F(NiftiGzip, VectorImagesStillWriteThroughItksUncompressedFile)
{
  auto image = itk::VectorImage<float, 3>::New();
  image->SetRegions(itk::Size<3>{ { 6, 5, 4 } });
  image->SetNumberOfComponentsPerPixel(3);
  image->Allocate();
  std::uniform_real_distribution<float> value(-1, 1);
  for (float * p = image->GetBufferPointer(); p != image->GetBufferPointer() + 6 * 5 * 4 * 3; ++p)
  {
    *p = value(m_Random);
  }
  svdlr_io::WriteImageFile(image.GetPointer(), Path("v.nii.gz"));
  itk::WriteImage(image.GetPointer(), Path("v.nii"), false);
  EXPECT_EQ(ZlibDecompressed(Path("v.nii.gz")), FileBytes(Path("v.nii")));
  EXPECT_GT(MemberCount(FileBytes(Path("v.nii.gz"))), 1) << "the header a member of its own";
}

TEST_F(NiftiGzip, VerificationComparesTheDiskWithWhatWasWritten)
{
  const auto image = RandomImage<itk::Image<float, 3>>(itk::Size<3>{ { 32, 32, 16 } }, -1, 1);
  svdlr_io::WriteImageFile(image.GetPointer(), Path("a.nii.gz"));
  EXPECT_NO_THROW(svdlr_io::VerifyWrittenFile(Path("a.nii.gz"), "a.nii.gz"));
  {
    const auto     middle = static_cast<std::streamoff>(fs::file_size(Path("a.nii.gz")) / 2);
    std::fstream   file(Path("a.nii.gz"), std::ios::binary | std::ios::in | std::ios::out);
    file.seekg(middle);
    const int byte = file.get();
    file.seekp(middle);
    file.put(static_cast<char>(~byte)); // a byte changed on the disk, the size kept
  }
  EXPECT_THROW(svdlr_io::VerifyWrittenFile(Path("a.nii.gz"), "a.nii.gz"), svdlr_io::OutputWriteError);
  svdlr_io::WriteImageFile(image.GetPointer(), Path("b.nii.gz"));
  fs::resize_file(Path("b.nii.gz"), fs::file_size(Path("b.nii.gz")) - 100);
  EXPECT_THROW(svdlr_io::VerifyWrittenFile(Path("b.nii.gz"), "b.nii.gz"), svdlr_io::OutputWriteError);
}

TEST_F(NiftiGzip, FullDiskLeavesNothingAtTheOutputsName)
{
  // RLIMIT_FSIZE with SIGXFSZ ignored, in a child: a write past 64 KiB fails with EFBIG, as one on a full disk
  // with ENOSPC (the hostile-input suite's fault).
  const std::string target = Path("out.nii.gz");
  const auto        image = RandomImage<itk::Image<float, 3>>(itk::Size<3>{ { 64, 64, 16 } }, -1, 1);
  const pid_t       child = fork();
  if (child == 0)
  {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{ 64 * 1024, 64 * 1024 };
    setrlimit(RLIMIT_FSIZE, &limit);
    try
    {
      svdlr_io::WriteFileAtomically(target, false, [&](const std::string & temporary) {
        svdlr_io::WriteImageFile(image.GetPointer(), temporary);
      });
      _exit(1); // 256 KiB of random floats cannot fit
    }
    catch (const svdlr_io::OutputWriteError & error)
    {
      _exit(std::string(error.what()).find("writing '" + target + "' failed") == std::string::npos ? 2 : 0);
    }
    catch (...)
    {
      _exit(3);
    }
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: the write passed; 2: the error did not name the output; 3: another error";
  EXPECT_TRUE(svdlr_test::Listing(m_Directory).empty()) << "no output, no temporary";
}

/** Three file jobs (other readers and writers) held on threads of their own while `step` runs: the step then gets a
 * third or less of the cores (svdlr::ShareOfCpuThreads), one on a machine of up to five. */
template <typename TStep>
void
BesideOtherFileJobs(const TStep & step)
{
  std::vector<std::unique_ptr<svdlr_test::JobOnAnotherThread>> others;
  for (int k = 0; k < 3; ++k)
  {
    others.push_back(std::make_unique<svdlr_test::JobOnAnotherThread>(svdlr::ParallelJobKind::FileInputOutput));
  }
  step();
}

TEST_F(NiftiGzip, AReadBesideOtherFileJobsGivesTheVoxelsOfALoneRead)
{
  // Over two conversion chunks (svdlr_io::kParallelChunk voxels) and the parallel gunzip's smallest member, so that
  // the lone read splits its decompression and conversion over the cores, and the shared one does not.
  using Image = itk::Image<short, 4>;
  const std::string path = Path("series.nii.gz");
  itk::WriteImage(RandomImage<Image>(itk::Size<4>{ { 64, 64, 40, 12 } }, -2000, 2000).GetPointer(), path, true);
  const auto        alone = svdlr_io::ReadImageFile<itk::Image<float, 4>>(path);
  const std::size_t bytes = alone->GetPixelContainer()->Size() * sizeof(float);
  BesideOtherFileJobs([&] {
    const auto shared = svdlr_io::ReadImageFile<itk::Image<float, 4>>(path);
    ASSERT_EQ(shared->GetPixelContainer()->Size() * sizeof(float), bytes);
    EXPECT_EQ(std::memcmp(shared->GetBufferPointer(), alone->GetBufferPointer(), bytes), 0);
  });
  ExpectSameAsItk<itk::Image<float, 4>>(path);
}

TEST_F(NiftiGzip, AWriteBesideOtherFileJobsIsTheFileOfALoneWrite)
{
  const auto image = RandomImage<itk::Image<float, 3>>(itk::Size<3>{ { 96, 96, 60 } }, -1, 1); // several members
  svdlr_io::WriteImageFile(image.GetPointer(), Path("alone.nii.gz"));
  BesideOtherFileJobs([&] { svdlr_io::WriteImageFile(image.GetPointer(), Path("shared.nii.gz")); });
  const auto written = FileBytes(Path("alone.nii.gz"));
  EXPECT_GT(MemberCount(written), 2);
  EXPECT_TRUE(FileBytes(Path("shared.nii.gz")) == written);
}

} // namespace
