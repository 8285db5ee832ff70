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

#include "svdlr/CpuThreads.h"

#include <libdeflate.h>
#include <zlib.h>
#if SVDLR_HAVE_ISAL
#  include <isa-l/igzip_lib.h>
#endif

#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/parallel_pipeline.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

namespace svdlr_io
{

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

std::uint64_t
MostDecompressedBytes(std::size_t compressed)
{
  return static_cast<std::uint64_t>(compressed) * 1032 + 64;
}

namespace
{

/** `result` failed as `check` says, at `produced` bytes into the output: the buffer goes, the words stay. */
Decompressed &
Failed(Decompressed & result, const GunzipCheck & check, std::uint64_t produced)
{
  result.bytes.clear();
  result.bytes.shrink_to_fit();
  result.complete = false;
  result.status = check.status == GunzipStatus::Complete ? GunzipStatus::Corrupt : check.status;
  result.bytesBeforeFailure = produced + check.bytes;
  result.problem = check.status == GunzipStatus::Complete ? "libdeflate refused data zlib decodes" : check.problem;
  return result;
}

} // namespace

Decompressed
DecompressGzip(const unsigned char * compressed, std::size_t size, std::uint64_t expected,
               const GunzipSettings & settings, GunzipReport * report)
{
  Decompressed result;
  const std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor *)> inflater(
    libdeflate_alloc_decompressor(), &libdeflate_free_decompressor);
  if (!inflater)
  {
    throw std::runtime_error("cannot allocate a gzip decompressor (out of memory)");
  }
  if (size < 18 || !StartsGzipMember(compressed, size))
  {
    return Failed(result, CheckGzipStream(compressed, size, settings.mostBytes), 0);
  }
  const std::uint64_t most = settings.mostBytes;
  ByteBuffer &        out = result.bytes;
  std::size_t         in = 0, produced = 0, member = 1;
  // What a stream of this size can hold at most, from `at` on, within the caller's bound.
  const auto room = [&](std::size_t at) { return std::min(MostDecompressedBytes(size - at), most - produced); };
  // The buffer grows with what the stream holds, never past the bound: a header's promise is not believed beyond what
  // the compressed bytes could give (a small file that claims 50 GiB must not get it).
  const auto grow = [&](std::uint64_t bytes) {
    try
    {
      out.resize(static_cast<std::size_t>(bytes));
      return true;
    }
    catch (const std::bad_alloc &)
    {
      return false;
    }
  };
  const auto diagnose = [&] { return CheckGzipStream(compressed + in, size - in, most - produced, member); };
  if (!grow(std::max<std::uint64_t>(std::min(expected, room(0)), 1)))
  {
    const GunzipCheck check = diagnose();
    if (check.status == GunzipStatus::Complete)
    {
      throw std::bad_alloc(); // the stream does hold that much: this machine has not the memory
    }
    return Failed(result, check, 0);
  }
  std::uint64_t                   tries = 0;
  const svdlr::RunningParallelJob running(svdlr::ParallelJobKind::FileInputOutput);
  const unsigned                  threads =
    settings.threads > 0 ? settings.threads : svdlr::ShareOfCpuThreads(svdlr::ParallelJobKind::FileInputOutput);
  bool parallel = threads > 1;
  while (in < size && StartsGzipMember(compressed + in, size - in))
  {
    if (parallel && tries == 0)
    {
      const GunzipMemberResult done =
        GunzipMember(compressed + in, size - in, out, produced, room(in), threads, settings, report);
      if (done.done)
      {
        in += done.used;
        produced += done.made;
        ++member;
        // Members smaller than a chunk (ours, bgzip's) gain nothing from chunks: libdeflate decodes the rest.
        parallel = !done.endedInFirstChunk;
        continue;
      }
      parallel = false; // given up: libdeflate decodes this member and the rest, as it always did
    }
    std::size_t     used = 0, made = 0;
    const auto code = libdeflate_gzip_decompress_ex(
      inflater.get(), compressed + in, size - in, out.data() + produced, out.size() - produced, &used, &made);
    const std::uint64_t left = out.size() - produced;
    if (code == LIBDEFLATE_INSUFFICIENT_SPACE && left < room(in) && ++tries < 64)
    {
      // The member holds more than the room left (the caller's guess was short): the room doubles, and libdeflate
      // restarts the member. Not the last trailer's ISIZE: it is only the last member's size, modulo 2^32.
      if (grow(produced + std::min(2 * left + 1, room(in))))
      {
        continue;
      }
      const GunzipCheck check = diagnose();
      if (check.status == GunzipStatus::Complete)
      {
        throw std::bad_alloc(); // the stream does hold that much
      }
      return Failed(result, check, produced);
    }
    if (code == LIBDEFLATE_INSUFFICIENT_SPACE && left >= most - produced)
    {
      GunzipCheck tooLong;
      tooLong.status = GunzipStatus::TooLong;
      return Failed(result, tooLong, most);
    }
    if (code != LIBDEFLATE_SUCCESS)
    {
      return Failed(result, diagnose(),
                    produced); // cut short or corrupt (libdeflate does not say which)
    }
    in += used;
    produced += made;
    ++member;
    tries = 0;
  }
  out.resize(produced);
  result.complete = true;
  result.status = GunzipStatus::Complete;
  return result;
}

std::uint32_t
Crc32(std::uint32_t crc, const unsigned char * bytes, std::size_t size)
{
  return libdeflate_crc32(crc, bytes, size);
}

std::uint32_t
Crc32Combine(std::uint32_t crcA, std::uint32_t crcB, std::uint64_t sizeB)
{
  // zlib's, for the CRC that libdeflate_crc32 computes (the same CRC-32; the tests check that they agree).
  static_assert(sizeof(z_off64_t) >= sizeof(std::int64_t), "zlib's 64-bit offsets hold every size");
  return static_cast<std::uint32_t>(crc32_combine64(crcA, crcB, static_cast<z_off64_t>(sizeB)));
}

namespace
{

/** `parts` cut into members: kGzipMemberBytes each, the last of each part shorter; one empty member for no bytes at
 * all, so that the file is still gzip. */
std::vector<ByteSpan>
MembersOf(const std::vector<ByteSpan> & parts)
{
  std::vector<ByteSpan> members;
  for (const ByteSpan & part : parts)
  {
    for (std::size_t offset = 0; offset < part.size; offset += kGzipMemberBytes)
    {
      members.push_back({ part.data + offset, std::min(kGzipMemberBytes, part.size - offset) });
    }
  }
  if (members.empty())
  {
    members.push_back({ nullptr, 0 });
  }
  return members;
}

/** One worker's compressor of members. Level 1 (the default) goes to ISA-L's igzip where the library is built with it
 * (SVDLR_HAVE_ISAL, CMake/SVDLowRankIsal.cmake): on the tool's denoised float32 series it compressed 880-900 MB/s a
 * core against libdeflate's 90-130 MB/s at level 1, to 86.4 % against 86.2 % (2 cores here, one member of 32 MB),
 * which at 200 volumes is most of the 3.4 s the H200's 16 cores took to write 2.8 GB. Other levels are libdeflate's. */
class MemberCompressor
{
public:
  explicit MemberCompressor(int level)
  {
#if SVDLR_HAVE_ISAL
    if (level == 1)
    {
      m_IgzipLevelBuffer.resize(ISAL_DEF_LVL1_DEFAULT);
      return;
    }
#endif
    m_Deflater.reset(libdeflate_alloc_compressor(level));
    if (!m_Deflater)
    {
      throw std::runtime_error("cannot allocate a gzip compressor (out of memory)");
    }
  }

  /** Compresses `member` into `out` (grown as needed); returns its bytes. */
  std::size_t
  Compress(const ByteSpan & member, std::vector<unsigned char> & out)
  {
#if SVDLR_HAVE_ISAL
    if (!m_Deflater)
    {
      return CompressWithIgzip(member, out);
    }
#endif
    out.resize(std::max(out.size(), libdeflate_gzip_compress_bound(m_Deflater.get(), member.size)));
    const std::size_t made =
      libdeflate_gzip_compress(m_Deflater.get(), member.data, member.size, out.data(), out.size());
    if (made == 0)
    {
      throw std::runtime_error("gzip compression failed"); // the bound makes this unreachable
    }
    return made;
  }

private:
#if SVDLR_HAVE_ISAL
  std::size_t
  CompressWithIgzip(const ByteSpan & member, std::vector<unsigned char> & out)
  {
    isal_zstream stream;
    isal_deflate_init(&stream);
    stream.gzip_flag = IGZIP_GZIP; // a gzip member: header, DEFLATE, CRC-32 and size
    stream.level = 1;
    stream.level_buf = m_IgzipLevelBuffer.data();
    stream.level_buf_size = static_cast<std::uint32_t>(m_IgzipLevelBuffer.size());
    stream.end_of_stream = 1;
    stream.flush = NO_FLUSH;
    stream.next_in = const_cast<unsigned char *>(member.data); // igzip reads it only
    stream.avail_in = static_cast<std::uint32_t>(member.size);   // a member is at most kGzipMemberBytes
    // Room for stored blocks (what incompressible bytes become) and the frame; grown if igzip asks for more.
    out.resize(std::max(out.size(), member.size + member.size / 64 + 1024));
    std::size_t made = 0;
    for (;;)
    {
      stream.next_out = out.data() + made;
      stream.avail_out = static_cast<std::uint32_t>(std::min<std::size_t>(out.size() - made, UINT32_MAX));
      if (isal_deflate(&stream) != COMP_OK)
      {
        throw std::runtime_error("gzip compression failed (ISA-L)");
      }
      made = static_cast<std::size_t>(stream.next_out - out.data());
      if (stream.internal_state.state == ZSTATE_END)
      {
        return made;
      }
      out.resize(2 * out.size());
    }
  }

  std::vector<unsigned char> m_IgzipLevelBuffer; // igzip's hash tables for level 1; empty with libdeflate
#endif
  std::unique_ptr<libdeflate_compressor, void (*)(libdeflate_compressor *)> m_Deflater{
    nullptr, &libdeflate_free_compressor
  }; // null with igzip
};

} // namespace

void
CompressGzip(const std::vector<ByteSpan> &                                  parts,
             int                                                            level,
             unsigned                                                       threads,
             const std::function<void(const unsigned char *, std::size_t)> & write)
{
  level = level > 0 ? std::min(level, 12) : kDefaultGzipLevel;
  const svdlr::RunningParallelJob running(svdlr::ParallelJobKind::FileInputOutput);
  const std::vector<ByteSpan>     members = MembersOf(parts);
  threads = svdlr::ShareOfCpuThreads(svdlr::ParallelJobKind::FileInputOutput, threads);
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, members.size()));
  // oneTBB's pipeline: the members taken in order, compressed on up to `threads` cores (one: this thread alone),
  // written in order as they are done, so that writing overlaps compressing. At most `window` members are in flight,
  // and they complete in order, so member k + window starts after member k is written: the ring of `window` buffers
  // is never overrun.
  const std::size_t                                 window = 2 * std::size_t{ threads };
  std::vector<std::vector<unsigned char>>           outs(window);
  std::vector<std::size_t>                          made(window);
  tbb::enumerable_thread_specific<MemberCompressor> compressors(level);
  std::size_t                                       next = 0;
  const auto take = [&](tbb::flow_control & control) -> std::size_t {
    if (next == members.size())
    {
      control.stop();
    }
    return next++;
  };
  const auto compress = [&](std::size_t k) {
    made[k % window] = compressors.local().Compress(members[k], outs[k % window]);
    return k;
  };
  const auto put = [&](std::size_t k) { write(outs[k % window].data(), made[k % window]); };
  tbb::task_arena arena(static_cast<int>(threads));
  arena.execute([&] {
    tbb::parallel_pipeline(window,
                           tbb::make_filter<void, std::size_t>(tbb::filter_mode::serial_in_order, take) &
                             tbb::make_filter<std::size_t, std::size_t>(tbb::filter_mode::parallel, compress) &
                             tbb::make_filter<std::size_t, void>(tbb::filter_mode::serial_in_order, put));
  });
}

} // namespace svdlr_io
