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
#ifndef SVDLowRankDenoiseSummary_h
#define SVDLowRankDenoiseSummary_h

// The summary SVDLowRankDenoiseSeries prints on stdout: what was denoised, where and how, and the noise level and
// ranks the patches found inside the mask (median and range), one line each, for people and for scripts. And where
// the wall time goes, step by step: most of a run on a GPU is spent outside the filter (reading and writing .nii.gz,
// the raw checks, verifying what was written), and a summary that gives only the filter's time hides it. One line,
// "steps:", that a benchmark parses (benchmarks/denoise/end_to_end.py).

#include "SVDLowRankDenoiseOptions.h"

#include "svdlr/Names.h"

#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <iomanip>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace svdlr_tools
{

struct StepTimes
{
  double read{ 0.0 };   // the inputs decoded into images
  double checks{ 0.0 }; // the raw checks (truncation, NaN and Inf) and the checks on the images
  double filter{ 0.0 };
  double write{ 0.0 };  // the outputs written under their temporary names, header fields and sidecars included
  double verify{ 0.0 }; // the outputs verified and renamed into place
};

struct DenoiseSummary
{
  std::string                                 input;
  std::array<std::size_t, 3>                  grid{ { 0, 0, 0 } };
  std::size_t                                 volumes{ 0 }; // every echo's, stacked
  std::size_t                                 echoes{ 1 };
  itk::SVDLowRankReconstructionEnums::Backend backend{ itk::SVDLowRankReconstructionEnums::Backend::CPU };
  std::array<std::size_t, 3>                  patch{ { 0, 0, 0 } }; // a sphere's: its box
  double                                      patchRadius{ 0.0 };       // a sphere's; 0 for a cuboid
  std::size_t                                 patchVoxels{ 0 };
  std::size_t                                 patchStride{ 0 }; // the stride used (the default resolved)
  std::string magnitudeNoise{ "none" }; // the magnitude model used (svdlr::MagnitudeNoiseName: automatic resolved)
  const DenoiseToolOptions *                  options{ nullptr };
  const unsigned char *                       mask{ nullptr }; // grid voxels, x fastest; null: every voxel
  const float *                               sigma{ nullptr };
  const unsigned short *                      rank{ nullptr };
  double                                      seconds{ 0.0 };
  StepTimes                                   steps;                // the run's steps, the filter's included
  double                                      processSeconds{ 0.0 }; // since the process started
  std::size_t                                 peakHostBytes{ 0 };   // the process's largest resident set (VmHWM)
  std::size_t                                 peakDeviceBytes{ 0 }; // the CUDA denoiser's buffers; 0 on the CPU
  std::string                                 notes;                // the filter's, e.g. why the CPU was used
};

/** The largest resident set this process has had so far. Linux's VmHWM first: getrusage's ru_maxrss also counts
 * the parent's resident set copied at fork, before exec (a tool started from a Python script holding a series would
 * report the script's size); getrusage where there is no /proc. */
inline std::size_t
PeakResidentBytes()
{
  std::ifstream status("/proc/self/status");
  std::string   line;
  while (std::getline(status, line))
  {
    if (line.rfind("VmHWM:", 0) == 0)
    {
      return static_cast<std::size_t>(std::stoull(line.substr(6))) * 1024; // "VmHWM:   123456 kB"
    }
  }
  rusage usage{};
  return getrusage(RUSAGE_SELF, &usage) == 0 ? static_cast<std::size_t>(usage.ru_maxrss) * 1024 : 0;
}

/** "812.3 MiB" */
inline std::string
DescribeBytes(std::size_t bytes)
{
  std::ostringstream text;
  text.setf(std::ios::fixed);
  text.precision(1);
  text << static_cast<double>(bytes) / (1024.0 * 1024.0) << " MiB";
  return text.str();
}

/** The values of `values` (grid voxels, x fastest) where `mask` is not 0 (every voxel when null). */
template <typename T>
std::vector<double>
ValuesInMask(const T * values, const unsigned char * mask, std::size_t voxels)
{
  std::vector<double> inside;
  inside.reserve(voxels);
  for (std::size_t v = 0; v < voxels; ++v)
  {
    if (mask == nullptr || mask[v] != 0)
    {
      inside.push_back(static_cast<double>(values[v]));
    }
  }
  return inside;
}

/** "median M, range [A, B]"; the median of an even count is its upper middle value. */
inline std::string
DescribeDistribution(std::vector<double> values)
{
  if (values.empty())
  {
    return "none (the mask is empty)";
  }
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  const double lowest = *low, highest = *high;
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  std::ostringstream text;
  text << "median " << values[values.size() / 2] << ", range [" << lowest << ", " << highest << "]";
  return text.str();
}

inline std::string
DescribePolicy(const DenoiseToolOptions & options, const std::string & magnitudeNoise)
{
  std::string text = options.policy.kind == svdlr::RankPolicy::Kind::FixedRank
                       ? "fixed rank " + std::to_string(options.policy.rank)
                       : std::string(svdlr::NoiseRankDescription(options.policy));
  if (!options.noiseSigmaMap.empty())
  {
    text += ", known sigma from " + options.noiseSigmaMap;
  }
  else if (options.noiseSigma > 0.0)
  {
    std::ostringstream sigma;
    sigma << options.noiseSigma;
    const bool gfactor = !options.complex.gfactor.empty() || options.complex.estimateGFactor;
    text += ", known sigma " + sigma.str() + (gfactor ? " where g = 1" : "");
  }
  if (!options.complex.gfactor.empty())
  {
    text += ", g-factor from " + options.complex.gfactor + " (series divided by it, noise map sigma x g)";
  }
  if (options.complex.estimateGFactor)
  {
    text += ", g-factor estimated by a first MP-PCA pass (series divided by it, noise map sigma x g)";
  }
  text += options.shrinkage == itk::LocalLowRankDenoisingEnums::Shrinkage::OptimalFrobenius
            ? ", optimal Frobenius shrinkage"
            : ", hard threshold";
  if (magnitudeNoise != "none")
  {
    text += ", magnitude model " + magnitudeNoise + " (" +
            (options.complex.coils == 1 ? std::string("Rician") : std::to_string(options.complex.coils) + " coils") +
            ")";
  }
  return text;
}

/** "5 x 5 x 5 voxels", or "sphere of radius 2.45, 81 voxels (box 5 x 5 x 5)". */
inline std::string
DescribePatch(const DenoiseSummary & summary)
{
  std::ostringstream text;
  if (summary.patchRadius > 0.0)
  {
    text << "sphere of radius " << std::setprecision(3) << summary.patchRadius << ", " << summary.patchVoxels
         << " voxels (box " << summary.patch[0] << " x " << summary.patch[1] << " x " << summary.patch[2] << ")";
  }
  else
  {
    text << summary.patch[0] << " x " << summary.patch[1] << " x " << summary.patch[2] << " voxels";
  }
  return text.str();
}

inline const char *
DescribeAggregation(itk::LocalLowRankDenoisingEnums::Aggregation aggregation)
{
  switch (aggregation)
  {
    case itk::LocalLowRankDenoisingEnums::Aggregation::CentreVoxel:
      return "centre voxel";
    case itk::LocalLowRankDenoisingEnums::Aggregation::OverlapRankWeighted:
      return "overlap weighted by 1/(1+rank)";
    case itk::LocalLowRankDenoisingEnums::Aggregation::OverlapGaussianWeighted:
      return "overlap weighted by a Gaussian of the distance (FWHM 2 voxels)";
    default:
      return "overlap average";
  }
}

inline void
PrintDenoiseSummary(std::ostream & out, const DenoiseSummary & summary)
{
  const DenoiseToolOptions & options = *summary.options;
  const std::size_t          voxels = summary.grid[0] * summary.grid[1] * summary.grid[2];
  const auto                 sigma = ValuesInMask(summary.sigma, summary.mask, voxels);
  const bool                 sigmaKnown = options.policy.kind != svdlr::RankPolicy::Kind::FixedRank ||
                          options.noiseSigma > 0.0 || !options.noiseSigmaMap.empty();
  const std::string where = summary.mask != nullptr
                              ? " (inside the mask: " + std::to_string(sigma.size()) + " of " +
                                  std::to_string(voxels) + " voxels)"
                              : " (all " + std::to_string(voxels) + " voxels)";
  out << "input:    " << summary.input << " (" << summary.grid[0] << " x " << summary.grid[1] << " x "
      << summary.grid[2] << " voxels, " << summary.volumes << " volumes)\n"
      << "backend:  " << summary.backend << "\n"
      << "patch:    " << DescribePatch(summary) << ", stride " << summary.patchStride << ", "
      << DescribeAggregation(options.aggregation) << "\n"
      << "policy:   " << DescribePolicy(options, summary.magnitudeNoise) << "\n"
      << "sigma:    " << (sigmaKnown ? DescribeDistribution(sigma) + where : "not estimated (fixed rank)") << "\n"
      << "rank:     " << DescribeDistribution(ValuesInMask(summary.rank, summary.mask, voxels)) << "\n"
      << "time:     " << summary.seconds << " s (filter only)\n";
  // "steps:    read 1.52 s, checks 0.31 s, filter 8.40 s, write 2.10 s, verify 0.05 s, process 12.6 s"
  const auto flags = out.flags();
  const auto precision = out.precision();
  out.setf(std::ios::fixed);
  out.precision(2);
  const StepTimes & steps = summary.steps;
  out << "steps:    read " << steps.read << " s, checks " << steps.checks << " s, filter " << steps.filter
      << " s, write " << steps.write << " s, verify " << steps.verify << " s, process " << summary.processSeconds
      << " s\n";
  out.flags(flags);
  out.precision(precision);
  out << "memory:   peak host " << DescribeBytes(summary.peakHostBytes) << " (resident)";
  if (summary.peakDeviceBytes > 0)
  {
    out << ", GPU " << DescribeBytes(summary.peakDeviceBytes) << " (the denoiser's buffers)";
  }
  out << "\n"
      << "output:   " << options.output << "\n";
  if (!options.noiseMap.empty())
  {
    out << "noise map: " << options.noiseMap << "\n";
  }
  if (!options.rankMap.empty())
  {
    out << "rank map: " << options.rankMap << "\n";
  }
  if (!options.gfactorMap.empty())
  {
    out << "g-factor map: " << options.gfactorMap << "\n";
  }
  if (!summary.notes.empty())
  {
    out << "note:     " << summary.notes << "\n";
  }
}

} // namespace svdlr_tools

#endif
