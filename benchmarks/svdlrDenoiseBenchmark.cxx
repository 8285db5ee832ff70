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
// svdlrDenoiseBenchmark: times DenoiseLocalLowRank end to end (host series in, host series out) on a 4D series read
// from a raw little-endian float32 file in ITK's 4D order (x fastest, then y, z, volume), and writes the denoised
// series and the maps for the accuracy check. The Python harness of the DWI comparison (dwidenoise, DIPY,
// patch-denoise) drives it; it prints one JSON line. ITK-free, so it can be carried to the GPU machine.
#include "svdlrBenchmarkIO.h"
#include "svdlr/DenoisePresets.h"
#include "svdlr/LocalDenoise.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

using svdlr_bench::ReadRaw;
using svdlr_bench::WriteRaw;

namespace
{

struct Arguments
{
  std::string                input, mask, output, sigmaOut, rankOut;
  std::size_t                size[4]{ 0, 0, 0, 0 };
  std::size_t                repeat{ 3 };
  unsigned                   threads{ 0 };
  std::array<std::size_t, 3> patch{ 0, 0, 0 };
  svdlr::Backend             backend{ svdlr::Backend::Auto };
  std::size_t                stride{ svdlr::kAutoPatchStride };
  bool                       magnitudeModel{ false }; // the interfaces' automatic model (the engine's is off)
  // The engine's defaults, then --preset's settings, then the options given: as the tool decides them.
  svdlr::PatchAggregation aggregation{ svdlr::LocalDenoiseOptions{}.aggregation };
  svdlr::Shrinkage        shrinkage{ svdlr::LocalDenoiseOptions{}.shrinkage };
  svdlr::RankPolicy       policy{ svdlr::LocalDenoiseOptions{}.policy };
  std::string             preset, aggregationName, shrinkageName, policyName;
};

[[noreturn]] void
Usage(const std::string & problem)
{
  std::cerr << "svdlrDenoiseBenchmark: " << problem << "\n"
            << "usage: svdlrDenoiseBenchmark --input series.f32 --size NX NY NZ NV [--mask mask.u8]\n"
            << "       [--backend auto|cpu|cuda] [--repeat N] [--patch PX PY PZ] [--preset default|dwidenoise]\n"
            << "       [--aggregation centre|overlap] [--shrinkage auto|hard|frobenius] (defaults: the engine's)\n"
            << "       [--policy mp|mp-cg|gd] [--output out.f32] [--sigma-out sigma.f32] [--rank-out rank.u16]\n"
            << "       [--threads N]   (CPU worker threads; default: all) [--stride N] (default: auto)\n"
            << "       [--magnitude-model]   (the tools' automatic magnitude model; the engine's own default is off)\n"
            << "Raw little-endian files, x fastest, then y, z (and volume). Prints one JSON line.\n";
  std::exit(2);
}

std::size_t
Number(const std::string & text)
{
  std::size_t used = 0;
  std::size_t value = 0;
  try
  {
    value = static_cast<std::size_t>(std::stoull(text, &used));
  }
  catch (const std::exception &)
  {
    used = 0;
  }
  if (used != text.size() || text.empty() || text[0] == '-')
  {
    Usage("not a count: " + text);
  }
  return value;
}

Arguments
Parse(int argc, char * argv[])
{
  Arguments  a;
  const auto value = [&](int & i, const std::string &) { return svdlr_bench::NextValue(argc, argv, i, Usage); };
  for (int i = 1; i < argc; ++i)
  {
    const std::string flag = argv[i];
    if (flag == "--input")
      a.input = value(i, flag);
    else if (flag == "--mask")
      a.mask = value(i, flag);
    else if (flag == "--output")
      a.output = value(i, flag);
    else if (flag == "--sigma-out")
      a.sigmaOut = value(i, flag);
    else if (flag == "--rank-out")
      a.rankOut = value(i, flag);
    else if (flag == "--repeat")
      a.repeat = Number(value(i, flag));
    else if (flag == "--threads")
      a.threads = static_cast<unsigned>(Number(value(i, flag)));
    else if (flag == "--size")
      for (std::size_t & extent : a.size)
        extent = Number(value(i, flag));
    else if (flag == "--patch")
      for (std::size_t & extent : a.patch)
        extent = Number(value(i, flag));
    else if (flag == "--backend")
    {
      const std::string name = value(i, flag);
      a.backend = name == "auto"  ? svdlr::Backend::Auto
                  : name == "cpu" ? svdlr::Backend::CPU
                  : name == "cuda" ? svdlr::Backend::CUDA
                                   : (Usage("bad backend " + name), svdlr::Backend::Auto);
    }
    else if (flag == "--stride")
      a.stride = Number(value(i, flag));
    else if (flag == "--magnitude-model")
      a.magnitudeModel = true;
    else if (flag == "--preset")
      a.preset = value(i, flag);
    else if (flag == "--aggregation")
      a.aggregationName = value(i, flag);
    else if (flag == "--shrinkage")
      a.shrinkageName = value(i, flag);
    else if (flag == "--policy")
      a.policyName = value(i, flag);
    else
      Usage("unknown option " + flag);
  }
  svdlr::LocalDenoiseOptions settings;
  if (!a.preset.empty())
  {
    const svdlr::DenoisePreset * preset = svdlr::FindDenoisePreset(a.preset);
    if (preset == nullptr)
      Usage("bad preset " + a.preset);
    svdlr::ApplyDenoisePreset(*preset, settings);
  }
  if (!a.aggregationName.empty() && !svdlr::ParseAggregationName(a.aggregationName, settings.aggregation))
    Usage("bad aggregation " + a.aggregationName);
  if (!a.shrinkageName.empty() && !svdlr::ParseShrinkageName(a.shrinkageName, settings.shrinkage))
    Usage("bad shrinkage " + a.shrinkageName);
  if (!a.policyName.empty() && !svdlr::ParseNoiseRank(a.policyName, settings.policy))
    Usage("bad policy " + a.policyName);
  a.aggregation = settings.aggregation;
  a.shrinkage = settings.shrinkage;
  a.policy = settings.policy;
  a.policyName = svdlr::PolicyName(settings.policy);
  if (a.input.empty() || a.size[3] == 0 || a.repeat == 0)
  {
    Usage("--input and --size are required, and --repeat must be >= 1");
  }
  return a;
}

} // namespace

int
main(int argc, char * argv[])
{
  const Arguments args = Parse(argc, argv);
  try
  {
    const std::size_t nx = args.size[0], ny = args.size[1], nz = args.size[2], nv = args.size[3];
    const std::size_t voxels = nx * ny * nz;
    const std::vector<float>        input = ReadRaw<float>(args.input, voxels * nv);
    const std::vector<std::uint8_t> mask = args.mask.empty() ? std::vector<std::uint8_t>{}
                                                             : ReadRaw<std::uint8_t>(args.mask, voxels);
    std::vector<float>         output(input.size());
    std::vector<float>         sigma(args.sigmaOut.empty() ? 0 : voxels);
    std::vector<std::uint16_t> rank(args.rankOut.empty() ? 0 : voxels);

    const std::array<std::ptrdiff_t, 4> strides{ 1, static_cast<std::ptrdiff_t>(nx),
                                                 static_cast<std::ptrdiff_t>(nx * ny),
                                                 static_cast<std::ptrdiff_t>(voxels) };
    const svdlr::SeriesView<const float> in{ input.data(), { nx, ny, nz }, nv, strides };
    const svdlr::SeriesView<float>       out{ output.data(), { nx, ny, nz }, nv, strides };
    svdlr::LocalDenoiseMaps              maps;
    maps.noiseSigma = sigma.empty() ? nullptr : sigma.data();
    maps.rank = rank.empty() ? nullptr : rank.data();
    svdlr::LocalDenoiseOptions options;
    options.policy = args.policy;
    options.patchSize = args.patch;
    options.aggregation = args.aggregation;
    options.shrinkage = args.shrinkage;
    options.backend = args.backend;
    options.threads = args.threads;
    options.mask = mask.empty() ? nullptr : mask.data();
    options.patchStride = args.stride;
    options.magnitudeNoise.automatic = args.magnitudeModel;

    // Every repeat is timed: the first includes the CUDA backend's set-up, which a single run pays too; the
    // median of several is the steady-state figure.
    std::vector<double>       times;
    svdlr::LocalDenoiseReport report;
    for (std::size_t i = 0; i < args.repeat; ++i)
    {
      const auto start = std::chrono::steady_clock::now();
      report = svdlr::DenoiseLocalLowRank(in, out, maps, options);
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }

    if (!args.output.empty())
      WriteRaw(args.output, output);
    if (!args.sigmaOut.empty())
      WriteRaw(args.sigmaOut, sigma);
    if (!args.rankOut.empty())
      WriteRaw(args.rankOut, rank);

    std::ostringstream json;
    json << "{\"program\": \"svdlrDenoiseBenchmark\", \"backend\": \"" << svdlr::ToString(report.backend)
         << "\", \"size\": [" << nx << ", " << ny << ", " << nz << ", " << nv << "], \"patch\": ["
         << report.patchSize[0] << ", " << report.patchSize[1] << ", " << report.patchSize[2]
         << "], \"aggregation\": \""
         << svdlr::AggregationName(args.aggregation) << "\", \"shrinkage\": \"" << svdlr::ShrinkageName(report.shrinkage)
         << "\", \"policy\": \"" << args.policyName << "\", \"masked\": " << (mask.empty() ? "false" : "true")
         << ", \"patches\": " << report.patches << ", \"repeat\": " << args.repeat << ", "
         << svdlr_bench::JsonTimes(times, "s", true);
    const auto & steps = report.magnitudeSeconds; // of the last repeat
    json << ", \"magnitude_model\": \"" << svdlr::MagnitudeNoiseName(report.magnitudeNoise)
         << "\", \"magnitude_steps_s\": {\"sigma_pass\": " << steps.sigmaPass << ", \"stabilise\": " << steps.stabilise
         << ", \"denoise\": " << steps.denoise << ", \"inverse\": " << steps.inverse << "}, \"stride\": "
         << report.patchStride << ", \"notes\": \"";
    for (const char c : report.notes)
    {
      json << (c == '"' || c == '\\' ? "\\" : "") << c;
    }
    json << "\"}";
    std::cout << json.str() << std::endl;
  }
  catch (const std::exception & error)
  {
    std::cerr << "svdlrDenoiseBenchmark: " << error.what() << std::endl;
    return 1;
  }
  return 0;
}
