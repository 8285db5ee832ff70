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
// Fuzz target: one NIfTI file in gzip (.nii.gz), read as the tools read it (svdlrImageFileFuzz.h), with headers and
// gzip streams that lie. The input is two control bytes, then the decompressed file (its header and voxels, which the
// fuzzer mutates: dimensions, datatype, bitpix, vox_offset, scale); the target compresses it here and then damages the
// gzip stream as the control bytes say, so that mutations reach the reader's decompression and checks rather than dying
// in a gzip header a random byte broke:
//   bits 0-1 of the first byte: the file cut into 1 to 4 members (where the second byte says);
//   bit 2: the last member's CRC-32 changed;     bit 3: the last member's ISIZE changed;
//   bit 4: the stream cut short by (second byte + 1) bytes;
//   bit 5: zeros appended to the file before compression, (second byte + 1) x 64 KiB (a bomb: more than declared);
//   bit 6: bytes that do not start a member after the last one;
//   bit 7: stored blocks (level 0) rather than compressed ones (a flipped byte then fails only the CRC).
#include "svdlrImageFileFuzz.h"

#include <zlib.h>

#include <algorithm>
#include <string>
#include <vector>

namespace
{

/** One gzip member of `size` bytes at `bytes`, at zlib `level` (0: stored blocks), appended to `out`. */
void
AppendMember(const char * bytes, std::size_t size, int level, std::string & out)
{
  z_stream z{};
  deflateInit2(&z, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string member(deflateBound(&z, static_cast<uLong>(size)), '\0');
  z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(bytes));
  z.avail_in = static_cast<uInt>(size);
  z.next_out = reinterpret_cast<Bytef *>(&member[0]);
  z.avail_out = static_cast<uInt>(member.size());
  deflate(&z, Z_FINISH);
  out.append(member.data(), z.total_out);
  deflateEnd(&z);
}

/** `plain` as `members` gzip members at `level`, cut where `spread` says. */
std::string
Compressed(const std::string & plain, unsigned members, unsigned spread, int level)
{
  std::string out;
  std::size_t at = 0;
  for (unsigned m = 1; m < members && at < plain.size(); ++m)
  {
    const std::size_t size = std::min(plain.size() - at, 1 + plain.size() * (spread + m) / (4 * 256));
    AppendMember(plain.data() + at, size, level, out);
    at += size;
  }
  AppendMember(plain.data() + at, plain.size() - at, level, out);
  return out;
}

} // namespace

extern "C" int
LLVMFuzzerInitialize(int *, char ***)
{
  svdlr_fuzz::InitializeQuietly();
  return 0;
}

extern "C" int
LLVMFuzzerTestOneInput(const std::uint8_t * data, std::size_t size)
{
  if (size < 2)
  {
    return 0;
  }
  const unsigned control = data[0], amount = data[1];
  std::string    plain(reinterpret_cast<const char *>(data + 2), size - 2);
  if ((control & 32) != 0)
  {
    plain.append((amount + std::size_t{ 1 }) << 16, '\0');
  }
  std::string gzip = Compressed(plain, 1 + (control & 3), amount, (control & 128) != 0 ? 0 : 1);
  if ((control & 4) != 0 && gzip.size() >= 8)
  {
    gzip[gzip.size() - 8] = static_cast<char>(gzip[gzip.size() - 8] ^ 1);
  }
  if ((control & 8) != 0 && gzip.size() >= 4)
  {
    gzip[gzip.size() - 4] = static_cast<char>(gzip[gzip.size() - 4] + 1 + amount);
  }
  if ((control & 16) != 0)
  {
    gzip.resize(gzip.size() - std::min<std::size_t>(gzip.size(), amount + 1));
  }
  if ((control & 64) != 0)
  {
    gzip.append(reinterpret_cast<const char *>(data), std::min<std::size_t>(size, 1 + amount % 32));
  }
  svdlr_fuzz::ReadImageFileBytes(gzip, ".nii.gz");
  return 0;
}
