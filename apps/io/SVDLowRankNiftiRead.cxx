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
#include "SVDLowRankNiftiRead.h"
#include "SVDLowRankPngStack.h"

#include "SVDLowRankImageFileCheck.h"
#include "SVDLowRankNiftiVoxels.h"
#include "SVDLowRankReadableFile.h"

#include "itkImageIOFactory.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace svdlr_io
{

bool
IsNiftiFileName(const std::string & path)
{
  return EndsWithNoCase(path, ".nii") || EndsWithNoCase(path, ".nii.gz");
}

itk::ImageIOBase::Pointer
CreateReadImageIO(const std::string & path)
{
  if (IsNiftiFileName(path))
  {
    return NiftiBytesImageIO::New().GetPointer();
  }
  return CreateCheckedReadImageIO(path);
}

void
NiftiBytesImageIO::ReadImageInformation()
{
  const std::string file = this->GetFileName();
  const auto        identity = IdentityOf(file);
  if (identity && m_InformationIdentity == identity && m_InformationFile == file)
  {
    return;
  }
  Superclass::ReadImageInformation();
  m_InformationFile = file;
  m_InformationIdentity = identity;
}

void
NiftiBytesImageIO::Read(void * buffer)
{
  std::shared_ptr<const NiftiFileBytes> file = TakeKeptForRead(this->GetFileName());
  try
  {
    if (!file)
    {
      if (auto loaded = LoadNiftiFile(this->GetFileName()))
      {
        file = std::make_shared<const NiftiFileBytes>(std::move(*loaded));
      }
    }
  }
  catch (const ImageFileError & error)
  {
    itkExceptionMacro(<< error.what());
  }
  if (!file || !ReadFrom(*file, buffer))
  {
    Superclass::Read(buffer);
  }
}

bool
NiftiBytesImageIO::ReadFrom(const NiftiFileBytes & file, void * buffer)
{
  const NiftiHeader & header = file.header;
  if (header.version != 1 || !header.singleFile || this->GetNumberOfComponents() != 1 ||
      this->GetPixelType() != itk::IOPixelEnum::SCALAR || !ItkReadsVoxOffset(header))
  {
    return false;
  }
  // The whole image only: ITK reads a part of it through niftilib's subregion reader.
  const itk::ImageIORegion & region = this->GetIORegion();
  std::uint64_t              count = 1;
  for (unsigned int i = 0; i < region.GetImageDimension(); ++i)
  {
    if (region.GetIndex(i) != 0 || (i < 7 && region.GetSize(i) != header.extents[i]))
    {
      return false;
    }
    count *= region.GetSize(i);
  }
  if (count != header.Voxels())
  {
    return false;
  }
  const NiftiRescale r = RescaleOf(header);
  bool               read = false;
  VisitNiftiScalar(header.datatype, [&](auto zero) {
    using T = decltype(zero);
    const bool                 toFloat = r.rescale && std::is_integral_v<T>;
    const itk::IOComponentEnum given = toFloat ? itk::IOComponentEnum::FLOAT : itk::ImageIOBase::MapPixelType<T>::CType;
    if (header.bitpix != static_cast<int>(8 * sizeof(T)) || this->GetComponentType() != given)
    {
      return; // a bitpix not the datatype's, or not what ITK told the reader it would give
    }
    ConvertNiftiVoxels<T>(file.stream.data() + header.voxOffset, count, header.swapped, toFloat, r, buffer);
    read = true;
  });
  return read;
}

} // namespace svdlr_io
