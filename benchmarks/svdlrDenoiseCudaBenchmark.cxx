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
// svdlrDenoiseCudaBenchmark: the local denoiser's CUDA backend end to end (host series in, host series out) with
// our eigen-solver and with cuSOLVER's, the plan (from the backend's trace; a stage breakdown comes from nsys profile
// of this program), and the accuracy beside each time: against a reference output (the CPU backend's, written by
// svdlrDenoiseBenchmark --output/--rank-out) and between the two solvers. Input: a raw float32 series in ITK's 4D
// order. ITK-free, so it can be carried to the GPU machine. Prints one JSON line per configuration.
#include "svdlrBenchmarkIO.h"
#include "cuda/svdlrLocalDenoiseCuda.h"
#include "svdlr/LocalDenoise.h"
#include "svdlr/Names.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

using svdlr_bench::ReadRaw;

namespace
{

struct Arguments
{
  std::string             input, reference, referenceRank;
  std::size_t             size[4]{ 0, 0, 0, 0 };
  std::size_t             repeat{ 5 };
  std::size_t             cusolverRepeat{ 2 };
  std::size_t             maxPatchesPerBatch{ 0 };
  // The engine's defaults, as the reference svdlrDenoiseBenchmark's.
  svdlr::PatchAggregation aggregation{ svdlr::LocalDenoiseOptions{}.aggregation };
  svdlr::Shrinkage        shrinkage{ svdlr::LocalDenoiseOptions{}.shrinkage };
  std::size_t             deviceMemoryLimit{ 0 };
  int                     gemmGram{ -1 }; // --gram: LocalDenoiseCudaTuning::gemmGram for every configuration
};

[[noreturn]] void
Usage(const std::string & problem)
{
  std::cerr << "svdlrDenoiseCudaBenchmark: " << problem << "\n"
            << "usage: svdlrDenoiseCudaBenchmark --input series.f32 --size NX NY NZ NV [--repeat N]\n"
            << "       [--cusolver-repeat N (0: skip)]\n"
            << "       [--aggregation centre|overlap] [--shrinkage auto|hard|frobenius]\n"
            << "       [--batch N] [--device-memory-limit SIZE (" << svdlr::ByteSizeSyntax() << ")]\n"
            << "       [--gram auto|tiled|gemm (the Gram stage: the default's choice, our kernel, cuBLAS)]\n"
            << "       [--reference cpu.f32 --reference-rank cpu.u16]\n";
  std::exit(2);
}

Arguments
Parse(int argc, char * argv[])
{
  Arguments  a;
  const auto value = [&](int & i) { return svdlr_bench::NextValue(argc, argv, i, Usage); };
  for (int i = 1; i < argc; ++i)
  {
    const std::string flag = argv[i];
    if (flag == "--input")
      a.input = value(i);
    else if (flag == "--reference")
      a.reference = value(i);
    else if (flag == "--reference-rank")
      a.referenceRank = value(i);
    else if (flag == "--repeat")
      a.repeat = std::stoul(value(i));
    else if (flag == "--cusolver-repeat")
      a.cusolverRepeat = std::stoul(value(i));
    else if (flag == "--gram")
    {
      const std::string name = value(i);
      if (name != "auto" && name != "tiled" && name != "gemm")
        Usage("--gram takes auto, tiled or gemm, got '" + name + "'");
      a.gemmGram = name == "auto" ? -1 : name == "gemm" ? 1 : 0;
    }
    else if (flag == "--batch")
      a.maxPatchesPerBatch = std::stoul(value(i));
    else if (flag == "--size")
      for (std::size_t & extent : a.size)
        extent = std::stoul(value(i));
    else if (flag == "--shrinkage")
    {
      const std::string name = value(i);
      if (!svdlr::ParseShrinkageName(name, a.shrinkage))
        Usage("bad shrinkage " + name);
    }
    else if (flag == "--device-memory-limit")
    {
      const std::string size = value(i);
      a.deviceMemoryLimit = svdlr::ParseByteSize(size);
      if (a.deviceMemoryLimit == 0)
        Usage("--device-memory-limit takes " + std::string(svdlr::ByteSizeSyntax()) + ", got '" + size + "'");
    }
    else if (flag == "--aggregation")
    {
      const std::string name = value(i);
      a.aggregation = name == "overlap" ? svdlr::PatchAggregation::OverlapAverage : svdlr::PatchAggregation::CentreVoxel;
    }
    else
      Usage("unknown option " + flag);
  }
  if (a.input.empty() || a.size[3] == 0 || a.repeat == 0)
  {
    Usage("--input and --size are required, --repeat >= 1");
  }
  return a;
}

struct Run
{
  std::vector<float>                   output;
  std::vector<std::uint16_t>           rank;
  std::vector<float>                   sigma;
  std::vector<double>                  seconds;
  svdlr::detail::LocalDenoiseCudaTrace trace; // of the last run
  std::size_t                          patches{ 0 };
  std::size_t                          deviceBytes{ 0 }; // the buffers' device memory (LocalDenoiseReport)
};

Run
Time(const Arguments & a, const std::vector<float> & input, const svdlr::detail::LocalDenoiseCudaTuning & tuning,
     std::size_t repeat)
{
  const std::size_t nx = a.size[0], ny = a.size[1], nz = a.size[2], nv = a.size[3];
  const std::size_t voxels = nx * ny * nz;
  Run               run;
  run.output.resize(input.size());
  run.rank.resize(voxels);
  run.sigma.resize(voxels);
  const std::array<std::ptrdiff_t, 4> strides{ 1, static_cast<std::ptrdiff_t>(nx), static_cast<std::ptrdiff_t>(nx * ny),
                                               static_cast<std::ptrdiff_t>(voxels) };
  const svdlr::SeriesView<const float> in{ input.data(), { nx, ny, nz }, nv, strides };
  const svdlr::SeriesView<float>       out{ run.output.data(), { nx, ny, nz }, nv, strides };
  svdlr::LocalDenoiseOptions           options;
  options.aggregation = a.aggregation;
  options.shrinkage = a.shrinkage;
  options.deviceMemoryLimit = a.deviceMemoryLimit;
  options.maxPatchesPerBatch = a.maxPatchesPerBatch;
  const auto patch = svdlr::DefaultPatchSize(nv);
  // One warm-up (context, handles, pinned staging, first-call costs), the timed runs without the trace, each
  // from a poisoned output, and one more run with the trace, not timed here.
  for (std::size_t i = 0; i <= repeat + 1; ++i)
  {
    std::fill(run.output.begin(), run.output.end(), std::nanf(""));
    const bool                traced = i == repeat + 1;
    svdlr::LocalDenoiseReport report;
    const auto                start = std::chrono::steady_clock::now();
    svdlr::detail::RunLocalDenoiseCudaTuned(in, out, { run.sigma.data(), run.rank.data() }, options, patch, report,
                                            tuning, traced ? &run.trace : nullptr);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (i > 0 && !traced)
    {
      run.seconds.push_back(seconds);
    }
    run.patches = report.patches;
    run.deviceBytes = report.peakDeviceBytes;
  }
  return run;
}

struct Agreement
{
  double      maxAbs{ 0 };
  double      rmsRelative{ 0 }; // ||a - b|| / ||b||
  std::size_t rankDifferences{ 0 };
  std::size_t nonFinite{ 0 };
};

Agreement
Compare(const std::vector<float> & a, const std::vector<float> & b, const std::vector<std::uint16_t> & rankA,
        const std::vector<std::uint16_t> & rankB)
{
  Agreement agreement;
  double    difference = 0, norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
  {
    if (!std::isfinite(a[i]))
    {
      ++agreement.nonFinite;
      continue;
    }
    const double d = static_cast<double>(a[i]) - b[i];
    agreement.maxAbs = std::max(agreement.maxAbs, std::abs(d));
    difference += d * d;
    norm += static_cast<double>(b[i]) * b[i];
  }
  agreement.rmsRelative = std::sqrt(difference / std::max(norm, 1e-300));
  for (std::size_t v = 0; v < rankA.size() && v < rankB.size(); ++v)
  {
    agreement.rankDifferences += rankA[v] != rankB[v];
  }
  return agreement;
}

std::string
Json(const std::string & name, const Arguments & a, const Run & run, const Agreement * vsReference,
     const Agreement * vsOther)
{
  const auto &       t = run.trace;
  std::ostringstream json;
  json << "{\"program\": \"svdlrDenoiseCudaBenchmark\", \"solver\": \"" << name << "\", \"size\": [" << a.size[0]
       << ", " << a.size[1] << ", " << a.size[2] << ", " << a.size[3] << "], \"aggregation\": \""
       << (a.aggregation == svdlr::PatchAggregation::CentreVoxel ? "centre" : "overlap")
       << "\", \"shrinkage\": \"" << svdlr::ShrinkageName(a.shrinkage)
       << "\", \"device_memory_limit\": " << a.deviceMemoryLimit << ", \"device_bytes\": " << run.deviceBytes
       << ", \"patches\": " << run.patches << ", " << svdlr_bench::JsonTimes(run.seconds, "s", true)
       << ", \"plan\": {\"slabs\": " << t.slabs << ", \"batches\": " << t.batches << ", \"batch\": " << t.batchSize
       << ", \"centre_planes\": " << t.centrePlanesPerSlab << ", \"cusolver\": " << (t.usedCusolver ? "true" : "false")
       << ", \"gemm_gram\": " << (t.usedGemmGram ? "true" : "false") << "}";
  const auto agreement = [&](const char * key, const Agreement * g) {
    if (g != nullptr)
    {
      json << ", \"" << key << "\": {\"max_abs\": " << g->maxAbs << ", \"rel_rms\": " << g->rmsRelative
           << ", \"rank_differences\": " << g->rankDifferences << ", \"non_finite\": " << g->nonFinite << "}";
    }
  };
  agreement("vs_reference", vsReference);
  agreement("vs_first_configuration", vsOther);
  json << "}";
  return json.str();
}

} // namespace

int
main(int argc, char * argv[])
{
  const Arguments a = Parse(argc, argv);
  try
  {
    const std::size_t        voxels = a.size[0] * a.size[1] * a.size[2];
    const std::vector<float> input = ReadRaw<float>(a.input, voxels * a.size[3]);
    std::vector<float>         reference;
    std::vector<std::uint16_t> referenceRank;
    if (!a.reference.empty())
    {
      reference = ReadRaw<float>(a.reference, input.size());
    }
    if (!a.referenceRank.empty())
    {
      referenceRank = ReadRaw<std::uint16_t>(a.referenceRank, voxels);
    }
    // The configurations, the first being the engine's default: our solver, then cuSOLVER's XsyevBatched. Each is
    // compared with the reference output (the CPU backend's) and with the first.
    struct Configuration
    {
      std::string                           name;
      svdlr::detail::LocalDenoiseCudaTuning tuning;
      std::size_t                           repeat;
    };
    std::vector<Configuration> configurations;
    configurations.push_back({ "ours", {}, a.repeat });
    if (a.cusolverRepeat > 0)
    {
      svdlr::detail::LocalDenoiseCudaTuning tuning;
      tuning.cusolver = true;
      configurations.push_back({ "cusolver", tuning, a.cusolverRepeat });
    }
    Run first;
    for (std::size_t c = 0; c < configurations.size(); ++c)
    {
      const Configuration & configuration = configurations[c];
      try
      {
        svdlr::detail::LocalDenoiseCudaTuning tuning = configuration.tuning;
        tuning.gemmGram = a.gemmGram;
        Run run = Time(a, input, tuning, configuration.repeat);
        const Agreement vsReference = reference.empty() ? Agreement{} : Compare(run.output, reference, run.rank, referenceRank);
        const Agreement vsFirst = c > 0 ? Compare(run.output, first.output, run.rank, first.rank) : Agreement{};
        std::cout << Json(configuration.name, a, run, reference.empty() ? nullptr : &vsReference, c > 0 ? &vsFirst : nullptr)
                  << std::endl;
        if (c == 0)
        {
          first = std::move(run);
        }
      }
      catch (const std::exception & error)
      {
        std::cout << "{\"solver\": \"" << configuration.name << "\", \"error\": \"" << error.what() << "\"}" << std::endl;
      }
    }
  }
  catch (const std::exception & error)
  {
    std::cerr << "svdlrDenoiseCudaBenchmark: " << error.what() << std::endl;
    return 1;
  }
  return 0;
}
