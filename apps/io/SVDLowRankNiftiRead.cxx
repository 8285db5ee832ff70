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

#include "itkImageIOFactory.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace svdlr_io
{
namespace
{

/** The on-disk type of a NIfTI datatype code, for the scalar types ITK 5.2 reads; UNKNOWNCOMPONENTTYPE otherwise. */
itk::IOComponentEnum
ComponentOf(int datatype)
{
  switch (datatype)
  {
    case 2:
      return itk::IOComponentEnum::UCHAR;
    case 4:
      return itk::IOComponentEnum::SHORT;
    case 8:
      return itk::IOComponentEnum::INT;
    case 16:
      return itk::IOComponentEnum::FLOAT;
    case 64:
      return itk::IOComponentEnum::DOUBLE;
    case 256:
      return itk::IOComponentEnum::CHAR;
    case 512:
      return itk::IOComponentEnum::USHORT;
    case 768:
      return itk::IOComponentEnum::UINT;
    case 1024:
      return itk::IOComponentEnum::LONGLONG;
    case 1280:
      return itk::IOComponentEnum::ULONGLONG;
    default:
      return itk::IOComponentEnum::UNKNOWNCOMPONENTTYPE;
  }
}

std::size_t
BytesOf(itk::IOComponentEnum component)
{
  switch (component)
  {
    case itk::IOComponentEnum::UCHAR:
    case itk::IOComponentEnum::CHAR:
      return 1;
    case itk::IOComponentEnum::SHORT:
    case itk::IOComponentEnum::USHORT:
      return 2;
    case itk::IOComponentEnum::INT:
    case itk::IOComponentEnum::UINT:
    case itk::IOComponentEnum::FLOAT:
      return 4;
    default:
      return 8;
  }
}

} // namespace


bool
IsNiftiFileName(const std::string & path)
{
  std::string name = path;
  for (auto & c : name)
  {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  const auto endsWith = [&name](const char * end) {
    const std::size_t n = std::strlen(end);
    return name.size() >= n && name.compare(name.size() - n, n, end) == 0;
  };
  return endsWith(".nii") || endsWith(".nii.gz");
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
  const NiftiHeader &        header = file.header;
  const itk::IOComponentEnum onDisk = ComponentOf(header.datatype);
  if (header.version != 1 || !header.singleFile || onDisk == itk::IOComponentEnum::UNKNOWNCOMPONENTTYPE ||
      this->GetNumberOfComponents() != 1 || this->GetPixelType() != itk::IOPixelEnum::SCALAR ||
      !ItkReadsVoxOffset(header) ||
      header.bitpix != 8 * static_cast<int>(BytesOf(onDisk)))
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
  const bool       integer = onDisk != itk::IOComponentEnum::FLOAT && onDisk != itk::IOComponentEnum::DOUBLE;
  const bool       toFloat = r.rescale && integer;
  if (this->GetComponentType() != (toFloat ? itk::IOComponentEnum::FLOAT : onDisk))
  {
    return false; // not what ITK told the reader it would give
  }
  const unsigned char * data = file.stream.data() + header.voxOffset;
  const bool            swapped = header.swapped;
  const std::size_t     n = static_cast<std::size_t>(count);
  switch (onDisk)
  {
    case itk::IOComponentEnum::UCHAR:
      ConvertNiftiVoxels<std::uint8_t>(data, n, swapped, toFloat, r, buffer);
      break;
    case itk::IOComponentEnum::CHAR:
      ConvertNiftiVoxels<std::int8_t>(data, n, swapped, toFloat, r, buffer);
      break;
    case itk::IOComponentEnum::SHORT:
      ConvertNiftiVoxels<std::int16_t>(data, n, swapped, toFloat, r, buffer);
      break;
    case itk::IOComponentEnum::USHORT:
      ConvertNiftiVoxels<std::uint16_t>(data, n, swapped, toFloat, r, buffer);
      break;
    case itk::IOComponentEnum::INT:
      ConvertNiftiVoxels<std::int32_t>(data, n, swapped, toFloat, r, buffer);
      break;
    case itk::IOComponentEnum::UINT:
      ConvertNiftiVoxels<std::uint32_t>(data, n, swapped, toFloat, r, buffer);
      break;
    case itk::IOComponentEnum::LONGLONG:
      ConvertNiftiVoxels<std::int64_t>(data, n, swapped, toFloat, r, buffer);
      break;
    case itk::IOComponentEnum::ULONGLONG:
      ConvertNiftiVoxels<std::uint64_t>(data, n, swapped, toFloat, r, buffer);
      break;
    case itk::IOComponentEnum::FLOAT:
      ConvertNiftiVoxels<float>(data, n, swapped, false, r, buffer);
      break;
    default:
      ConvertNiftiVoxels<double>(data, n, swapped, false, r, buffer);
  }
  return true;
}

} // namespace svdlr_io
