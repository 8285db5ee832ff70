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
#include "SVDLowRankGunzipCheck.h"

#include "SVDLowRankGzip.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

namespace svdlr_io
{
namespace
{

/** zlib's message for a failed member, in the words of the tools' errors. */
std::string
ProblemOf(const char * message, std::size_t member)
{
  const std::string which = "gzip member " + std::to_string(member);
  const std::string zlib = message != nullptr ? message : "";
  if (zlib == "incorrect data check")
  {
    return which + " fails its CRC-32 check: its data is damaged";
  }
  if (zlib == "incorrect length check")
  {
    return "the size in the trailer (ISIZE) of " + which + " does not match its data";
  }
  return which + " holds data that cannot be decompressed (" + (zlib.empty() ? "corrupt" : zlib) + ")";
}

} // namespace

GunzipCheck
CheckGzipStream(const unsigned char * compressed, std::size_t size, std::uint64_t mostBytes, std::size_t firstMember)
{
  GunzipCheck check;
  check.member = firstMember;
  z_stream stream{};
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) // gzip only: a trailer CRC-32 and ISIZE checked
  {
    throw std::bad_alloc();
  }
  const std::unique_ptr<z_stream, int (*)(z_streamp)> ended(&stream, inflateEnd);
  std::vector<unsigned char> out(std::size_t{ 1 } << 18); // decoded and dropped
  const unsigned char *      end = compressed + size;
  stream.next_in = const_cast<unsigned char *>(compressed);
  for (;;)
  {
    // zlib counts input in 32 bits: at most 1 GiB at a time.
    const std::size_t left = static_cast<std::size_t>(end - stream.next_in);
    stream.avail_in = static_cast<uInt>(std::min<std::size_t>(left, std::size_t{ 1 } << 30));
    stream.next_out = out.data();
    stream.avail_out = static_cast<uInt>(out.size());
    const int code = inflate(&stream, Z_NO_FLUSH);
    check.bytes += out.size() - stream.avail_out;
    if (check.bytes > mostBytes)
    {
      check.status = GunzipStatus::TooLong;
      return check;
    }
    if (code == Z_STREAM_END)
    {
      const std::size_t rest = static_cast<std::size_t>(end - stream.next_in);
      if (!StartsGzipMember(stream.next_in, rest))
      {
        return check; // Complete; what follows the last member is not another one
      }
      inflateReset(&stream);
      ++check.member;
      continue;
    }
    if (code == Z_MEM_ERROR)
    {
      throw std::bad_alloc();
    }
    if (code != Z_OK && code != Z_BUF_ERROR)
    {
      check.status = GunzipStatus::Corrupt; // Z_DATA_ERROR (a CRC, an ISIZE, bad codes), Z_NEED_DICT
      check.problem = ProblemOf(stream.msg, check.member);
      return check;
    }
    if (stream.next_in == end && stream.avail_out != 0)
    {
      check.status = GunzipStatus::Truncated; // all input taken, room left for output, and the member goes on
      return check;
    }
  }
}

} // namespace svdlr_io
