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
#include "SVDLowRankNiftiBytes.h"

#include "SVDLowRankGzip.h"
#include "SVDLowRankImageFileCheck.h"
#include "SVDLowRankParallelChunks.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
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


/** The whole file, or std::nullopt when it cannot be read. Read in chunks on every core (pread from the page cache
 * is a copy, memory-bound like the passes of SVDLowRankParallelChunks.h); a chunk that comes back short (the file
 * shrank meanwhile) is read again on this thread, which stops at the file's end as a plain read does. */
std::optional<ByteBuffer>
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
  ByteBuffer        bytes(static_cast<std::size_t>(status.st_size));
  std::atomic<bool> whole{ true };
  const auto        readAt = [&](std::size_t first, std::size_t count) {
    std::size_t done = 0;
    while (done < count)
    {
      const ssize_t got = ::pread(descriptor, bytes.data() + first + done, count - done,
                                  static_cast<off_t>(first + done));
      if (got <= 0)
      {
        return false;
      }
      done += static_cast<std::size_t>(got);
    }
    return true;
  };
  ForChunksOnEveryCore(bytes.size(), [&](std::size_t first, std::size_t count) {
    if (!readAt(first, count))
    {
      whole = false;
    }
  });
  if (!whole)
  {
    std::size_t done = 0;
    while (done < bytes.size())
    {
      const ssize_t got = ::pread(descriptor, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
      if (got <= 0)
      {
        break;
      }
      done += static_cast<std::size_t>(got);
    }
    bytes.resize(done);
  }
  ::close(descriptor);
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

/** Whether any of the `count` stored IEEE values (TBits: their bits, 32 or 64) at `data` is NaN or Inf: all
 * exponent bits set. No early exit, and the byte order tested once, so that the loop vectorizes. */
template <typename TBits>
bool
AnyNonFinite(const unsigned char * data, std::uint64_t count, bool swapped)
{
  constexpr TBits exponent = static_cast<TBits>(sizeof(TBits) == 4 ? 0x7f800000u : 0x7ff0000000000000u);
  unsigned        found = 0;
  if (!swapped)
  {
    for (std::uint64_t i = 0; i < count; ++i)
    {
      TBits bits;
      std::memcpy(&bits, data + i * sizeof(TBits), sizeof(TBits));
      found |= (bits & exponent) == exponent;
    }
    return found != 0;
  }
  for (std::uint64_t i = 0; i < count; ++i)
  {
    found |= (StoredValue<TBits>(data + i * sizeof(TBits), true) & exponent) == exponent;
  }
  return found != 0;
}

} // namespace

std::shared_ptr<const NiftiFileBytes>
TakeKeptForRead(const std::string & path)
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
  // Whole blocks first, with no early exit inside one (so that the loop vectorizes); the first bad value is then
  // looked for in the block that has one.
  const auto nonFiniteIn = [&](std::uint64_t first, std::uint64_t count) {
    return size == 4 ? AnyNonFinite<std::uint32_t>(data + first * 4, count, header.swapped)
                     : AnyNonFinite<std::uint64_t>(data + first * 8, count, header.swapped);
  };
  // Each core scans chunks of the file (SVDLowRankParallelChunks.h); the first bad value of all is the one named.
  constexpr std::uint64_t      block = 4096;
  std::atomic<std::uint64_t>   firstBad{ values };
  ForChunksOnEveryCore(static_cast<std::size_t>(values), [&](std::size_t chunkFirst, std::size_t chunkCount) {
    const std::uint64_t end = chunkFirst + chunkCount;
    for (std::uint64_t first = chunkFirst; first < end && first < firstBad.load(); first += block)
    {
      const std::uint64_t count = std::min<std::uint64_t>(block, end - first);
      if (!nonFiniteIn(first, count))
      {
        continue;
      }
      std::uint64_t i = first;
      while (!nonFiniteIn(i, 1))
      {
        ++i;
      }
      for (std::uint64_t seen = firstBad.load(); i < seen && !firstBad.compare_exchange_weak(seen, i);)
      {
      }
      return;
    }
  });
  const std::uint64_t bad = firstBad.load();
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

} // namespace svdlr_io
