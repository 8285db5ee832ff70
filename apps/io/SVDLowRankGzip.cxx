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
#include "SVDLowRankGzip.h"

#include <libdeflate.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <stdexcept>
#include <thread>

namespace svdlr_io
{
namespace
{

struct FreeDecompressor
{
  void
  operator()(libdeflate_decompressor * d) const
  {
    libdeflate_free_decompressor(d);
  }
};
struct FreeCompressor
{
  void
  operator()(libdeflate_compressor * c) const
  {
    libdeflate_free_compressor(c);
  }
};

} // namespace

bool
StartsGzipMember(const unsigned char * bytes, std::size_t size)
{
  return size >= 3 && bytes[0] == 0x1f && bytes[1] == 0x8b && bytes[2] == 8;
}

std::uint64_t
GzipMemberSize(std::uint32_t isize, std::uint64_t atLeast)
{
  constexpr std::uint64_t Period = std::uint64_t{ 1 } << 32;
  if (atLeast <= isize)
  {
    return isize;
  }
  // The smallest isize + k 2^32 >= atLeast.
  const std::uint64_t periods = (atLeast - isize + Period - 1) / Period;
  return periods > (UINT64_MAX - isize) / Period ? UINT64_MAX : isize + periods * Period;
}

Decompressed
DecompressGzip(const unsigned char * compressed, std::size_t size, std::uint64_t expected)
{
  Decompressed result;
  std::unique_ptr<libdeflate_decompressor, FreeDecompressor> inflater(libdeflate_alloc_decompressor());
  if (!inflater)
  {
    throw std::runtime_error("cannot allocate a gzip decompressor (out of memory)");
  }
  if (size < 18 || !StartsGzipMember(compressed, size))
  {
    return result;
  }
  std::vector<unsigned char> & out = result.bytes;
  out.resize(std::max<std::uint64_t>(expected, 1));
  std::size_t   in = 0, produced = 0;
  std::uint64_t tries = 0;
  while (in < size && StartsGzipMember(compressed + in, size - in))
  {
    std::size_t     used = 0, made = 0;
    const auto code = libdeflate_gzip_decompress_ex(
      inflater.get(), compressed + in, size - in, out.data() + produced, out.size() - produced, &used, &made);
    // Deflate expands at most 1032 to 1: what is left of the file cannot hold more than this.
    const std::uint64_t most = static_cast<std::uint64_t>(size - in) * 1032 + 64;
    const std::uint64_t room = out.size() - produced;
    if (code == LIBDEFLATE_INSUFFICIENT_SPACE && room < most && ++tries < 64)
    {
      // The member holds more than the room left (the caller's guess was short): the room doubles, and libdeflate
      // restarts the member. Not the last trailer's ISIZE: it is only the last member's size, modulo 2^32.
      out.resize(produced + std::min(2 * room + 1, most));
      continue;
    }
    if (code != LIBDEFLATE_SUCCESS)
    {
      result.bytes.clear();
      result.bytes.shrink_to_fit();
      return result; // cut short or corrupt
    }
    in += used;
    produced += made;
    tries = 0;
  }
  out.resize(produced);
  result.complete = true;
  return result;
}

std::uint32_t
Crc32(std::uint32_t crc, const unsigned char * bytes, std::size_t size)
{
  return libdeflate_crc32(crc, bytes, size);
}

void
CompressGzip(const std::function<std::size_t(unsigned char *, std::size_t)> & read,
             int                                                            level,
             unsigned                                                       threads,
             const std::function<void(const unsigned char *, std::size_t)> &  write)
{
  threads = std::max(threads, 1u);
  level = level > 0 ? std::min(level, 12) : kDefaultGzipLevel;
  struct Slot
  {
    std::unique_ptr<libdeflate_compressor, FreeCompressor> deflater;
    std::vector<unsigned char>                             input;
    std::vector<unsigned char>                             output;
    std::size_t                                            filled{ 0 };
    std::size_t                                            made{ 0 };
  };
  std::vector<Slot> slots(threads);
  for (Slot & slot : slots)
  {
    slot.deflater.reset(libdeflate_alloc_compressor(level));
    if (!slot.deflater)
    {
      throw std::runtime_error("cannot allocate a gzip compressor (out of memory)");
    }
    slot.input.resize(kGzipMemberBytes);
    slot.output.resize(libdeflate_gzip_compress_bound(slot.deflater.get(), kGzipMemberBytes));
  }
  bool more = true;
  bool any = false;
  while (more)
  {
    // A wave: one member per thread, read in order here, compressed together, written in order.
    unsigned used = 0;
    for (; used < threads && more; ++used)
    {
      Slot & slot = slots[used];
      slot.filled = 0;
      while (slot.filled < slot.input.size())
      {
        const std::size_t got = read(slot.input.data() + slot.filled, slot.input.size() - slot.filled);
        if (got == 0)
        {
          more = false;
          break;
        }
        slot.filled += got;
      }
      if (slot.filled == 0 && any)
      {
        break; // the end fell on a member's boundary
      }
      any = true;
    }
    const auto compress = [&slots](unsigned i) {
      Slot & slot = slots[i];
      slot.made = libdeflate_gzip_compress(
        slot.deflater.get(), slot.input.data(), slot.filled, slot.output.data(), slot.output.size());
    };
    std::vector<std::thread> workers;
    for (unsigned i = 1; i < used; ++i)
    {
      workers.emplace_back(compress, i);
    }
    if (used > 0)
    {
      compress(0);
    }
    for (std::thread & worker : workers)
    {
      worker.join();
    }
    for (unsigned i = 0; i < used; ++i)
    {
      if (slots[i].made == 0)
      {
        throw std::runtime_error("gzip compression failed"); // the bound makes this unreachable
      }
      write(slots[i].output.data(), slots[i].made);
    }
  }
}

} // namespace svdlr_io
