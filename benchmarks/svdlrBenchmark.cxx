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
// svdlrBenchmark: times the engine end to end (host buffer in, host buffer out, transfers included) on
// one workload read from a raw float32 file, and writes the reconstruction for the accuracy check.
// Driven by run_benchmarks.py, which generates the workloads, runs the peers in the same process
// session and computes accuracy against float64. Wall-clock timing is the right clock here: the engine
// returns only when the result is back in host memory.
#include "svdlrBenchmarkIO.h"
#include "svdlr/Engine.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#ifdef SVDLR_BENCHMARK_WITH_CUDA
#  include <cuda_runtime.h>
#endif

namespace
{

struct Arguments
{
  std::string input, output, json, name{ "workload" };
  std::size_t count{ 0 }, rows{ 0 }, cols{ 0 }, rank{ 1 }, repeats{ 5 }, warmups{ 1 }, batch{ 0 };
  svdlr::Backend backend{ svdlr::Backend::CUDA };
  svdlr::Solver  solver{ svdlr::Solver::Auto };
  bool           pinned{ false };
};

[[noreturn]] void
Usage(const std::string & problem)
{
  std::cerr << "svdlrBenchmark: " << problem << "\n"
            << "usage: svdlrBenchmark --input F.f32 --count B --rows R --cols C --rank K [--backend cpu|cuda]\n"
            << "       [--memory pageable|pinned] [--repeats N] [--warmups N] [--batch N] [--output R.f32]\n"
            << "       [--json result.json] [--name W1] [--solver auto|exact|subspace]\n";
  std::exit(2);
}

Arguments
Parse(int argc, char * argv[])
{
  Arguments a;
  for (int i = 1; i < argc; ++i)
  {
    const std::string flag = argv[i];
    const std::string value = svdlr_bench::NextValue(argc, argv, i, Usage);
    const auto        number = [&]() { return static_cast<std::size_t>(std::stoull(value)); };
    if (flag == "--input")
      a.input = value;
    else if (flag == "--output")
      a.output = value;
    else if (flag == "--json")
      a.json = value;
    else if (flag == "--name")
      a.name = value;
    else if (flag == "--count")
      a.count = number();
    else if (flag == "--rows")
      a.rows = number();
    else if (flag == "--cols")
      a.cols = number();
    else if (flag == "--rank")
      a.rank = number();
    else if (flag == "--repeats")
      a.repeats = number();
    else if (flag == "--warmups")
      a.warmups = number();
    else if (flag == "--batch")
      a.batch = number();
    else if (flag == "--backend")
      a.backend = value == "cpu" ? svdlr::Backend::CPU : value == "cuda" ? svdlr::Backend::CUDA : (Usage("bad backend"), svdlr::Backend::Auto);
    else if (flag == "--solver")
      a.solver = value == "auto"       ? svdlr::Solver::Auto
                 : value == "exact"    ? svdlr::Solver::Exact
                 : value == "subspace" ? svdlr::Solver::Subspace
                                       : (Usage("bad solver"), svdlr::Solver::Auto);
    else if (flag == "--memory")
      a.pinned = value == "pinned" ? true : value == "pageable" ? false : (Usage("bad memory kind"), false);
    else
      Usage("unknown option " + flag);
  }
  if (a.input.empty() || a.count == 0 || a.rows == 0 || a.cols == 0)
  {
    Usage("--input, --count, --rows and --cols are required");
  }
  return a;
}

// A float buffer in ordinary (pageable) memory, or page-locked through cudaMallocHost as the peers' "e2e"
// figures use.
class HostBuffer
{
public:
  HostBuffer(std::size_t elements, bool pinned)
    : m_Elements(elements)
  {
#ifdef SVDLR_BENCHMARK_WITH_CUDA
    if (pinned)
    {
      void * p = nullptr;
      if (cudaMallocHost(&p, elements * sizeof(float)) != cudaSuccess)
      {
        throw std::runtime_error("cudaMallocHost failed");
      }
      m_Pinned = static_cast<float *>(p);
      return;
    }
#else
    if (pinned)
    {
      throw std::runtime_error("pinned memory needs a CUDA build");
    }
#endif
    m_Pageable.resize(elements);
  }
  ~HostBuffer()
  {
#ifdef SVDLR_BENCHMARK_WITH_CUDA
    if (m_Pinned != nullptr)
    {
      cudaFreeHost(m_Pinned);
    }
#endif
  }
  HostBuffer(const HostBuffer &) = delete;
  HostBuffer &
  operator=(const HostBuffer &) = delete;

  float *
  Data()
  {
    return m_Pinned != nullptr ? m_Pinned : m_Pageable.data();
  }
  std::size_t
  Size() const
  {
    return m_Elements;
  }

private:
  std::size_t        m_Elements;
  std::vector<float> m_Pageable;
  float *            m_Pinned{ nullptr };
};

} // namespace

int
main(int argc, char * argv[])
{
  const Arguments   args = Parse(argc, argv);
  const std::size_t elements = args.count * args.rows * args.cols;
  try
  {
    HostBuffer    input(elements, args.pinned), output(elements, args.pinned);
    std::ifstream file(args.input, std::ios::binary);
    if (!file.read(reinterpret_cast<char *>(input.Data()), static_cast<std::streamsize>(elements * sizeof(float))))
    {
      throw std::runtime_error("cannot read " + std::to_string(elements) + " floats from " + args.input);
    }

    svdlr::Options options;
    options.policy = svdlr::RankPolicy::Fixed(args.rank);
    options.backend = args.backend;
    options.maxMatricesPerBatch = args.batch;
    options.solver = args.solver;
    const svdlr::MatrixBatch<const float> in{ input.Data(), args.count, args.rows, args.cols, args.rows * args.cols };
    const svdlr::MatrixBatch<float>       out{ output.Data(), args.count, args.rows, args.cols, args.rows * args.cols };

    // Warm-up with the real shapes keeps context creation and first-call costs out of the median.
    svdlr::Report report;
    for (std::size_t i = 0; i < args.warmups; ++i)
    {
      report = svdlr::Reconstruct(in, out, options);
    }
    std::vector<double> times;
    for (std::size_t i = 0; i < args.repeats; ++i)
    {
      std::memset(output.Data(), 0xFF, elements * sizeof(float)); // NaN poison: every pixel must be written
      const auto start = std::chrono::steady_clock::now();
      report = svdlr::Reconstruct(in, out, options);
      times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }

    if (!args.output.empty())
    {
      std::ofstream(args.output, std::ios::binary)
        .write(reinterpret_cast<const char *>(output.Data()), static_cast<std::streamsize>(elements * sizeof(float)));
    }
    std::ostringstream json;
    json << "{\"name\": \"" << args.name << "\", \"backend\": \"" << svdlr::ToString(report.backend)
         << "\", \"solver\": \"" << svdlr::ToString(report.solver)
         << "\", \"memory\": \"" << (args.pinned ? "pinned" : "pageable") << "\", \"count\": " << args.count
         << ", \"rows\": " << args.rows << ", \"cols\": " << args.cols << ", \"rank\": " << args.rank
         << ", \"slices_redone\": " << report.slicesRedone << ", "
         << svdlr_bench::JsonTimes(times, "ms", false) << "}";
    std::cout << json.str() << std::endl;
    if (!args.json.empty())
    {
      std::ofstream(args.json) << json.str() << "\n";
    }
  }
  catch (const std::exception & error)
  {
    std::cerr << "svdlrBenchmark: " << error.what() << std::endl;
    return 1;
  }
  return 0;
}
