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
#include "SVDLowRankGzipFile.h"
#include "SVDLowRankImageFileCheck.h"
#include "SVDLowRankNiftiHeaderRead.h"
#include "SVDLowRankNiftiVoxels.h"
#include "SVDLowRankReadableFile.h"

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

/** The first `count` bytes of the open file `descriptor`, fewer when it is shorter. Read in chunks on every core (pread
 * from the page cache is a copy, memory-bound like the passes of ForChunksOnEveryCore); a chunk that comes back
 * short (the file shrank meanwhile) is read again on this thread, which stops at the file's end as a plain read does.
 */
ByteBuffer
ReadFileStart(int descriptor, std::size_t count)
{
  ByteBuffer        bytes(count);
  std::atomic<bool> whole{ true };
  ForChunksOnEveryCore(bytes.size(), [&](std::size_t first, std::size_t size) {
    if (ReadAt(descriptor, bytes.data() + first, size, first) != size)
    {
      whole = false;
    }
  });
  if (!whole)
  {
    bytes.resize(ReadAt(descriptor, bytes.data(), bytes.size(), 0));
  }
  return bytes;
}

/** The decompressed stream of the gzip file `raw` (`path`), at most what `header` declares and kTrailingBytesAllowed:
 * throws the ImageFileError that says why not. */
ByteBuffer
DecompressNifti(const std::string & path, ByteBuffer raw, const NiftiHeader & header)
{
  const std::uint64_t needed = header.StreamBytes();
  GunzipSettings      settings;
  settings.mostBytes = MostNiftiStreamBytes(header);
  Decompressed decompressed = DecompressGzip(raw.data(), raw.size(), needed, settings);
  raw = ByteBuffer(); // the compressed bytes are not needed past here
  GunzipCheck outcome;
  outcome.status = decompressed.status;
  outcome.bytes = decompressed.complete ? decompressed.bytes.size() : decompressed.bytesBeforeFailure;
  outcome.problem = decompressed.problem;
  CheckGzipOutcome(path, outcome, needed, settings.mostBytes);
  return std::move(decompressed.bytes);
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

std::mutex                  g_KeptMutex; // guards g_KeptFiles
std::map<std::string, Kept> g_KeptFiles;

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
  std::lock_guard<std::mutex> lock(g_KeptMutex);
  auto                        it = g_KeptFiles.find(path);
  if (it == g_KeptFiles.end())
  {
    return nullptr;
  }
  auto file = identity && it->second.identity == *identity ? it->second.file : nullptr;
  g_KeptFiles.erase(it);
  return file;
}

std::optional<NiftiFileBytes>
LoadNiftiFile(const std::string & path)
{
  CheckReadableFile(path);
  const OwnedDescriptor file{ OpenRegularFile(path) };
  struct stat           status
  {};
  if (file.fd < 0 || ::fstat(file.fd, &status) != 0 || status.st_size == 0)
  {
    return std::nullopt;
  }
  const auto     size = static_cast<std::uint64_t>(status.st_size);
  NiftiFileBytes loaded;
  ByteBuffer head = ReadFileStart(file.fd, static_cast<std::size_t>(std::min<std::uint64_t>(size, kNiftiHeaderBytes)));
  if (StartsGzipMember(head.data(), head.size()))
  {
    // The file read once: its header inflated from these bytes, then the whole stream decompressed from them. A gzip
    // stream may give a little more than the header declares (kTrailingBytesAllowed), not a bomb's gigabytes.
    ByteBuffer                       raw = ReadFileStart(file.fd, static_cast<std::size_t>(size));
    const std::optional<NiftiHeader> header = ParseGzipNiftiHeader(raw.data(), raw.size(), path);
    if (!header || !header->singleFile)
    {
      return std::nullopt;
    }
    loaded.header = *header;
    loaded.stream = DecompressNifti(path, std::move(raw), *header);
    return loaded;
  }
  const std::optional<NiftiHeader> header = ParseNiftiHeader(head.data(), head.size(), path);
  if (!header || !header->singleFile)
  {
    return std::nullopt;
  }
  loaded.header = *header;
  // Only what the header declares is read: the bytes of a plain file after its voxels are never asked for.
  const std::uint64_t needed = header->StreamBytes();
  if (size < needed)
  {
    ThrowMissingData(path, needed, size, "pixel data");
  }
  loaded.stream = ReadFileStart(file.fd, static_cast<std::size_t>(needed));
  if (loaded.stream.size() < needed)
  {
    ThrowMissingData(path, needed, loaded.stream.size(),
                     "pixel data"); // it shrank since fstat
  }
  return loaded;
}

namespace
{

/** "[x, y, z]" of voxel `voxel`, and ", volume t" in a series. */
std::string
VoxelWords(const NiftiHeader & header, std::uint64_t voxel)
{
  const auto &       dims = header.extents;
  std::ostringstream where;
  where << "[" << voxel % dims[0] << ", " << voxel / dims[0] % dims[1] << ", " << voxel / (dims[0] * dims[1]) % dims[2]
        << "]";
  if (dims[3] > 1)
  {
    where << ", volume " << voxel / (dims[0] * dims[1] * dims[2]);
  }
  return where.str();
}

/** The first of the `count` stored values of type T at `data` that `r` scales beyond float32, or `count`. The lowest
 * and highest are found first, on every core (a linear scale is largest at one of them); only a file that overflows is
 * scanned again for the voxel to name. */
template<typename T>
std::uint64_t
FirstBeyondFloat32(const unsigned char * data, std::uint64_t count, bool swapped, const NiftiRescale & r)
{
  constexpr double most = std::numeric_limits<float>::max();
  const auto       scaled = [&](std::uint64_t i) {
    const double value = static_cast<double>(CleanedNiftiValue(NiftiValueAt<T>(data, i, swapped)));
    return r.rescale ? value * r.slope + r.intercept : value;
  };
  std::mutex mutex;
  double     lowest = 0.0, highest = 0.0;
  ForChunksOnEveryCore(static_cast<std::size_t>(count), [&](std::size_t first, std::size_t n) {
    T low = std::numeric_limits<T>::max(), high = std::numeric_limits<T>::lowest();
    for (std::size_t i = first; i < first + n; ++i)
    {
      const T value = CleanedNiftiValue(NiftiValueAt<T>(data, i, swapped));
      low = std::min(low, value);
      high = std::max(high, value);
    }
    const std::lock_guard<std::mutex> lock(mutex);
    lowest = std::min(lowest, static_cast<double>(low));
    highest = std::max(highest, static_cast<double>(high));
  });
  const auto beyond = [&](double value) {
    const double v = r.rescale ? value * r.slope + r.intercept : value;
    return !(std::abs(v) <= most);
  };
  if (!beyond(lowest) && !beyond(highest))
  {
    return count;
  }
  std::uint64_t i = 0;
  while (i < count && std::abs(scaled(i)) <= most)
  {
    ++i;
  }
  return i;
}

/** Throws OverflowingImageFile when a finite value of `file` becomes Inf in float32, the type the tools compute in and
 * Python's reader gives: a float64 beyond FLT_MAX, or any type scaled past it by scl_slope and scl_inter. */
void
CheckFloat32Range(const NiftiFileBytes & file, const std::string & path)
{
  const NiftiHeader &   header = file.header;
  const NiftiRescale    r = RescaleOf(header);
  const unsigned char * data = file.stream.data() + header.voxOffset;
  const std::uint64_t   n = header.Voxels();
  const bool            s = header.swapped;
  if (header.datatype != 64 && !r.rescale)
  {
    return; // only a float64, or a type scaled by scl_slope and scl_inter, can pass float32's range
  }
  std::uint64_t bad = n; // stays for complex and colour voxels: read by ITK, not scaled by the tools' reader
  VisitNiftiScalar(header.datatype, [&](auto zero) { bad = FirstBeyondFloat32<decltype(zero)>(data, n, s, r); });
  if (bad == n)
  {
    return;
  }
  std::ostringstream message;
  message << "'" << path
          << "' holds values that overflow float32, the type the tools compute "
             "in: voxel "
          << VoxelWords(header, bad);
  if (r.rescale)
  {
    message << " is scaled by scl_slope " << r.slope << " and scl_inter " << r.intercept;
  }
  message << " beyond " << std::numeric_limits<float>::max();
  throw OverflowingImageFile(message.str());
}

} // namespace

void
CheckNiftiValues(const NiftiFileBytes & file, const std::string & path)
{
  const NiftiHeader & header = file.header;
  const unsigned      size = header.FloatBytes();
  if (size == 0)
  {
    CheckFloat32Range(file, path); // integers, scaled
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
  // Each core scans chunks of the file (ForChunksOnEveryCore); the first bad value of all is the one named.
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
    CheckFloat32Range(file, path);
    return;
  }
  throw NonFiniteImageFile("'" + path + "' holds NaN or Inf at voxel " +
                           VoxelWords(header, bad / (header.datatype == 32 || header.datatype == 1792 ? 2 : 1)));
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
  std::lock_guard<std::mutex> lock(g_KeptMutex);
  g_KeptFiles[path] = Kept{ *identity, std::move(file), ++counter };
  while (g_KeptFiles.size() > MostKept)
  {
    g_KeptFiles.erase(std::min_element(g_KeptFiles.begin(), g_KeptFiles.end(), [](const auto & a, const auto & b) {
      return a.second.order < b.second.order;
    }));
  }
}

} // namespace svdlr_io
