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
#ifndef SVDLowRankUpFrontChecks_h
#define SVDLowRankUpFrontChecks_h

// What both tools check before they read any pixel (docs/reliability.md, "What is checked at start"): the output
// files can be written where they are named, replace nothing without --overwrite and no input; and the input
// files are whole and, for NIfTI, finite (what ITK 5.2's NIfTI reader would hide). And how the denoiser reads an
// input image once checked (ReadInputImage).

#include "SVDLowRankExitCodes.h"
#include "SVDLowRankNiftiRead.h"

#include "itkCommonEnums.h"
#include "itkImageIOBase.h"

#include <cmath>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

namespace svdlr_tools
{

/** The output file `path`, of a `dimension`-D image, can be written by this build: an ITK writer takes its extension
 * (apps/ITKFactoryRegistration registers MetaImage, NIfTI, NRRD and PNG: a .tif or .jpg output failed after the
 * whole run) and its format holds the image: PNG a 2D image of 8- or 16-bit unsigned pixels, where `written` is the
 * component type the run writes (float32, or the input's `input` with --output-type same; UNKNOWNCOMPONENTTYPE for
 * either where it is not known yet: then that part is not checked). Throws UsageError (exit 2), before the work,
 * suggesting --output-type same where the input's own type fits and another format where it does not. */
void
CheckOutputWriterUpFront(const std::string &  path,
                         unsigned int         dimension,
                         itk::IOComponentEnum written = itk::IOComponentEnum::UNKNOWNCOMPONENTTYPE,
                         itk::IOComponentEnum input = itk::IOComponentEnum::UNKNOWNCOMPONENTTYPE);
/** The output `what` at `path` (a file or a folder) has names the file system takes: no part of it longer than a
 * file name may be (255 bytes), the whole no longer than a path may be. Throws UsageError (exit 2), before any
 * pixel is read: a name too long would fail only once the work is done. */
void
CheckOutputNameLength(const std::string & path, const char * what);

/** One output of a run's set: where it goes, and what the messages call it ("output", "sidecar", "noise map"). */
struct SetOutput
{
  std::string  path;
  const char * what;
};

/** The outputs a run writes together, the main one first: each is none of `inputs` and no folder, has a name the
 * file system takes and a folder that exists and can be written, and without `overwrite` none exists. Where some exist and others do not (a run killed between its renames), the message names
 * those missing, which --overwrite writes again with the rest. Throws UsageError (exit 2). */
void
CheckOutputSetUpFront(const std::vector<SetOutput> & set, bool overwrite, const std::vector<std::string> & inputs);

/** The figure at `figure` is neither an input nor the output (`outputPath`, a file or a folder). UsageError. */
void
CheckFigureUpFront(const std::string &              figure,
                   const std::string &              outputPath,
                   bool                             overwrite,
                   const std::vector<std::string> & inputs);

/** The input image file `what` at `path` can be read, holds the pixel data its header promises, whole and uncorrupted,
 * and, when `finite` and it is a NIfTI file, no NaN or Inf nor values beyond float32 (CheckImageFile's errors,
 * SVDLowRankImageFileErrors.h). Throws InputError (exit 3). Returns whether every value was scanned here (a single-file
 * NIfTI file, decompressed once for this scan and the read that follows): the one rule by which both tools skip
 * CheckFinitePixelsUpFront's second scan of the image read. */
bool
CheckInputFileUpFront(const std::string & path, const char * what, bool finite);

/** The pixels of an image read through ITK (MHA, NRRD...: formats whose reader keeps NaN and Inf) are finite;
 * else InputError in the words CheckInputFileUpFront uses for NIfTI files, so every format fails alike. */
template <typename TPixel>
void
CheckFinitePixelsUpFront(const TPixel * pixels, const std::size_t (&size)[3], const std::string & path, const char * what)
{
  if constexpr (std::is_floating_point_v<TPixel>)
  {
    const std::size_t count = size[0] * size[1] * size[2];
    for (std::size_t v = 0; v < count; ++v)
    {
      if (!std::isfinite(pixels[v]))
      {
        throw InputError(std::string("the ") + what + " '" + path + "' holds NaN or Inf at voxel [" +
                         std::to_string(v % size[0]) + ", " + std::to_string(v / size[0] % size[1]) + ", " +
                         std::to_string(v / (size[0] * size[1])) + "]: NaN and Inf are not supported");
      }
    }
  }
}

/** The ImageIO for the image file `what` at `path`, its header read (NiftiBytesImageIO for a NIfTI file, so that the
 * read can reuse it: ReadInputImage's `header`). Throws InputError when no ITK reader takes the file or the header
 * does not read. */
itk::ImageIOBase::Pointer
ReadImageHeader(const std::string & path, const char * what);

/** The image in `path`, which the error calls the `what` ("series", "mask", the known-sigma map, a phase, an
 * imaginary part, a noise scan), through `header` when given (the ImageIO that ReadImageHeader returned for it):
 * through apps/io's reader (svdlr_io::ReadImageFile), so that a NIfTI file checked up front is decompressed once,
 * and with ITK's complaint turned into the tool's input error. Throws InputError (exit 3). */
template <typename TImage>
typename TImage::Pointer
ReadInputImage(const std::string & path, const char * what, itk::ImageIOBase * header = nullptr)
{
  try
  {
    return svdlr_io::ReadImageFile<TImage>(path, header);
  }
  catch (const itk::ExceptionObject & error)
  {
    throw InputError(std::string("cannot read the ") + what + " '" + path + "': " + error.GetDescription());
  }
}

/** The image file `what` at `path` has at most `dimension` dimensions (a 4D mask is refused, not cut to its first
 * volume by ITK's reader). Throws InputError. */
void
CheckImageDimensionUpFront(const std::string & path, const char * what, unsigned int dimension);

} // namespace svdlr_tools

#endif
