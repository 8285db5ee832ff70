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
// The .nii.gz read's decompression (apps/io/SVDLowRankGzip.h): libdeflate on one thread against the parallel decoder
// of one member (SVDLowRankParallelGunzip.h) on each thread count asked for, on one file; every parallel result is
// checked against libdeflate's, byte for byte. One line a thread count, best of --repeat, in MB/s of output:
//   svdlrGunzipBenchmark FILE.gz [--threads 1,2,4,8,16] [--repeat 5] [--chunk BYTES]
#include "SVDLowRankGzip.h"

#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <fstream>
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
  double     cpu = 0; // CPU seconds of the fastest run
  const auto best = [&](const svdlr_io::GunzipSettings & settings, svdlr_io::GunzipReport & report, bool & same) {
    double fastest = 1e30;
    same = true;
    for (int r = 0; r < repeat; ++r)
    {
      report = svdlr_io::GunzipReport{};
      const double                 cpuStart = CpuSeconds();
      const auto                   start = std::chrono::steady_clock::now();
      const svdlr_io::Decompressed out =
        svdlr_io::DecompressGzip(compressed.data(), compressed.size(), reference.bytes.size(), settings, &report);
      const double seconds = Seconds(start);
      cpu = seconds < fastest ? CpuSeconds() - cpuStart : cpu;
      fastest = std::min(fastest, seconds);
      same = same && out.complete && out.bytes == reference.bytes;
    }
    return fastest;
  };
  svdlr_io::GunzipReport report;
  bool                   same = true;
  const double           libdeflate = best(serial, report, same);
  std::printf("libdeflate, 1 thread: %.3f s, %.0f MB/s, CPU %.3f s\n", libdeflate, megabytes / libdeflate, cpu);
  int status = 0;
  for (const unsigned threads : threadCounts)
  {
    double seconds = 1e30;
    if (threads == 1)
    {
      // DecompressGzip takes libdeflate on one thread; the chunk decoder on one thread is timed through the member
      // decoder itself, for how fast it is against libdeflate.
      svdlr_io::GunzipSettings settings;
      settings.chunkBytes = chunk;
      settings.minimumBytes = 1; // timed whatever the file's size
      for (int r = 0; r < repeat; ++r)
      {
        report = svdlr_io::GunzipReport{};
        svdlr_io::ByteBuffer       out(reference.bytes.size());
        const double               cpuStart = CpuSeconds();
        const auto                 start = std::chrono::steady_clock::now();
        const auto                 member = svdlr_io::GunzipMember(compressed.data(), compressed.size(), out, 0,
                                                   svdlr_io::MostDecompressedBytes(compressed.size()), 1, settings,
                                                   &report);
        const double took = Seconds(start);
        cpu = took < seconds ? CpuSeconds() - cpuStart : cpu;
        seconds = std::min(seconds, took);
        out.resize(member.made);
        same = same && member.done && out == reference.bytes;
      }
    }
    else
    {
      svdlr_io::GunzipSettings settings;
      settings.threads = threads;
      settings.chunkBytes = chunk;
      seconds = best(settings, report, same);
    }
    std::printf("parallel, %2u threads: %.3f s, %.0f MB/s, %.2fx libdeflate, CPU %.3f s; %zu chunks, %zu decoded "
                "again, %zu members to libdeflate%s\n",
                threads, seconds, megabytes / seconds, libdeflate / seconds, cpu, report.chunks, report.catchUps,
                report.fallbacks, same ? "" : " -- BYTES DIFFER FROM LIBDEFLATE'S (or a member went back to it)");
    status = same ? status : 1;
  }
  return status;
}
