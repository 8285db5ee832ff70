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
#ifndef SVDLowRankNiftiRead_h
#define SVDLowRankNiftiRead_h

// A NIfTI input decompressed once: the raw checks (CheckImageFile's truncation and NaN/Inf scan) and the pixel read
// share one buffer, decompressed by libdeflate (SVDLowRankGzip.h) rather than twice by zlib, once for the checks and
// once by ITK's reader. The geometry still comes from ITK's NIfTI reader (its ReadImageInformation reads the header
// only); the pixels come from the buffer, swapped, cleaned and scaled as ITK 5.2's NiftiImageIO::Read does.

#include "SVDLowRankNiftiBytes.h"

#include "itkImageFileReader.h"
#include "itkNiftiImageIO.h"

#include <optional>
#include <string>

namespace svdlr_io
{

/** ITK's NIfTI reader with its pixel read served from the bytes KeepForRead kept (else loaded here, once): for the
 * scalar integer and floating-point types ITK 5.2 reads, read whole; anything else (vectors, complex, RGB, a part of
 * the image) goes to ITK's own Read. */
class NiftiBytesImageIO : public itk::NiftiImageIO
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(NiftiBytesImageIO);
  using Self = NiftiBytesImageIO;
  using Superclass = itk::NiftiImageIO;
  using Pointer = itk::SmartPointer<Self>;
  itkNewMacro(Self);
  itkTypeMacro(NiftiBytesImageIO, NiftiImageIO);

  void
  Read(void * buffer) override;

  /** ITK's header read, skipped when this ImageIO has read the same, unchanged file: the tools read an input's
   * header up front (its type, its volume count) and then hand this ImageIO to the image reader, which reads the
   * header again. */
  void
  ReadImageInformation() override;

protected:
  NiftiBytesImageIO() = default;
  ~NiftiBytesImageIO() override = default;

private:
  /** Whether `file` can be served here; fills the buffer when it can. */
  bool
  ReadFrom(const NiftiFileBytes & file, void * buffer);

  std::string                 m_InformationFile;
  std::optional<FileIdentity> m_InformationIdentity;
};

/** Whether `path` names a NIfTI file by its extension (.nii, .nii.gz, any case). */
bool
IsNiftiFileName(const std::string & path);

/** The ImageIO that reads `path`: NiftiBytesImageIO for a NIfTI file name, else what ITK's factory picks (nullptr
 * when none can read it). */
itk::ImageIOBase::Pointer
CreateReadImageIO(const std::string & path);

/** Calls `f(T{})` for the first of the types `T...` whose ITK component type (ImageIOBase::MapPixelType) is
 * `component`; false, calling nothing, when none is. */
template <typename... T, typename F>
bool
VisitComponentType(itk::IOComponentEnum component, F && f)
{
  return ((itk::ImageIOBase::MapPixelType<T>::CType == component && (f(T{}), true)) || ...);
}

/** ITK's image reader for `path` (not updated): through `io` when given (an ImageIO that has read the file's
 * header, from ReadImageHeader), else NiftiBytesImageIO for a NIfTI file, else what ITK's factory picks. */
template <typename TImage>
typename itk::ImageFileReader<TImage>::Pointer
ImageReaderFor(const std::string & path, itk::ImageIOBase * io = nullptr)
{
  auto reader = itk::ImageFileReader<TImage>::New();
  reader->SetFileName(path);
  if (io != nullptr)
  {
    reader->SetImageIO(io);
  }
  else if (IsNiftiFileName(path))
  {
    reader->SetImageIO(NiftiBytesImageIO::New());
  }
  return reader;
}

/** The image in `path`, read through ImageReaderFor. */
template <typename TImage>
typename TImage::Pointer
ReadImageFile(const std::string & path, itk::ImageIOBase * io = nullptr)
{
  auto reader = ImageReaderFor<TImage>(path, io);
  reader->Update();
  return reader->GetOutput();
}

} // namespace svdlr_io

#endif
