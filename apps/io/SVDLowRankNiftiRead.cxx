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

#include "SVDLowRankGzip.h"
#include "SVDLowRankImageFileCheck.h"

#include "itkImageIOFactory.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>
#include <unistd.h>

namespace svdlr_io
{
namespace
{

/** The whole file, or std::nullopt when it cannot be read. */
std::optional<std::vector<unsigned char>>
ReadWholeFile(const std::string & path)
{
  const int descriptor = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat status
  {};
  if (descriptor < 0 || ::fstat(descriptor, &status) != 0)
  {
    if (descriptor >= 0)
    {
      ::close(descriptor);
    }
    return std::nullopt;
  }
  std::vector<unsigned char> bytes(static_cast<std::size_t>(status.st_size));
  std::size_t                done = 0;
  while (done < bytes.size())
  {
    const ssize_t got = ::read(descriptor, bytes.data() + done, bytes.size() - done);
    if (got <= 0)
    {
      break;
    }
    done += static_cast<std::size_t>(got);
  }
  ::close(descriptor);
  bytes.resize(done);
  return bytes;
}

/** What identifies a file's version: a file replaced or rewritten between the checks and the read is read again. */
struct FileIdentity
{
  dev_t           device{};
  ino_t           inode{};
  off_t           size{};
  struct timespec modified
  {};

  bool
  operator==(const FileIdentity & other) const
  {
    return device == other.device && inode == other.inode && size == other.size &&
           modified.tv_sec == other.modified.tv_sec && modified.tv_nsec == other.modified.tv_nsec;
  }
};

std::optional<FileIdentity>
IdentityOf(const std::string & path)
{
  struct stat status
  {};
  if (::stat(path.c_str(), &status) != 0)
  {
    return std::nullopt;
  }
  return FileIdentity{ status.st_dev, status.st_ino, status.st_size, status.st_mtim };
}

struct Kept
{
  FileIdentity                          identity;
  std::shared_ptr<const NiftiFileBytes> file;
  std::uint64_t                         order{ 0 }; // when it was kept: the oldest goes first when too many are
};

/** At most this many files are kept at once: a batch's reader threads each have one between its checks and its read,
 * and a file checked but never read (its read refused for another reason) must not hold its memory to the end. */
constexpr std::size_t MostKept = 8;

std::mutex &
KeptMutex()
{
  static std::mutex mutex;
  return mutex;
}

std::map<std::string, Kept> &
KeptFiles()
{
  static std::map<std::string, Kept> files;
  return files;
}

std::shared_ptr<const NiftiFileBytes>
TakeKept(const std::string & path)
{
  const auto                  identity = IdentityOf(path);
  std::lock_guard<std::mutex> lock(KeptMutex());
  auto                        it = KeptFiles().find(path);
  if (it == KeptFiles().end())
  {
    return nullptr;
  }
  auto file = identity && it->second.identity == *identity ? it->second.file : nullptr;
  KeptFiles().erase(it);
  return file;
}

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

/** One on-disk value, in this machine's byte order. */
template <typename T>
T
ValueAt(const unsigned char * data, std::size_t i, bool swapped)
{
  return StoredValue<T>(data + i * sizeof(T), swapped);
}

/** niftilib's nifti_read_buffer: NaN and Inf of a floating-point file read as 0. */
template <typename T>
T
Cleaned(T value)
{
  if constexpr (std::is_floating_point_v<T>)
  {
    return std::isfinite(value) ? value : T{ 0 };
  }
  return value;
}

/** NiftiImageIO::Read for `count` scalars of on-disk type TDisk: as they are (and then rescaled in their own type),
 * or, when ITK promoted an integer type to float for the rescale, cast to float first (its CastCopy), then rescaled
 * in double (its RescaleFunction). */
template <typename TDisk>
void
Convert(const unsigned char * data, std::size_t count, bool swapped, bool toFloat, bool rescale, double slope,
        double intercept, void * buffer)
{
  const auto scaled = [&](auto value) {
    using T = decltype(value);
    double tmp = static_cast<double>(value) * slope;
    tmp += intercept;
    return static_cast<T>(tmp);
  };
  if (toFloat)
  {
    auto * out = static_cast<float *>(buffer);
    for (std::size_t i = 0; i < count; ++i)
    {
      const float value = static_cast<float>(ValueAt<TDisk>(data, i, swapped));
      out[i] = rescale ? scaled(value) : value;
    }
    return;
  }
  auto * out = static_cast<TDisk *>(buffer);
  if (!swapped && !rescale && !std::is_floating_point_v<TDisk>)
  {
    std::memcpy(out, data, count * sizeof(TDisk));
    return;
  }
  for (std::size_t i = 0; i < count; ++i)
  {
    const TDisk value = Cleaned(ValueAt<TDisk>(data, i, swapped));
    out[i] = rescale ? scaled(value) : value;
  }
}

} // namespace

std::optional<NiftiFileBytes>
LoadNiftiFile(const std::string & path)
{
  auto raw = ReadWholeFile(path);
  if (!raw || raw->empty())
  {
    return std::nullopt;
  }
  NiftiFileBytes file;
  if (StartsGzipMember(raw->data(), raw->size()))
  {
    // The header first (a few KiB decompressed by zlib), for the size the whole stream should have.
    std::vector<unsigned char> head = ReadDecompressedHead(path, kNiftiHeaderBytes);
    const auto                 header = ParseNiftiHeader(head.data(), head.size());
    if (!header || !header->singleFile)
    {
      return std::nullopt;
    }
    const std::uint64_t needed = header->voxOffset + header->DataBytes();
    if (needed > std::numeric_limits<std::size_t>::max() / 2)
    {
      CheckImageFile(path); // a header promising more than any file: the structure check says how much is missing
      return std::nullopt;
    }
    Decompressed decompressed = DecompressGzip(raw->data(), raw->size(), needed);
    raw.reset(); // the compressed bytes are not needed past here
    if (!decompressed.complete)
    {
      CheckImageFile(path); // counts what a stream decoder gets, for the message
      throw IncompleteImageFile("'" + path + "' is truncated: its compressed stream ends early");
    }
    file.stream = std::move(decompressed.bytes);
    file.header = *header;
  }
  else
  {
    const auto header = ParseNiftiHeader(raw->data(), raw->size());
    if (!header || !header->singleFile)
    {
      return std::nullopt;
    }
    file.stream = std::move(*raw);
    file.header = *header;
  }
  const std::uint64_t needed = file.header.voxOffset + file.header.DataBytes();
  if (file.stream.size() < needed)
  {
    std::ostringstream message;
    message << "'" << path << "' is truncated: " << (needed - file.stream.size())
            << " bytes of pixel data are missing (the header needs " << needed << ", the file holds "
            << file.stream.size() << ")";
    CheckImageFile(path); // the structure check's own words, when it sees the same
    throw IncompleteImageFile(message.str());
  }
  return file;
}

void
CheckNiftiValues(const NiftiFileBytes & file, const std::string & path)
{
  const NiftiHeader & header = file.header;
  const unsigned      size = header.FloatBytes();
  if (size == 0)
  {
    return;
  }
  const unsigned char * data = file.stream.data() + header.voxOffset;
  const std::uint64_t   values = header.DataBytes() / size;
  std::uint64_t         bad = values;
  for (std::uint64_t i = 0; i < values && bad == values; ++i)
  {
    const bool finite = size == 4 ? std::isfinite(ValueAt<float>(data, i, header.swapped))
                                  : std::isfinite(ValueAt<double>(data, i, header.swapped));
    bad = finite ? bad : i;
  }
  if (bad == values)
  {
    return;
  }
  const std::uint64_t voxel = bad / (header.datatype == 32 || header.datatype == 1792 ? 2 : 1);
  const auto &        dims = header.extents;
  std::ostringstream  where;
  where << "[" << voxel % dims[0] << ", " << voxel / dims[0] % dims[1] << ", " << voxel / (dims[0] * dims[1]) % dims[2]
        << "]";
  if (dims[3] > 1)
  {
    where << ", volume " << voxel / (dims[0] * dims[1] * dims[2]);
  }
  throw NonFiniteImageFile("'" + path + "' holds NaN or Inf at voxel " + where.str());
}

void
KeepForRead(const std::string & path, std::shared_ptr<const NiftiFileBytes> file)
{
  const auto identity = IdentityOf(path);
  if (!identity || !file)
  {
    return;
  }
  static std::uint64_t        counter = 0;
  std::lock_guard<std::mutex> lock(KeptMutex());
  auto &                      files = KeptFiles();
  files[path] = Kept{ *identity, std::move(file), ++counter };
  while (files.size() > MostKept)
  {
    files.erase(std::min_element(files.begin(), files.end(), [](const auto & a, const auto & b) {
      return a.second.order < b.second.order;
    }));
  }
}

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
  return itk::ImageIOFactory::CreateImageIO(path.c_str(), itk::ImageIOFactory::IOFileModeEnum::ReadMode);
}

void
NiftiBytesImageIO::Read(void * buffer)
{
  std::shared_ptr<const NiftiFileBytes> file = TakeKept(this->GetFileName());
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
  catch (const IncompleteImageFile & error)
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
      !(header.storedVoxOffset >= 352.0 && header.storedVoxOffset < 2147483647.0 &&
        header.storedVoxOffset == std::floor(header.storedVoxOffset)) ||
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
  // The slope and intercept as NiftiImageIO::ReadImageInformation sets them, and its MustRescale().
  constexpr double epsilon = std::numeric_limits<double>::epsilon();
  const double     slope = std::abs(header.sclSlope) < epsilon ? 1.0 : header.sclSlope;
  const double     intercept = header.sclInter;
  const bool       rescale = std::abs(slope) > epsilon && (std::abs(slope - 1.0) > epsilon || std::abs(intercept) > epsilon);
  const bool       integer = onDisk != itk::IOComponentEnum::FLOAT && onDisk != itk::IOComponentEnum::DOUBLE;
  const bool       toFloat = rescale && integer;
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
      Convert<std::uint8_t>(data, n, swapped, toFloat, rescale, slope, intercept, buffer);
      break;
    case itk::IOComponentEnum::CHAR:
      Convert<std::int8_t>(data, n, swapped, toFloat, rescale, slope, intercept, buffer);
      break;
    case itk::IOComponentEnum::SHORT:
      Convert<std::int16_t>(data, n, swapped, toFloat, rescale, slope, intercept, buffer);
      break;
    case itk::IOComponentEnum::USHORT:
      Convert<std::uint16_t>(data, n, swapped, toFloat, rescale, slope, intercept, buffer);
      break;
    case itk::IOComponentEnum::INT:
      Convert<std::int32_t>(data, n, swapped, toFloat, rescale, slope, intercept, buffer);
      break;
    case itk::IOComponentEnum::UINT:
      Convert<std::uint32_t>(data, n, swapped, toFloat, rescale, slope, intercept, buffer);
      break;
    case itk::IOComponentEnum::LONGLONG:
      Convert<std::int64_t>(data, n, swapped, toFloat, rescale, slope, intercept, buffer);
      break;
    case itk::IOComponentEnum::ULONGLONG:
      Convert<std::uint64_t>(data, n, swapped, toFloat, rescale, slope, intercept, buffer);
      break;
    case itk::IOComponentEnum::FLOAT:
      Convert<float>(data, n, swapped, false, rescale, slope, intercept, buffer);
      break;
    default:
      Convert<double>(data, n, swapped, false, rescale, slope, intercept, buffer);
  }
  return true;
}

} // namespace svdlr_io
