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
#ifndef SVDLowRankFigure_h
#define SVDLowRankFigure_h

// A PNG figure for one slice: original | reconstruction | |difference| | singular-value spectrum.
// Drawn with plain pixel loops so the tools need nothing beyond ITK.

#include "itkImage.h"
#include "itkImageFileWriter.h"
#include "itkRGBPixel.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace svdlr_tools
{

using RGBImage = itk::Image<itk::RGBPixel<unsigned char>, 2>;

/** One slice as a row-major grid of doubles (rows x cols). */
struct SliceView
{
  std::size_t         rows{ 0 };
  std::size_t         cols{ 0 };
  std::vector<double> values;
};

class FigureCanvas
{
public:
  FigureCanvas(std::size_t width, std::size_t height)
    : m_Image(RGBImage::New())
  {
    m_Image->SetRegions(RGBImage::RegionType(RGBImage::SizeType{ { width, height } }));
    m_Image->Allocate();
    m_Image->FillBuffer(Colour(255, 255, 255));
  }

  static itk::RGBPixel<unsigned char>
  Colour(unsigned char r, unsigned char g, unsigned char b)
  {
    itk::RGBPixel<unsigned char> pixel;
    pixel[0] = r;
    pixel[1] = g;
    pixel[2] = b;
    return pixel;
  }

  void
  Set(long x, long y, const itk::RGBPixel<unsigned char> & colour)
  {
    const auto size = m_Image->GetLargestPossibleRegion().GetSize();
    if (x >= 0 && y >= 0 && x < static_cast<long>(size[0]) && y < static_cast<long>(size[1]))
    {
      m_Image->SetPixel({ { x, y } }, colour);
    }
  }

  /** Draws `slice` in grey at (x0, y0), mapping [low, high] to [0, 255]. Rows go down the page. */
  void
  DrawGrey(const SliceView & slice, long x0, long y0, double low, double high)
  {
    const double scale = high > low ? 255.0 / (high - low) : 0.0;
    for (std::size_t r = 0; r < slice.rows; ++r)
    {
      for (std::size_t c = 0; c < slice.cols; ++c)
      {
        const double v = std::min(255.0, std::max(0.0, (slice.values[r * slice.cols + c] - low) * scale));
        const auto   g = static_cast<unsigned char>(v);
        Set(x0 + static_cast<long>(c), y0 + static_cast<long>(r), Colour(g, g, g));
      }
    }
  }

  void
  Line(double x0, double y0, double x1, double y1, const itk::RGBPixel<unsigned char> & colour)
  {
    const int steps = static_cast<int>(std::max(std::abs(x1 - x0), std::abs(y1 - y0))) + 1;
    for (int i = 0; i <= steps; ++i)
    {
      const double t = static_cast<double>(i) / steps;
      Set(std::lround(x0 + t * (x1 - x0)), std::lround(y0 + t * (y1 - y0)), colour);
    }
  }

  /** log10 of the singular values against their index, with the kept rank marked in red. */
  void
  DrawSpectrum(const std::vector<double> & values, std::size_t rank, long x0, long y0, long width, long height)
  {
    const auto axis = Colour(0, 0, 0);
    Line(x0, y0 + height, x0 + width, y0 + height, axis);
    Line(x0, y0, x0, y0 + height, axis);
    if (values.empty() || values.front() <= 0.0)
    {
      return;
    }
    const double top = std::log10(values.front());
    const double floor = top - 6.0; // six decades are plenty for float32 data
    auto         yOf = [&](double v) {
      const double l = v > 0.0 ? std::max(floor, std::log10(v)) : floor;
      return y0 + height * (top - l) / (top - floor);
    };
    auto xOf = [&](std::size_t i) {
      return x0 + static_cast<double>(width) * i / std::max<std::size_t>(1, values.size() - 1);
    };
    for (std::size_t i = 1; i < values.size(); ++i)
    {
      Line(xOf(i - 1), yOf(values[i - 1]), xOf(i), yOf(values[i]), Colour(30, 80, 200));
    }
    if (rank > 0 && rank <= values.size())
    {
      Line(xOf(rank - 1), y0, xOf(rank - 1), y0 + height, Colour(220, 30, 30));
    }
  }

  void
  Write(const std::string & path) const
  {
    itk::WriteImage(m_Image.GetPointer(), path);
  }

private:
  RGBImage::Pointer m_Image;
};

/** The middle slice of `image` normal to `axis` (the whole image when 2D), upright: highest row first. */
template <typename TImage>
SliceView
MiddleSlice(const TImage * image, unsigned int axis)
{
  const auto   region = image->GetLargestPossibleRegion();
  const auto   size = region.GetSize();
  unsigned int colAxis = 0, rowAxis = 1;
  if (TImage::ImageDimension == 3)
  {
    colAxis = axis == 0 ? 1 : 0;
    rowAxis = axis == 2 ? 1 : 2;
  }
  SliceView                  view{ size[rowAxis], size[colAxis], {} };
  typename TImage::IndexType index = region.GetIndex();
  if (TImage::ImageDimension == 3)
  {
    index[axis] += static_cast<itk::IndexValueType>(size[axis] / 2);
  }
  view.values.reserve(view.rows * view.cols);
  for (std::size_t r = 0; r < view.rows; ++r)
  {
    for (std::size_t c = 0; c < view.cols; ++c)
    {
      // Rows go up the page in image space; draw the highest row first so the figure is upright.
      index[rowAxis] = region.GetIndex(rowAxis) + static_cast<itk::IndexValueType>(view.rows - 1 - r);
      index[colAxis] = region.GetIndex(colAxis) + static_cast<itk::IndexValueType>(c);
      view.values.push_back(static_cast<double>(image->GetPixel(index)));
    }
  }
  return view;
}

/** original | reconstruction | |difference| (stretched to its own maximum) | spectrum. */
inline void
WriteSliceFigure(const std::string &         path,
                 const SliceView &           original,
                 const SliceView &           reconstruction,
                 const std::vector<double> & singularValues,
                 std::size_t                 rank)
{
  const long   margin = 8;
  const long   w = static_cast<long>(original.cols), h = static_cast<long>(original.rows);
  const long   plotWidth = std::max(200L, w);
  FigureCanvas canvas(4 * w + plotWidth + 6 * margin, h + 2 * margin);

  const auto [low, high] = std::minmax_element(original.values.begin(), original.values.end());
  SliceView difference = original;
  double    largest = 0.0;
  for (std::size_t i = 0; i < difference.values.size(); ++i)
  {
    difference.values[i] = std::abs(original.values[i] - reconstruction.values[i]);
    largest = std::max(largest, difference.values[i]);
  }
  canvas.DrawGrey(original, margin, margin, *low, *high);
  canvas.DrawGrey(reconstruction, 2 * margin + w, margin, *low, *high);
  canvas.DrawGrey(difference, 3 * margin + 2 * w, margin, 0.0, largest);
  canvas.DrawSpectrum(singularValues, rank, 5 * margin + 3 * w, margin, plotWidth + w - margin, h);
  canvas.Write(path);
}

} // namespace svdlr_tools

#endif
