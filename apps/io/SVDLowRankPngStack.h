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
#ifndef SVDLowRankPngStack_h
#define SVDLowRankPngStack_h

// A folder of 2D PNG slices as a volume: slice k is the k-th file in natural name order (slice2 before
// slice10), stacked along the third axis with unit spacing. Written back the same way.

#include "itkImage.h"
#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itkImageIOBase.h"
#include "SVDLowRankImageFileErrors.h"
#include "SVDLowRankStagedOutput.h"
#include "SVDLowRankVolume.h"

#include <algorithm>
#include <cmath>

#include <cstring>
#include <iomanip>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace svdlr_io
{

/** A slice that cannot be read or does not fit the stack. The message names the file. */
SVDLR_DECLARE_ERROR(PngStackError, std::runtime_error);

/** Pixels for WritePngFile: rows of width x channels samples of bitDepth bits (8, or 16 in host byte order). */
struct PngPixels
{
  const unsigned char * data{ nullptr };
  unsigned              width{ 0 };
  unsigned              height{ 0 };
  unsigned              channels{ 1 }; // 1 (grey) or 3 (RGB)
  unsigned              bitDepth{ 8 };
};

/** Writes a PNG file through libpng with its errors caught: a short write (a full disk) or a failed close throws
 * PngStackError naming `path`. ITK 5.2's PNGImageIO sets its error jump inside a helper that has returned when
 * libpng jumps, so a write error there crashes the process. */
void
WritePngFile(const std::string & path, const PngPixels & pixels);

/** Natural order: runs of digits compare as numbers ("slice2" < "slice10"), the rest
 * case-insensitively; ties fall back to plain comparison so the order is total. */
bool
NaturalLess(const std::string & a, const std::string & b);

/** The *.png files directly in `directory` (any case of the extension), in natural order. */
std::vector<std::string>
FindPngSlices(const std::string & directory);

/** Throws PngStackError naming `path` unless it is a PNG file that libpng decodes whole. Call it before handing a
 * PNG to ITK: ITK 5.2 lets libpng abort() the process on some corrupt files (SVDLowRankPngCheck.cxx). */
void
CheckPngFile(const std::string & path);

/** ITK's reader for the image file `path`, as its factory chooses it by content (nullptr: none), with a PNG checked
 * first by CheckPngFile whatever the file's name: a corrupt PNG named .nrrd or .mha reached libpng, which aborted
 * the denoiser and the batch (found by SVDLowRankNrrdFuzzer). Throws InvalidImageFile (SVDLowRankImageFileErrors.h)
 * naming the file where the PNG check fails. Every read of an image's header goes through here. */
itk::ImageIOBase::Pointer
CreateCheckedReadImageIO(const std::string & path);

/** Reads the header of `path` through `io` (an ImageIO created for it); nullopt when it did, else why not: "no ITK
 * reader for this file" when `io` is null, else ITK's description. Each caller words its own error around it. */
std::optional<std::string>
WhyHeaderUnreadable(itk::ImageIOBase * io, const std::string & path);

/** The pixel type of the stack: that of its first slice, which must be one grey channel of 8 or 16 bits. */
itk::IOComponentEnum
PngStackComponentType(const std::vector<std::string> & files);

/** Reads the slices in the given order into one volume. Every slice must have the size of the first. */
template <typename TPixel>
typename itk::Image<TPixel, 3>::Pointer
ReadPngStack(const std::vector<std::string> & files)
{
  using SliceType = itk::Image<TPixel, 2>;
  using VolumeType = itk::Image<TPixel, 3>;
  if (files.empty())
  {
    throw PngStackError("no PNG slices to read");
  }
  typename VolumeType::Pointer volume;
  for (std::size_t k = 0; k < files.size(); ++k)
  {
    typename SliceType::Pointer slice;
    CheckPngFile(files[k]);
    try
    {
      slice = itk::ReadImage<SliceType>(files[k]);
    }
    catch (const itk::ExceptionObject & error)
    {
      throw PngStackError(files[k] + ": cannot be read as PNG: " + error.GetDescription());
    }
    const auto size = slice->GetLargestPossibleRegion().GetSize();
    if (!volume)
    {
      volume = VolumeType::New();
      volume->SetRegions(
        typename VolumeType::RegionType(typename VolumeType::SizeType{ { size[0], size[1], files.size() } }));
      volume->Allocate();
    }
    const auto volumeSize = volume->GetLargestPossibleRegion().GetSize();
    if (size[0] != volumeSize[0] || size[1] != volumeSize[1])
    {
      std::ostringstream what;
      what << files[k] << ": is " << size[0] << "x" << size[1] << " pixels but " << files.front() << " is "
           << volumeSize[0] << "x" << volumeSize[1] << ": slices of a stack must have the same size";
      throw PngStackError(what.str());
    }
    const std::size_t pixels = size[0] * size[1];
    std::memcpy(volume->GetBufferPointer() + k * pixels, slice->GetBufferPointer(), pixels * sizeof(TPixel));
  }
  return volume;
}

/** The files WritePngStack writes into a folder output: slice0000.png, ... (what --overwrite may replace). */
inline NumberedFiles
PngStackFiles()
{
  return { "slice", ".png" };
}

/** Writes each slice along the third axis of `volume` as <directory>/<prefix>NNNN.png (zero-padded, so
 * natural and plain name order agree). TPixel must be unsigned char or unsigned short. */
template <typename TPixel>
void
WritePngStack(const itk::Image<TPixel, 3> * volume,
              const std::string &           directory,
              const std::string &           prefix = PngStackFiles().prefix)
{
  static_assert(std::is_same<TPixel, unsigned char>::value || std::is_same<TPixel, unsigned short>::value,
                "PNG holds 8- or 16-bit unsigned grey pixels");
  const auto        size = volume->GetLargestPossibleRegion().GetSize();
  const std::size_t pixels = size[0] * size[1];
  const int         digits = std::max(4, static_cast<int>(std::to_string(size[2]).size()));
  for (std::size_t k = 0; k < size[2]; ++k)
  {
    std::ostringstream name;
    name << directory << "/" << prefix << std::setw(digits) << std::setfill('0') << k << PngStackFiles().extension;
    PngPixels slice;
    slice.data = reinterpret_cast<const unsigned char *>(volume->GetBufferPointer() + k * pixels);
    slice.width = static_cast<unsigned>(size[0]);
    slice.height = static_cast<unsigned>(size[1]);
    slice.bitDepth = 8 * sizeof(TPixel);
    WritePngFile(name.str(), slice);
  }
}

/** Writes PNG slices of `image`: 8- and 16-bit unsigned pixels as they are, others rounded and clamped
 * to unsigned 16 bits. Returns the number of values clamped. */
template <typename TImage>
std::size_t
WritePngStackAsUnsigned(const TImage * image, const std::string & directory)
{
  using PixelType = typename TImage::PixelType;
  if constexpr (std::is_same<PixelType, unsigned char>::value || std::is_same<PixelType, unsigned short>::value)
  {
    WritePngStack(svdlr_io::AsVolume<PixelType>(image).GetPointer(), directory);
    return 0;
  }
  else
  {
    auto        volume = svdlr_io::AsVolume<double>(image);
    auto        slices = itk::Image<unsigned short, 3>::New();
    std::size_t clamped = 0;
    slices->CopyInformation(volume);
    slices->SetRegions(volume->GetLargestPossibleRegion());
    slices->Allocate();
    for (std::size_t i = 0, n = volume->GetLargestPossibleRegion().GetNumberOfPixels(); i < n; ++i)
    {
      const double v = std::round(volume->GetBufferPointer()[i]);
      clamped += (v < 0.0 || v > 65535.0) ? 1 : 0;
      slices->GetBufferPointer()[i] = static_cast<unsigned short>(std::min(65535.0, std::max(0.0, v)));
    }
    WritePngStack(slices.GetPointer(), directory);
    return clamped;
  }
}

} // namespace svdlr_io

#endif
