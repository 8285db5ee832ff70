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

// The PNG figure of one slice that SVDLowRankReconstructImage writes beside its output: a title line (file, slice,
// rank, backend), then four labelled panels: the original, the reconstruction (both on the original's grey
// scale), |difference| in a colour map with its colour bar and scale, and the singular values on a log axis with
// tick labels and the kept rank marked. Drawn with plain pixel loops and a small bitmap font, so the tools need no
// plotting library.

#include "SVDLowRankPngStack.h"

#include "itkImage.h"
#include "itkRGBPixel.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace svdlr_tools
{

// A 5 x 7 pixel bitmap font for the figure's labels, drawn for this project: digits, both cases of the Latin
// letters and the punctuation file names and numbers need. Each glyph is seven rows of five columns, '#' inked.
struct FigureGlyph
{
  char         character;
  const char * rows[7];
};

// clang-format off
inline constexpr FigureGlyph FigureGlyphs[] = {
  { ' ', { ".....", ".....", ".....", ".....", ".....", ".....", "....." } },
  { '0', { ".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###." } },
  { '1', { "..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###." } },
  { '2', { ".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####" } },
  { '3', { "####.", "....#", "....#", ".###.", "....#", "....#", "####." } },
  { '4', { "...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#." } },
  { '5', { "#####", "#....", "####.", "....#", "....#", "#...#", ".###." } },
  { '6', { "..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###." } },
  { '7', { "#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..." } },
  { '8', { ".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###." } },
  { '9', { ".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.." } },
  { 'A', { ".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#" } },
  { 'B', { "####.", "#...#", "#...#", "####.", "#...#", "#...#", "####." } },
  { 'C', { ".###.", "#...#", "#....", "#....", "#....", "#...#", ".###." } },
  { 'D', { "###..", "#..#.", "#...#", "#...#", "#...#", "#..#.", "###.." } },
  { 'E', { "#####", "#....", "#....", "####.", "#....", "#....", "#####" } },
  { 'F', { "#####", "#....", "#....", "####.", "#....", "#....", "#...." } },
  { 'G', { ".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".####" } },
  { 'H', { "#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#" } },
  { 'I', { ".###.", "..#..", "..#..", "..#..", "..#..", "..#..", ".###." } },
  { 'J', { "..###", "...#.", "...#.", "...#.", "...#.", "#..#.", ".##.." } },
  { 'K', { "#...#", "#..#.", "#.#..", "##...", "#.#..", "#..#.", "#...#" } },
  { 'L', { "#....", "#....", "#....", "#....", "#....", "#....", "#####" } },
  { 'M', { "#...#", "##.##", "#.#.#", "#.#.#", "#...#", "#...#", "#...#" } },
  { 'N', { "#...#", "#...#", "##..#", "#.#.#", "#..##", "#...#", "#...#" } },
  { 'O', { ".###.", "#...#", "#...#", "#...#", "#...#", "#...#", ".###." } },
  { 'P', { "####.", "#...#", "#...#", "####.", "#....", "#....", "#...." } },
  { 'Q', { ".###.", "#...#", "#...#", "#...#", "#.#.#", "#..#.", ".##.#" } },
  { 'R', { "####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#" } },
  { 'S', { ".####", "#....", "#....", ".###.", "....#", "....#", "####." } },
  { 'T', { "#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.." } },
  { 'U', { "#...#", "#...#", "#...#", "#...#", "#...#", "#...#", ".###." } },
  { 'V', { "#...#", "#...#", "#...#", "#...#", "#...#", ".#.#.", "..#.." } },
  { 'W', { "#...#", "#...#", "#...#", "#.#.#", "#.#.#", "#.#.#", ".#.#." } },
  { 'X', { "#...#", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", "#...#" } },
  { 'Y', { "#...#", "#...#", ".#.#.", "..#..", "..#..", "..#..", "..#.." } },
  { 'Z', { "#####", "....#", "...#.", "..#..", ".#...", "#....", "#####" } },
  { 'a', { ".....", ".....", ".###.", "....#", ".####", "#...#", ".####" } },
  { 'b', { "#....", "#....", "#.##.", "##..#", "#...#", "#...#", "####." } },
  { 'c', { ".....", ".....", ".###.", "#....", "#....", "#...#", ".###." } },
  { 'd', { "....#", "....#", ".##.#", "#..##", "#...#", "#...#", ".####" } },
  { 'e', { ".....", ".....", ".###.", "#...#", "#####", "#....", ".###." } },
  { 'f', { "..##.", ".#..#", ".#...", "###..", ".#...", ".#...", ".#..." } },
  { 'g', { ".....", ".....", ".####", "#...#", ".####", "....#", ".###." } },
  { 'h', { "#....", "#....", "#.##.", "##..#", "#...#", "#...#", "#...#" } },
  { 'i', { "..#..", ".....", ".##..", "..#..", "..#..", "..#..", ".###." } },
  { 'j', { "...#.", ".....", "..##.", "...#.", "...#.", "#..#.", ".##.." } },
  { 'k', { "#....", "#....", "#..#.", "#.#..", "##...", "#.#..", "#..#." } },
  { 'l', { ".##..", "..#..", "..#..", "..#..", "..#..", "..#..", ".###." } },
  { 'm', { ".....", ".....", "##.#.", "#.#.#", "#.#.#", "#...#", "#...#" } },
  { 'n', { ".....", ".....", "#.##.", "##..#", "#...#", "#...#", "#...#" } },
  { 'o', { ".....", ".....", ".###.", "#...#", "#...#", "#...#", ".###." } },
  { 'p', { ".....", ".....", "####.", "#...#", "####.", "#....", "#...." } },
  { 'q', { ".....", ".....", ".####", "#...#", ".####", "....#", "....#" } },
  { 'r', { ".....", ".....", "#.##.", "##..#", "#....", "#....", "#...." } },
  { 's', { ".....", ".....", ".####", "#....", ".###.", "....#", "####." } },
  { 't', { ".#...", ".#...", "###..", ".#...", ".#...", ".#..#", "..##." } },
  { 'u', { ".....", ".....", "#...#", "#...#", "#...#", "#..##", ".##.#" } },
  { 'v', { ".....", ".....", "#...#", "#...#", "#...#", ".#.#.", "..#.." } },
  { 'w', { ".....", ".....", "#...#", "#...#", "#.#.#", "#.#.#", ".#.#." } },
  { 'x', { ".....", ".....", "#...#", ".#.#.", "..#..", ".#.#.", "#...#" } },
  { 'y', { ".....", ".....", "#...#", "#...#", ".####", "....#", ".###." } },
  { 'z', { ".....", ".....", "#####", "...#.", "..#..", ".#...", "#####" } },
  { '.', { ".....", ".....", ".....", ".....", ".....", ".##..", ".##.." } },
  { ',', { ".....", ".....", ".....", ".....", ".##..", "..#..", ".#..." } },
  { ':', { ".....", ".##..", ".##..", ".....", ".##..", ".##..", "....." } },
  { ';', { ".....", ".##..", ".##..", ".....", ".##..", "..#..", ".#..." } },
  { '-', { ".....", ".....", ".....", "#####", ".....", ".....", "....." } },
  { '+', { ".....", "..#..", "..#..", "#####", "..#..", "..#..", "....." } },
  { '=', { ".....", ".....", "#####", ".....", "#####", ".....", "....." } },
  { '_', { ".....", ".....", ".....", ".....", ".....", ".....", "#####" } },
  { '|', { "..#..", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.." } },
  { '/', { "....#", "....#", "...#.", "..#..", ".#...", "#....", "#...." } },
  { '(', { "...#.", "..#..", ".#...", ".#...", ".#...", "..#..", "...#." } },
  { ')', { ".#...", "..#..", "...#.", "...#.", "...#.", "..#..", ".#..." } },
  { '[', { ".###.", ".#...", ".#...", ".#...", ".#...", ".#...", ".###." } },
  { ']', { ".###.", "...#.", "...#.", "...#.", "...#.", "...#.", ".###." } },
  { '%', { "##...", "##..#", "...#.", "..#..", ".#...", "#..##", "...##" } },
  { '#', { ".#.#.", ".#.#.", "#####", ".#.#.", "#####", ".#.#.", ".#.#." } },
  { '*', { ".....", "#.#.#", ".###.", "#####", ".###.", "#.#.#", "....." } },
  { '\'', { "..#..", "..#..", ".#...", ".....", ".....", ".....", "....." } },
  { '"', { ".#.#.", ".#.#.", ".....", ".....", ".....", ".....", "....." } },
  { '~', { ".....", ".....", ".#...", "#.#.#", "...#.", ".....", "....." } },
  { '?', { ".###.", "#...#", "....#", "...#.", "..#..", ".....", "..#.." } },
};
// clang-format on

constexpr int FigureGlyphWidth = 5;
constexpr int FigureGlyphHeight = 7;
constexpr int FigureGlyphAdvance = 6; // one blank column between characters

/** The glyph of `c`; '?' for characters the font does not have. */
inline const FigureGlyph &
FigureGlyphOf(char c)
{
  const FigureGlyph * unknown = nullptr;
  for (const FigureGlyph & glyph : FigureGlyphs)
  {
    if (glyph.character == c)
    {
      return glyph;
    }
    if (glyph.character == '?')
    {
      unknown = &glyph;
    }
  }
  return *unknown;
}

using RGBPixel = itk::RGBPixel<unsigned char>;
using RGBImage = itk::Image<RGBPixel, 2>; // the figure as ITK reads it back

/** One slice as a row-major grid of doubles (rows x cols), highest image row first. */
struct SliceView
{
  std::size_t         rows{ 0 };
  std::size_t         cols{ 0 };
  std::vector<double> values;
};

inline RGBPixel
Colour(unsigned char r, unsigned char g, unsigned char b)
{
  RGBPixel pixel;
  pixel[0] = r;
  pixel[1] = g;
  pixel[2] = b;
  return pixel;
}

/** A perceptually ordered dark-to-bright map for t in [0, 1], interpolated between five anchors (dark purple to
 * pale yellow, as matplotlib's "inferno"), so that a larger difference always reads brighter. */
inline RGBPixel
DifferenceColour(double t)
{
  static constexpr std::array<std::array<double, 3>, 5> anchors{ { { { 0, 0, 4 } },
                                                                   { { 87, 16, 110 } },
                                                                   { { 188, 55, 84 } },
                                                                   { { 249, 142, 9 } },
                                                                   { { 252, 255, 164 } } } };
  t = std::min(1.0, std::max(0.0, t)) * (anchors.size() - 1);
  const std::size_t i = std::min<std::size_t>(static_cast<std::size_t>(t), anchors.size() - 2);
  const double      f = t - static_cast<double>(i);
  const auto        mix = [&](int c) {
    return static_cast<unsigned char>(std::lround(anchors[i][c] + f * (anchors[i + 1][c] - anchors[i][c])));
  };
  return Colour(mix(0), mix(1), mix(2));
}

/** `value` in at most `digits` significant digits, without trailing zeros: "0", "12.5", "3.2e+04". */
inline std::string
FormatTick(double value, int digits = 3)
{
  if (value == 0.0)
  {
    return "0";
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.*g", digits, value);
  return text;
}

class FigureCanvas
{
public:
  FigureCanvas(long width, long height)
    : m_Pixels(static_cast<std::size_t>(width * height), Colour(255, 255, 255))
    , m_Width(width)
    , m_Height(height)
  {}

  void
  Set(long x, long y, const RGBPixel & colour)
  {
    if (x >= 0 && y >= 0 && x < m_Width && y < m_Height)
    {
      m_Pixels[y * m_Width + x] = colour;
    }
  }

  void
  FillRectangle(long x0, long y0, long width, long height, const RGBPixel & colour)
  {
    for (long y = y0; y < y0 + height; ++y)
      for (long x = x0; x < x0 + width; ++x)
        Set(x, y, colour);
  }

  void
  Line(double x0, double y0, double x1, double y1, const RGBPixel & colour, int dash = 0)
  {
    const int steps = static_cast<int>(std::max(std::abs(x1 - x0), std::abs(y1 - y0))) + 1;
    for (int i = 0; i <= steps; ++i)
    {
      if (dash > 0 && (i / dash) % 2 == 1)
      {
        continue;
      }
      const double t = static_cast<double>(i) / steps;
      Set(std::lround(x0 + t * (x1 - x0)), std::lround(y0 + t * (y1 - y0)), colour);
    }
  }

  /** Text with its top-left corner at (x, y), each font pixel drawn as scale x scale pixels. */
  void
  Text(long x, long y, const std::string & text, int scale, const RGBPixel & colour)
  {
    for (const char c : text)
    {
      const FigureGlyph & glyph = FigureGlyphOf(c);
      for (int row = 0; row < FigureGlyphHeight; ++row)
        for (int col = 0; col < FigureGlyphWidth; ++col)
          if (glyph.rows[row][col] == '#')
            FillRectangle(x + col * scale, y + row * scale, scale, scale, colour);
      x += FigureGlyphAdvance * scale;
    }
  }

  static long
  TextWidth(const std::string & text, int scale)
  {
    return text.empty() ? 0 : (static_cast<long>(text.size()) * FigureGlyphAdvance - 1) * scale;
  }

  /** `slice` at (x0, y0), each pixel as zoom x zoom, mapping [low, high] to black..white or through `map`. */
  template <typename TColourOf>
  void
  DrawSlice(const SliceView & slice, long x0, long y0, int zoom, double low, double high, TColourOf colourOf)
  {
    const double scale = high > low ? 1.0 / (high - low) : 0.0;
    for (std::size_t r = 0; r < slice.rows; ++r)
      for (std::size_t c = 0; c < slice.cols; ++c)
        FillRectangle(x0 + static_cast<long>(c) * zoom, y0 + static_cast<long>(r) * zoom, zoom, zoom,
                      colourOf((slice.values[r * slice.cols + c] - low) * scale));
  }

  void
  Write(const std::string & path) const
  {
    static_assert(sizeof(RGBPixel) == 3, "RGB pixels are three bytes, as PNG stores them");
    svdlr_io::PngPixels pixels;
    pixels.data = reinterpret_cast<const unsigned char *>(m_Pixels.data());
    pixels.width = static_cast<unsigned>(m_Width);
    pixels.height = static_cast<unsigned>(m_Height);
    pixels.channels = 3;
    svdlr_io::WritePngFile(path, pixels); // a write error is an exception, not the crash ITK 5.2's writer has
  }

private:
  std::vector<RGBPixel> m_Pixels; // rows of m_Width, top first
  long                  m_Width;
  long                  m_Height;
};

inline RGBPixel
GreyColour(double t)
{
  const auto g = static_cast<unsigned char>(std::lround(255.0 * std::min(1.0, std::max(0.0, t))));
  return Colour(g, g, g);
}

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

/** The log-scale spectrum in the box (x0, y0, width, height) of its axes: tick labels left of and below it. */
inline void
DrawSpectrum(FigureCanvas &              canvas,
             const std::vector<double> & values,
             std::size_t                 rank,
             long                        x0,
             long                        y0,
             long                        width,
             long                        height,
             int                         textScale)
{
  const RGBPixel ink = Colour(40, 40, 40), grid = Colour(225, 225, 225), kept = Colour(30, 90, 200),
                 dropped = Colour(150, 150, 150), marker = Colour(210, 30, 30);
  const long glyphHeight = FigureGlyphHeight * textScale;

  double largest = 0.0, smallest = 0.0;
  for (const double v : values)
  {
    if (v > 0.0 && std::isfinite(v))
    {
      largest = std::max(largest, v);
      smallest = smallest > 0.0 ? std::min(smallest, v) : v;
    }
  }
  // Whole decades, at most eight below the largest value (float data hold about seven).
  const int top = largest > 0.0 ? static_cast<int>(std::ceil(std::log10(largest) - 1e-9)) : 1;
  const int bottom = largest > 0.0 ? std::max(top - 8, static_cast<int>(std::floor(std::log10(smallest)))) : 0;
  const int decades = std::max(1, top - bottom);
  const auto yOf = [&](double v) {
    const double l = v > 0.0 ? std::max(static_cast<double>(bottom), std::log10(v)) : bottom;
    return y0 + height * (top - l) / decades;
  };
  const std::size_t n = std::max<std::size_t>(values.size(), 2);
  const auto        xOf = [&](double index) { return x0 + width * (index - 1.0) / static_cast<double>(n - 1); };

  // Y: a grid line and a label "1e3" per decade (every other one when there are many).
  const int decadeStep = decades > 6 ? 2 : 1;
  for (int d = bottom; d <= top; d += decadeStep)
  {
    const double y = yOf(std::pow(10.0, d));
    canvas.Line(x0, y, x0 + width, y, grid);
    canvas.Line(x0 - 4, y, x0, y, ink);
    const std::string label = "1e" + std::to_string(d);
    canvas.Text(x0 - 8 - FigureCanvas::TextWidth(label, textScale), std::lround(y) - glyphHeight / 2, label,
                textScale, ink);
  }
  // X: singular value index 1..n, labelled at 1 and at multiples of a round step (1, 2 or 5 x 10^m) that gives
  // at most six more labels.
  double step = 1.0;
  while ((n - 1) / step > 6.0)
  {
    const double magnitude = std::pow(10.0, std::floor(std::log10(step)));
    step = step / magnitude < 2.0 ? 2.0 * magnitude : step / magnitude < 5.0 ? 5.0 * magnitude : 10.0 * magnitude;
  }
  for (double i = 1.0; i <= static_cast<double>(n) + 1e-9; i = (i == 1.0 && step > 1.0) ? step : i + step)
  {
    const double x = xOf(i);
    canvas.Line(x, y0 + height, x, y0 + height + 4, ink);
    const std::string label = FormatTick(i, 6);
    canvas.Text(std::lround(x) - FigureCanvas::TextWidth(label, textScale) / 2, y0 + height + 8, label, textScale,
                ink);
  }
  const std::string xLabel = "index";
  canvas.Text(x0 + width / 2 - FigureCanvas::TextWidth(xLabel, textScale) / 2, y0 + height + 12 + glyphHeight, xLabel,
              textScale, ink);

  // The spectrum: kept values in blue, the rest in grey, as lines with a dot per value when they are few.
  for (std::size_t i = 0; i < values.size(); ++i)
  {
    const RGBPixel colour = i < rank ? kept : dropped;
    if (i > 0)
      canvas.Line(xOf(i), yOf(values[i - 1]), xOf(i + 1.0), yOf(values[i]), colour);
    if (values.size() <= 80)
      canvas.FillRectangle(std::lround(xOf(i + 1.0)) - 1, std::lround(yOf(values[i])) - 1, 3, 3, colour);
  }
  // The axes last, so that lines at the floor do not hide them.
  canvas.Line(x0, y0 + height, x0 + width, y0 + height, ink);
  canvas.Line(x0, y0, x0, y0 + height, ink);

  if (rank > 0 && rank <= values.size())
  {
    const double x = xOf(static_cast<double>(rank));
    canvas.Line(x, y0, x, y0 + height, marker, 4);
    const std::string label = "k = " + std::to_string(rank);
    const long        labelWidth = FigureCanvas::TextWidth(label, textScale);
    // Right of the line, or left of it when the rank is near the end of the axis.
    const long labelX =
      std::lround(x) + 6 + labelWidth <= x0 + width ? std::lround(x) + 6 : std::lround(x) - 6 - labelWidth;
    canvas.FillRectangle(labelX - 2, y0 + 4, labelWidth + 4, glyphHeight + 4, Colour(255, 255, 255));
    canvas.Text(labelX, y0 + 6, label, textScale, marker);
  }
}

/** The figure: `title` on top, then original | reconstruction | |difference| with its colour bar | spectrum. */
inline void
WriteSliceFigure(const std::string &         path,
                 const std::string &         title,
                 const SliceView &           original,
                 const SliceView &           reconstruction,
                 const std::vector<double> & singularValues,
                 std::size_t                 rank)
{
  const RGBPixel ink = Colour(30, 30, 30);
  const int      text = 2;                               // font pixels per glyph pixel
  const long     glyph = FigureGlyphHeight * text;       // text height
  const long     margin = 20, gap = 24;
  const long     largestSide = static_cast<long>(std::max(original.rows, original.cols));
  const int      zoom = static_cast<int>(std::max(1L, 256 / std::max(1L, largestSide))); // small slices, larger
  const long     w = static_cast<long>(original.cols) * zoom, h = static_cast<long>(original.rows) * zoom;

  const auto [lowIt, highIt] = std::minmax_element(original.values.begin(), original.values.end());
  const double low = original.values.empty() ? 0.0 : *lowIt, high = original.values.empty() ? 1.0 : *highIt;
  SliceView    difference = original;
  double       largest = 0.0;
  for (std::size_t i = 0; i < difference.values.size(); ++i)
  {
    difference.values[i] = std::abs(original.values[i] - reconstruction.values[i]);
    largest = std::max(largest, difference.values[i]);
  }
  const std::string barLabels[3] = { FormatTick(largest), FormatTick(largest / 2), "0" };
  long              barLabelWidth = 0;
  for (const auto & label : barLabels)
    barLabelWidth = std::max(barLabelWidth, FigureCanvas::TextWidth(label, text));

  const long barWidth = 14;
  const long plotLeftLabels = FigureCanvas::TextWidth("1e-10", text) + 12;
  const long plotWidth = std::max(260L, w + w / 3);
  const long plotHeight = std::max(h, 200L);
  const long panelTop = margin + glyph + gap + glyph + 10;
  const long xOriginal = margin, xReconstruction = xOriginal + w + gap, xDifference = xReconstruction + w + gap;
  const long xBar = xDifference + w + 10;
  const long xPlot = xBar + barWidth + 8 + barLabelWidth + gap + plotLeftLabels;
  const long width = std::max(xPlot + plotWidth + margin, margin + FigureCanvas::TextWidth(title, text) + margin);
  const long height = panelTop + std::max(h, plotHeight) + 12 + 2 * glyph + margin;

  FigureCanvas canvas(width, height);
  canvas.Text(margin, margin, title, text, ink);
  const long labelTop = panelTop - glyph - 10;
  canvas.Text(xOriginal, labelTop, "original", text, ink);
  canvas.Text(xReconstruction, labelTop, "reconstruction", text, ink);
  canvas.Text(xDifference, labelTop, "|difference|", text, ink);
  canvas.Text(xPlot, labelTop, "singular values (log)", text, ink);

  canvas.DrawSlice(original, xOriginal, panelTop, zoom, low, high, GreyColour);
  canvas.DrawSlice(reconstruction, xReconstruction, panelTop, zoom, low, high, GreyColour);
  canvas.DrawSlice(difference, xDifference, panelTop, zoom, 0.0, largest, DifferenceColour);

  // The colour bar: top is the largest difference, bottom 0, in the input's units.
  for (long y = 0; y < h; ++y)
    canvas.FillRectangle(xBar, panelTop + y, barWidth, 1, DifferenceColour(1.0 - static_cast<double>(y) / (h - 1)));
  canvas.Line(xBar - 1, panelTop - 1, xBar + barWidth, panelTop - 1, ink);
  canvas.Line(xBar - 1, panelTop + h, xBar + barWidth, panelTop + h, ink);
  canvas.Line(xBar - 1, panelTop - 1, xBar - 1, panelTop + h, ink);
  canvas.Line(xBar + barWidth, panelTop - 1, xBar + barWidth, panelTop + h, ink);
  const long barTicks[3] = { panelTop, panelTop + h / 2, panelTop + h - 1 };
  for (int i = 0; i < 3; ++i)
  {
    canvas.Line(xBar + barWidth, barTicks[i], xBar + barWidth + 4, barTicks[i], ink);
    const long y = std::min(std::max(barTicks[i] - glyph / 2, panelTop - glyph / 2), panelTop + h - glyph / 2);
    canvas.Text(xBar + barWidth + 8, y, barLabels[i], text, ink);
  }

  DrawSpectrum(canvas, singularValues, rank, xPlot, panelTop, plotWidth, plotHeight, text);
  canvas.Write(path);
}

} // namespace svdlr_tools

#endif
