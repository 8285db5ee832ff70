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
// Folders of PNG slices as volumes (SVDLowRankPngStack): natural name order, round trips, and errors
// that name the slice at fault.
#include "SVDLowRankPngStack.h"
#include "svdlrTestScratch.h"

#include "itkRGBPixel.h"

#include <fstream>

namespace
{
using namespace svdlr_test;

template <typename TPixel>
typename itk::Image<TPixel, 2>::Pointer
RandomSlice(std::size_t width, std::size_t height, std::mt19937 & random)
{
  auto slice = itk::Image<TPixel, 2>::New();
  slice->SetRegions(itk::Size<2>{ { width, height } });
  slice->Allocate();
  std::uniform_int_distribution<unsigned int> value(1, std::numeric_limits<TPixel>::max());
  for (std::size_t i = 0; i < width * height; ++i)
  {
    slice->GetBufferPointer()[i] = static_cast<TPixel>(value(random));
  }
  return slice;
}

class PngStack : public RandomTest
{};

TEST(NaturalOrder, PutsSlice2BeforeSlice10)
{
  EXPECT_TRUE(svdlr_io::NaturalLess("slice2.png", "slice10.png"));
  EXPECT_FALSE(svdlr_io::NaturalLess("slice10.png", "slice2.png"));
  EXPECT_TRUE(svdlr_io::NaturalLess("img_9_b.png", "img_10_a.png"));
  EXPECT_TRUE(svdlr_io::NaturalLess("a.png", "B.png")) << "letters compare without case";
  EXPECT_TRUE(svdlr_io::NaturalLess("x007.png", "x8.png")) << "leading zeros do not change a number";
  EXPECT_NE(svdlr_io::NaturalLess("x01.png", "x1.png"), svdlr_io::NaturalLess("x1.png", "x01.png"))
    << "the order is total: equal numbers fall back to plain comparison";
  EXPECT_TRUE(svdlr_io::NaturalLess("s99999999999999999999.png", "s100000000000000000000.png"))
    << "numbers longer than any integer type";
}

TEST_F(PngStack, FindsOnlyPngFilesInNaturalOrder)
{
  const std::string folder = Folder("slices");
  for (const char * name : { "slice10.png", "slice2.png", "slice1.PNG", "notes.txt", "slice3.png.bak" })
  {
    std::ofstream(folder + "/" + name) << "x";
  }
  const auto files = svdlr_io::FindPngSlices(folder);
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(fs::path(files[0]).filename(), "slice1.PNG");
  EXPECT_EQ(fs::path(files[1]).filename(), "slice2.png");
  EXPECT_EQ(fs::path(files[2]).filename(), "slice10.png");
}

TEST_F(PngStack, ReadsSlicesInNaturalOrderIntoOneVolume)
{
  const std::string                                   folder = Folder("slices");
  std::vector<itk::Image<unsigned short, 2>::Pointer> slices;
  for (int k = 0; k < 12; ++k)
  {
    slices.push_back(RandomSlice<unsigned short>(17, 11, m_Random));
    itk::WriteImage(slices.back(), folder + "/slice" + std::to_string(k) + ".png");
  }
  const auto files = svdlr_io::FindPngSlices(folder);
  EXPECT_EQ(svdlr_io::PngStackComponentType(files), itk::IOComponentEnum::USHORT);
  const auto volume = svdlr_io::ReadPngStack<unsigned short>(files);
  ASSERT_EQ(volume->GetLargestPossibleRegion().GetSize(), (itk::Size<3>{ { 17, 11, 12 } }));
  for (int k = 0; k < 12; ++k)
  {
    for (itk::IndexValueType y = 0; y < 11; ++y)
    {
      for (itk::IndexValueType x = 0; x < 17; ++x)
      {
        ASSERT_EQ(volume->GetPixel({ { x, y, k } }), slices[k]->GetPixel({ { x, y } })) << "slice " << k;
      }
    }
  }
}

TEST_F(PngStack, WrittenStackReadsBackTheSame)
{
  auto stack = itk::Image<unsigned char, 3>::New();
  stack->SetRegions(itk::Size<3>{ { 9, 7, 15 } });
  stack->Allocate();
  std::uniform_int_distribution<int> value(1, 255);
  for (std::size_t i = 0; i < 9 * 7 * 15; ++i)
    stack->GetBufferPointer()[i] = static_cast<unsigned char>(value(m_Random));
  svdlr_io::WritePngStack(stack.GetPointer(), Folder("out"));
  const auto written = svdlr_io::FindPngSlices(Path("out"));
  ASSERT_EQ(written.size(), 15u);
  EXPECT_EQ(fs::path(written[2]).filename(), "slice0002.png");
  const auto back = svdlr_io::ReadPngStack<unsigned char>(written);
  EXPECT_TRUE(std::equal(stack->GetBufferPointer(), stack->GetBufferPointer() + 9 * 7 * 15, back->GetBufferPointer()));
}

TEST_F(PngStack, OtherPixelTypesAreWrittenAsSixteenBitsRoundedAndClamped)
{
  auto volume = itk::Image<float, 3>::New();
  volume->SetRegions(itk::Size<3>{ { 4, 3, 2 } });
  volume->Allocate();
  std::uniform_real_distribution<float> value(10.0f, 60000.0f);
  for (std::size_t i = 0; i < 24; ++i)
    volume->GetBufferPointer()[i] = value(m_Random);
  volume->GetBufferPointer()[5] = -3.0f;
  volume->GetBufferPointer()[6] = 70000.0f;
  EXPECT_EQ(svdlr_io::WritePngStackAsUnsigned(volume.GetPointer(), Folder("out")), 2u);
  const auto back = svdlr_io::ReadPngStack<unsigned short>(svdlr_io::FindPngSlices(Path("out")));
  EXPECT_EQ(back->GetBufferPointer()[5], 0);
  EXPECT_EQ(back->GetBufferPointer()[6], 65535);
  EXPECT_EQ(back->GetBufferPointer()[7], static_cast<unsigned short>(std::round(volume->GetBufferPointer()[7])));
}

TEST_F(PngStack, SlicesOfDifferentSizesAreAnErrorNamingTheSlice)
{
  const std::string folder = Folder("slices");
  itk::WriteImage(RandomSlice<unsigned char>(8, 8, m_Random), folder + "/s1.png");
  itk::WriteImage(RandomSlice<unsigned char>(8, 8, m_Random), folder + "/s2.png");
  itk::WriteImage(RandomSlice<unsigned char>(8, 9, m_Random), folder + "/s10.png");
  try
  {
    svdlr_io::ReadPngStack<unsigned char>(svdlr_io::FindPngSlices(folder));
    FAIL() << "no error";
  }
  catch (const svdlr_io::PngStackError & error)
  {
    EXPECT_NE(std::string(error.what()).find("s10.png: is 8x9 pixels"), std::string::npos) << error.what();
  }
}

TEST_F(PngStack, ColourSlicesAreAnError)
{
  using RGBImage = itk::Image<itk::RGBPixel<unsigned char>, 2>;
  auto colour = RGBImage::New();
  colour->SetRegions(itk::Size<2>{ { 5, 5 } });
  colour->Allocate();
  colour->FillBuffer(itk::RGBPixel<unsigned char>(40));
  itk::WriteImage(colour, Folder("slices") + "/c1.png");
  EXPECT_THROW(svdlr_io::PngStackComponentType(svdlr_io::FindPngSlices(Path("slices"))), svdlr_io::PngStackError);
}

TEST_F(PngStack, AnUnreadableSliceIsAnErrorNamingIt)
{
  const std::string folder = Folder("slices");
  itk::WriteImage(RandomSlice<unsigned char>(8, 8, m_Random), folder + "/s1.png");
  std::ofstream(folder + "/s2.png") << "not a PNG";
  try
  {
    svdlr_io::ReadPngStack<unsigned char>(svdlr_io::FindPngSlices(folder));
    FAIL() << "no error";
  }
  catch (const svdlr_io::PngStackError & error)
  {
    EXPECT_EQ(std::string(error.what()).rfind(folder + "/s2.png: cannot be read", 0), 0u) << error.what();
  }
}

} // namespace
