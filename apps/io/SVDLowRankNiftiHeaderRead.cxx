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
// A NIfTI file's header, read from the file or from its bytes in memory, decompressed as far as the header when gzip.
#include "SVDLowRankNiftiHeaderRead.h"

#include "SVDLowRankGzip.h"
#include "SVDLowRankGzipFile.h"
#include "SVDLowRankImageFileErrors.h"
#include "SVDLowRankReadableFile.h"

#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <unistd.h>
#include <utility>

namespace svdlr_io
{
namespace
{

/** The first `count` bytes of the stream that `nextChunk` gives ({ data, size }, size 0 at its end), inflated when it
 * is gzip; fewer when it is shorter. Inflated here, not by gzread: gzread checks a member's CRC-32 when its end is in
 * the first buffer it reads, so a small file with a damaged voxel had no header at all, and was "no NIfTI file" rather
 * than corrupt. */
template <typename TNextChunk>
std::vector<unsigned char>
InflateHead(TNextChunk nextChunk, std::size_t count)
{
  std::vector<unsigned char> head(count);
  std::size_t                made = 0;
  z_stream                   z{};
  bool                       gzip = false, started = false;
  while (made < count)
  {
    const auto [data, got] = nextChunk();
    if (got == 0)
    {
      break;
    }
    if (!started)
    {
      started = true;
      gzip = StartsGzipMember(data, got);
      if (gzip && inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
      {
        return {};
      }
    }
    if (!gzip)
    {
      const std::size_t take = std::min(count - made, got);
      std::copy(data, data + take, head.data() + made);
      made += take;
      continue;
    }
    z.next_in = const_cast<unsigned char *>(data);
    z.avail_in = static_cast<uInt>(got);
    z.next_out = head.data() + made;
    z.avail_out = static_cast<uInt>(count - made);
    const int code = inflate(&z, Z_NO_FLUSH);
    made = count - z.avail_out;
    if (code != Z_OK)
    {
      break; // the end of the first member, or an error past the head: fewer bytes, which the header's parser judges
    }
  }
  if (gzip)
  {
    inflateEnd(&z);
  }
  head.resize(made);
  return head;
}

constexpr std::size_t kHeadChunkBytes = std::size_t{ 1 } << 16;

/** A gzip stream too short to hold any NIfTI header (`head` what it gave) says why, rather than "not NIfTI": it breaks
 * (CorruptImageFile) or ends (IncompleteImageFile) inside the header. `bytes` is the whole file. */
void
ThrowWhereHeaderStreamBreaks(const unsigned char * bytes, std::size_t size, const std::string & path)
{
  const GunzipCheck check = CheckGzipStream(bytes, size);
  if (check.status == GunzipStatus::Corrupt)
  {
    throw CorruptImageFile("'" + path + "' is corrupt: " + check.problem);
  }
  if (check.status == GunzipStatus::Truncated)
  {
    throw IncompleteImageFile("'" + path + "' is truncated: its compressed stream ends after " +
                              std::to_string(check.bytes) + " bytes, inside its NIfTI header");
  }
}

} // namespace

std::vector<unsigned char>
ReadDecompressedHead(const std::string & path, std::size_t count)
{
  const OwnedDescriptor      file{ OpenRegularFile(path) }; // a FIFO or a device is not read
  std::vector<unsigned char> chunk(kHeadChunkBytes);
  return InflateHead(
    [&]() -> std::pair<const unsigned char *, std::size_t> {
      const ssize_t got = file.fd < 0 ? -1 : ::read(file.fd, chunk.data(), chunk.size());
      return { chunk.data(), got > 0 ? static_cast<std::size_t>(got) : 0 };
    },
    count);
}

std::optional<NiftiHeader>
ReadNiftiHeader(const std::string & path)
{
  const std::vector<unsigned char> head = ReadDecompressedHead(path, kNiftiHeaderBytes);
  if (head.size() < kNifti1HeaderSize && IsGzipAt(path, 0))
  {
    std::ifstream                    file(path, std::ios::binary);
    const std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    ThrowWhereHeaderStreamBreaks(bytes.data(), bytes.size(), path);
  }
  return ParseNiftiHeader(head.data(), head.size(), path);
}

std::optional<NiftiHeader>
ParseGzipNiftiHeader(const unsigned char * bytes, std::size_t size, const std::string & path)
{
  std::size_t                      given = 0;
  const std::vector<unsigned char> head = InflateHead(
    [&]() -> std::pair<const unsigned char *, std::size_t> {
      const std::size_t take = std::min(kHeadChunkBytes, size - given);
      given += take;
      return { bytes + given - take, take };
    },
    kNiftiHeaderBytes);
  if (head.size() < kNifti1HeaderSize)
  {
    ThrowWhereHeaderStreamBreaks(bytes, size, path);
  }
  return ParseNiftiHeader(head.data(), head.size(), path);
}

} // namespace svdlr_io
