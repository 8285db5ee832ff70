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
#ifndef svdlrImageFileFuzz_h
#define svdlrImageFileFuzz_h

// What the NIfTI, MHA and NRRD fuzz targets share: one input written as one image file of the given extension, checked
// by the raw checks below ITK (CheckImageFile: unreadable, impossible header, truncation, corruption, NaN and Inf,
// values beyond float32; run on every input, since they parse the header themselves), then, when whole, read as the
// tools read it (svdlr_io::CreateReadImageIO: a NIfTI file through NiftiBytesImageIO, from the bytes the checks kept;
// its header, then the pixels when the header claims a size a sound file can have here). The contract: the checks' own
// errors (ImageFileError) naming the file, or ITK's exception; any other exception, a crash or a sanitizer report is a
// bug (in our checks, which are instrumented, or one ITK lets through).

#include "SVDLowRankImageFileCheck.h"
#include "SVDLowRankNiftiRead.h"
#include "svdlrFuzzFiles.h"

#include "itkImageIOFactory.h"

#include <vector>

namespace svdlr_fuzz
{

/** Pixel data above this are not read (a header may claim terabytes; the tools would ask for them). */
constexpr std::size_t kMaximumImageBytes = std::size_t{ 64 } << 20;

/** `bytes` written as one file with `extension` (".nii", ".nii.gz", ".mha", ".nrrd"), then checked and read as the
 * tools do. */
inline void
ReadImageFileBytes(const std::string & bytes, const char * extension)
{
  static const ScratchFolder scratch(std::string("image") + extension);
  const std::string          path = scratch.Fill({ bytes }, "image", extension).front();
  // The raw checks on every input, whatever ITK makes of its header: they parse it themselves.
  try
  {
    svdlr_io::CheckImageFile(path, svdlr_io::ImageFileScan::ValuesForRead);
  }
  catch (const svdlr_io::ImageFileError & error)
  {
    ExpectNamesThePath(error, path);
    (void)svdlr_io::TakeKeptForRead(path);
    return; // the tools stop here (exit 3) and never ask ITK for the pixels
  }
  catch (const std::exception & error)
  {
    Fail(std::string("CheckImageFile threw none of its errors: ") + error.what());
  }
  try
  {
    auto io = svdlr_io::CreateReadImageIO(path);
    if (!io || !io->CanReadFile(path.c_str()))
    {
      // The tool says "no ITK reader for this file", exit 3: ITK's ImageFileReader asks CanReadFile of the ImageIO it
      // is given, which this target once skipped and so read headers no tool reads (ITK 5.2 then wrote past its buffer).
      return;
    }
    io->SetFileName(path);
    io->ReadImageInformation();
    if (io->GetImageSizeInBytes() == 0 || io->GetImageSizeInBytes() > kMaximumImageBytes)
    {
      return;
    }
    itk::ImageIORegion region(io->GetNumberOfDimensions());
    for (unsigned int i = 0; i < io->GetNumberOfDimensions(); ++i)
    {
      region.SetIndex(i, 0);
      region.SetSize(i, io->GetDimensions(i));
    }
    io->SetIORegion(region);
    std::vector<unsigned char> pixels(io->GetImageSizeInBytes());
    io->Read(pixels.data());
  }
  catch (const itk::ExceptionObject &)
  {
    // ITK's readers name the file in their own words (or not): the tools add the name to every message.
  }
  catch (const svdlr_io::ImageFileError & error)
  {
    ExpectNamesThePath(error, path); // the read path's own checks before ITK (a PNG checked by libpng first)
  }
  catch (const std::exception & error)
  {
    Fail(std::string("not an ITK exception: ") + error.what());
  }
  (void)svdlr_io::TakeKeptForRead(path); // what a header ITK refused left kept
}

inline void
ReadImageFileInput(const std::uint8_t * data, std::size_t size, const char * extension)
{
  ReadImageFileBytes(std::string(reinterpret_cast<const char *>(data), size), extension);
}

} // namespace svdlr_fuzz

/** The libFuzzer entry points of a target that reads one image file with `extension` (".nii", ".mha", ".nrrd"). */
#define SVDLR_IMAGE_FILE_FUZZER(extension)                                                                           \
  extern "C" int LLVMFuzzerInitialize(int *, char ***)                                                               \
  {                                                                                                                  \
    svdlr_fuzz::InitializeQuietly();                                                                                 \
    return 0;                                                                                                        \
  }                                                                                                                  \
  extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t * data, std::size_t size)                                 \
  {                                                                                                                  \
    svdlr_fuzz::ReadImageFileInput(data, size, extension);                                                           \
    return 0;                                                                                                        \
  }

#endif
