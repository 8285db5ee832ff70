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
// The tool's figure (SVDLowRankFigure.h): its font covers what the labels say, the kept rank's marker sits where
// the kept singular values end, and the |difference| panel and its colour bar use the colour map's whole range.
#include "SVDLowRankFigure.h"
#include "svdlrTestScratch.h"

#include "itkImageFileReader.h"

#include <gtest/gtest.h>

namespace
{
using namespace svdlr_test;
using svdlr_tools::Colour;

class Figure : public RandomTest
{
protected:
  static bool
  Same(const svdlr_tools::RGBPixel & a, const svdlr_tools::RGBPixel & b)
  {
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
  }
};

TEST_F(Figure, TheFontHasEveryCharacterOfTheLabelsAndNumbers)
{
  const std::string used = "original reconstruction |difference| singular values (log) index k = "
                           "0123456789.e+- slice of axis rank fixed noise mp-cg energy CPU CUDA solver Exact Subspace";
  for (const char c : used)
  {
    EXPECT_EQ(svdlr_tools::FigureGlyphOf(c).character, c) << "no glyph for '" << c << "'";
  }
  EXPECT_EQ(svdlr_tools::FigureGlyphOf('\t').character, '?');
}

TEST_F(Figure, TheRankMarkerSitsWhereTheKeptValuesEnd)
{
  std::uniform_real_distribution<double> uniform(10.0, 200.0);
  svdlr_tools::SliceView                 original{ 30, 40, {} }, reconstruction{ 30, 40, {} };
  for (std::size_t i = 0; i < 30 * 40; ++i)
  {
    original.values.push_back(uniform(m_Random));
    reconstruction.values.push_back(original.values.back() + uniform(m_Random) / 20.0);
  }
  std::vector<double> spectrum;
  for (int i = 0; i < 30; ++i)
  {
    spectrum.push_back(1000.0 * std::pow(0.8, i) * uniform(m_Random) / 100.0 + 1.0 / (i + 1));
  }
  std::sort(spectrum.rbegin(), spectrum.rend());
  const std::size_t rank = 4 + m_Random() % 20;
  const std::string path = Path("figure.png");
  svdlr_tools::WriteSliceFigure(path, "a title", original, reconstruction, spectrum, rank);

  const auto image = itk::ReadImage<svdlr_tools::RGBImage>(path);
  const auto size = image->GetLargestPossibleRegion().GetSize();
  const long width = static_cast<long>(size[0]), height = static_cast<long>(size[1]);
  const auto at = [&](long x, long y) { return image->GetPixel({ { x, y } }); };
  // The spectrum starts at its first kept (blue) value; the grey images lie left of it.
  long firstKept = width, lastKept = -1;
  bool darkest = false, brightest = false;
  for (long y = 0; y < height; ++y)
  {
    for (long x = 0; x < width; ++x)
    {
      if (Same(at(x, y), Colour(30, 90, 200)))
      {
        firstKept = std::min(firstKept, x);
        lastKept = std::max(lastKept, x);
      }
      darkest = darkest || Same(at(x, y), svdlr_tools::DifferenceColour(0.0));
      brightest = brightest || Same(at(x, y), svdlr_tools::DifferenceColour(1.0));
    }
  }
  // The marker: the column with the most red pixels (a dashed line, not its label).
  long marker = -1, firstDropped = width;
  int  mostRed = 0;
  for (long x = firstKept; x < width; ++x)
  {
    int red = 0;
    for (long y = 0; y < height; ++y)
    {
      red += Same(at(x, y), Colour(210, 30, 30)) ? 1 : 0;
      if (Same(at(x, y), Colour(150, 150, 150)))
        firstDropped = std::min(firstDropped, x);
    }
    if (red > mostRed)
    {
      mostRed = red;
      marker = x;
    }
  }
  ASSERT_GE(marker, 0) << "no rank marker";
  // The marker is drawn at value `rank`; the kept values (blue) end there, dots 1 pixel wide around it.
  EXPECT_LE(std::abs(lastKept - marker), 2) << "rank " << rank;
  EXPECT_GT(firstDropped, marker - 2) << "rank " << rank;
  EXPECT_TRUE(darkest && brightest) << "the |difference| map and its bar span the colour map";
}

} // namespace
