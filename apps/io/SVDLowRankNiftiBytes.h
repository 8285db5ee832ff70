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
#ifndef SVDLowRankNiftiBytes_h
#define SVDLowRankNiftiBytes_h

// A NIfTI file as one decompressed buffer (libdeflate, SVDLowRankGzip.h), for the raw checks (CheckImageFile's
// truncation and NaN/Inf scan) and the read that follows them (SVDLowRankNiftiRead.h's NiftiBytesImageIO), which then
// share one decompression. ITK-free, so that the Python extension's file checks (python/CMakeLists.txt) take it too.

#include "SVDLowRankByteBuffer.h"
#include "SVDLowRankNiftiFormat.h"

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace svdlr_io
{

/** A single-file NIfTI file as one decompressed stream: its header, then its pixels at header.voxOffset. */
struct NiftiFileBytes
{
  NiftiHeader                header;
  ByteBuffer  stream;
};

/** What a gzip stream may hold past the voxels its NIfTI header declares before it is refused as holding more than its
 * header says (InvalidImageFile): writers pad little or nothing, and a gzip bomb (a small file of gigabytes of zeros
 * after a sound image) must not be decompressed, nor given the memory, past the image and this. */
constexpr std::uint64_t kTrailingBytesAllowed = std::uint64_t{ 1 } << 20;

/** The most bytes the stream of a file with `header` may hold: StreamBytes() and kTrailingBytesAllowed. */
inline std::uint64_t
MostNiftiStreamBytes(const NiftiHeader & header)
{
  const std::uint64_t declared = header.StreamBytes();
  return declared > UINT64_MAX - kTrailingBytesAllowed ? UINT64_MAX : declared + kTrailingBytesAllowed;
}

/** Reads what the header of `path` declares (its header and voxels), decompressing it when it is gzip, each member's
 * CRC-32 and size checked, and the decompression bounded by the header's promise and kTrailingBytesAllowed.
 * std::nullopt when it is not a single-file NIfTI file; throws the ImageFileError that says what is wrong
 * (SVDLowRankImageFileErrors.h): unreadable, an impossible header, truncated (naming how many bytes are missing),
 * corrupt (a CRC-32 or ISIZE that does not match, undecodable data), or more data than the header declares. */
std::optional<NiftiFileBytes>
LoadNiftiFile(const std::string & path);

/** Throws NonFiniteImageFile at the first NaN or Inf of a floating-point file, naming its voxel (and volume). */
void
CheckNiftiValues(const NiftiFileBytes & file, const std::string & path);

/** Keeps `file`, loaded from `path`, for the next read of `path` (TakeKeptForRead): the checks and the read then
 * decompress the file once. At most a few files are kept, the oldest dropped first. */
void
KeepForRead(const std::string & path, std::shared_ptr<const NiftiFileBytes> file);

/** What KeepForRead kept of `path`, taken (no longer kept); nullptr when nothing was, or the file changed since. */
std::shared_ptr<const NiftiFileBytes>
TakeKeptForRead(const std::string & path);

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

/** The identity of the file at `path` now; nothing when it cannot be stat()ed. */
inline std::optional<FileIdentity>
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

} // namespace svdlr_io

#endif
