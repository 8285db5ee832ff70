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
// The .nii.gz read's decompression (apps/io/SVDLowRankGzip.h) on one file: libdeflate and ISA-L's igzip on one thread
// (neither inflates in parallel) against our decoder (SVDLowRankParallelGunzip.h) on each thread count asked for, as
// DecompressGzip runs it; every result is checked against libdeflate's, byte for byte. One line a decoder and thread
// count, best of --repeat, in seconds and MB/s of output; first the output's size and CRC-32, which
// gunzip_compare.py checks rapidgzip's output against:
//   svdlrGunzipBenchmark FILE.gz [--threads 1,2,4,8,16] [--repeat 5] [--chunk BYTES]
#include "SVDLowRankGzip.h"

#ifdef SVDLR_HAVE_ISAL
#  include <isa-l/igzip_lib.h>
#endif

#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace
{

double
Seconds(const std::chrono::steady_clock::time_point start)
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/** The process's CPU seconds so far: on a shared machine, what a decode costs apart from waiting for a core. */
double
CpuSeconds()
{
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

std::vector<unsigned>
ThreadList(const std::string & text)
{
  std::vector<unsigned> threads;
  std::stringstream     in(text);
  for (std::string item; std::getline(in, item, ',');)
  {
    threads.push_back(static_cast<unsigned>(std::stoul(item)));
  }
  return threads;
}

#ifdef SVDLR_HAVE_ISAL
/** ISA-L's igzip inflate of every member into `out`, sized to the whole output, each member's CRC-32 and size checked
 * by ISA-L (ISAL_GZIP). False when the stream is not whole or does not fill `out` exactly. */
bool
IsalGunzip(const std::vector<unsigned char> & compressed, svdlr_io::ByteBuffer & out)
{
  inflate_state state;
  isal_inflate_init(&state);
  unsigned char * in = const_cast<unsigned char *>(compressed.data()); // ISA-L's next_in is not const
  std::size_t     left = compressed.size(), made = 0;
  while (left >= 18 && svdlr_io::StartsGzipMember(in, left))
  {
    isal_inflate_reset(&state);
    state.crc_flag = ISAL_GZIP;
    state.next_in = in;
    state.avail_in = static_cast<std::uint32_t>(left); // a benchmark's file: under 4 GiB
    state.next_out = out.data() + made;
    state.avail_out = static_cast<std::uint32_t>(out.size() - made);
    if (isal_inflate(&state) != ISAL_DECOMP_OK || state.block_state != ISAL_BLOCK_FINISH)
    {
      return false;
    }
    in = state.next_in;
    left = state.avail_in;
    made = out.size() - state.avail_out;
  }
  return made == out.size();
}
#endif

} // namespace

int
main(int argc, char * argv[])
{
  if (argc < 2)
  {
    std::cerr << "usage: " << argv[0] << " FILE.gz [--threads 1,2,4,8,16] [--repeat 5] [--chunk BYTES]\n";
    return 2;
  }
  std::vector<unsigned> threadCounts = { 1, 2, 4, 8, 16 };
  int                   repeat = 5;
  std::size_t           chunk = 0;
  for (int i = 2; i + 1 < argc; i += 2)
  {
    const std::string option = argv[i];
    if (option == "--threads")
    {
      threadCounts = ThreadList(argv[i + 1]);
    }
    else if (option == "--repeat")
    {
      repeat = std::max(1, std::atoi(argv[i + 1]));
    }
    else if (option == "--chunk")
    {
      chunk = std::strtoull(argv[i + 1], nullptr, 10);
    }
    else
    {
      std::cerr << "unknown option " << option << "\n";
      return 2;
    }
  }
  std::ifstream                    file(argv[1], std::ios::binary);
  const std::vector<unsigned char> compressed((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (compressed.empty())
  {
    std::cerr << "cannot read " << argv[1] << "\n";
    return 2;
  }
  svdlr_io::GunzipSettings serial;
  serial.threads = 1;
  const svdlr_io::Decompressed reference = svdlr_io::DecompressGzip(compressed.data(), compressed.size(), 0, serial);
  if (!reference.complete)
  {
    std::cerr << argv[1] << " is not a complete gzip file\n";
    return 1;
  }
  const double megabytes = static_cast<double>(reference.bytes.size()) / 1e6;
  std::printf("%s: %.1f MB compressed, %.1f MB out, %u hardware threads\n", argv[1], compressed.size() / 1e6,
              megabytes, std::thread::hardware_concurrency());
  std::printf("reference: %zu bytes, CRC-32 %08x\n", reference.bytes.size(),
              svdlr_io::Crc32(0, reference.bytes.data(), reference.bytes.size()));
  double     cpu = 0; // CPU seconds of the fastest run
  const auto fastest = [&](const std::function<bool()> & decode, bool & same) {
    double best = 1e30;
    same = true;
    for (int r = 0; r < repeat; ++r)
    {
      const double cpuStart = CpuSeconds();
      const auto   start = std::chrono::steady_clock::now();
      const bool   right = decode();
      const double seconds = Seconds(start);
      cpu = seconds < best ? CpuSeconds() - cpuStart : cpu;
      best = std::min(best, seconds);
      same = same && right;
    }
    return best;
  };
  svdlr_io::GunzipReport report;
  bool                   same = true;
  const auto             decompress = [&](const svdlr_io::GunzipSettings & settings) {
    return [&compressed, &reference, &report, settings] {
      report = svdlr_io::GunzipReport{};
      const svdlr_io::Decompressed out =
        svdlr_io::DecompressGzip(compressed.data(), compressed.size(), reference.bytes.size(), settings, &report);
      return out.complete && out.bytes == reference.bytes;
    };
  };
  const double libdeflate = fastest(decompress(serial), same);
  std::printf("libdeflate,  1 thread: %.3f s, %.0f MB/s, CPU %.3f s\n", libdeflate, megabytes / libdeflate, cpu);
  int status = 0;
#ifdef SVDLR_HAVE_ISAL
  const double isal = fastest(
    [&] {
      svdlr_io::ByteBuffer out(reference.bytes.size());
      return IsalGunzip(compressed, out) && out == reference.bytes;
    },
    same);
  std::printf("isa-l,       1 thread: %.3f s, %.0f MB/s, %.2fx libdeflate, CPU %.3f s%s\n", isal, megabytes / isal,
              libdeflate / isal, cpu, same ? "" : " -- BYTES DIFFER FROM LIBDEFLATE'S");
  status = same ? status : 1;
#else
  std::printf("isa-l,       1 thread: not built (no libisal-dev where this benchmark was configured)\n");
#endif
  for (const unsigned threads : threadCounts)
  {
    svdlr_io::GunzipSettings settings;
    settings.threads = threads;
    settings.chunkBytes = chunk;
    double seconds = 0;
    if (threads == 1)
    {
      // DecompressGzip takes libdeflate on one thread; the chunk decoder on one thread is timed through the member
      // decoder itself, for how fast it is against libdeflate. It decodes one member: a file of several is decoded
      // by libdeflate on one thread (the row above), and on more by the first member's decoder and then libdeflate.
      settings.minimumBytes = 1; // timed whatever the file's size
      bool severalMembers = false;
      seconds = fastest(
        [&] {
          report = svdlr_io::GunzipReport{};
          svdlr_io::ByteBuffer out(reference.bytes.size());
          const auto           member = svdlr_io::GunzipMember(compressed.data(), compressed.size(), out, 0,
                                                     svdlr_io::MostDecompressedBytes(compressed.size()), 1, settings,
                                                     &report);
          severalMembers = member.done && member.used < compressed.size();
          out.resize(member.made);
          return severalMembers || (member.done && out == reference.bytes);
        },
        same);
      if (severalMembers)
      {
        std::printf("ours,        1 thread: several members: libdeflate's row\n");
        continue;
      }
    }
    else
    {
      seconds = fastest(decompress(settings), same);
    }
    std::printf("ours,       %2u thread%s %.3f s, %.0f MB/s, %.2fx libdeflate, CPU %.3f s; %zu chunks, %zu decoded "
                "again, %zu members to libdeflate%s\n",
                threads, threads == 1 ? ": " : "s:", seconds, megabytes / seconds, libdeflate / seconds, cpu, report.chunks, report.catchUps,
                report.fallbacks, same ? "" : " -- BYTES DIFFER FROM LIBDEFLATE'S (or a member went back to it)");
    status = same ? status : 1;
  }
  return status;
}
