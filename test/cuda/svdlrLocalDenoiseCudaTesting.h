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
// What the local denoiser's CUDA tests share: random low-rank series in any layout, runs of either backend or of
// the tuned CUDA backend, and the GPU-equals-CPU comparison (svdlrLocalDenoiseCudaGTest.cxx,
// svdlrLocalDenoiseKeptRankGTest.cxx).
#ifndef svdlr_LocalDenoiseCudaTesting_h
#define svdlr_LocalDenoiseCudaTesting_h

#include "svdlrCudaTestFixture.h"

#include "cuda/svdlrLocalDenoiseCuda.h"
#include "cuda/svdlrLocalDenoisePlan.h"
#include "svdlr/Engine.h"
#include "svdlr/LocalDenoise.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace svdlr
{
namespace test
{
using svdlr::LocalDenoiseMaps;
using svdlr::LocalDenoiseOptions;
using svdlr::PatchAggregation;
using svdlr::SeriesView;

/** The configuration the CUDA denoiser's tests were written for, dwidenoise's with the Veraart estimator (centre
 * voxel, hard threshold, Exp1), pinned so that a change of the defaults moves none of them; each test varies it
 * where it says so. LocalDenoiseCuda.DefaultsEqualCpu runs the defaults themselves. */
inline LocalDenoiseOptions
WrittenForOptions()
{
  LocalDenoiseOptions options;
  options.policy = svdlr::RankPolicy::MarchenkoPastur(svdlr::MarchenkoPasturEstimator::Veraart2016);
  options.aggregation = PatchAggregation::CentreVoxel;
  options.shrinkage = svdlr::Shrinkage::Hard;
  return options;
}

/** A series in host memory with its strides (itk::Image order unless made otherwise). */
struct Series
{
  std::array<std::size_t, 3>    size{};
  std::size_t                   volumes{ 0 };
  std::array<std::ptrdiff_t, 4> strides{};
  std::vector<float>            data;

  std::size_t
  Voxels() const
  {
    return size[0] * size[1] * size[2];
  }
  SeriesView<const float>
  View() const
  {
    return { data.data(), size, volumes, strides };
  }
  SeriesView<float>
  MutableView()
  {
    return { data.data(), size, volumes, strides };
  }
  float &
  At(std::size_t x, std::size_t y, std::size_t z, std::size_t t)
  {
    return data[x * strides[0] + y * strides[1] + z * strides[2] + t * strides[3]];
  }
  float
  At(std::size_t x, std::size_t y, std::size_t z, std::size_t t) const
  {
    return data[x * strides[0] + y * strides[1] + z * strides[2] + t * strides[3]];
  }
  /** Same size and strides, every element NaN: an element nobody writes shows. */
  Series
  Poisoned() const
  {
    Series out = *this;
    std::fill(out.data.begin(), out.data.end(), std::numeric_limits<float>::quiet_NaN());
    return out;
  }
};

/** A zero series in itk::Image order (x fastest, volumes outermost). */
inline Series
ZeroSeries(const std::array<std::size_t, 3> & size, std::size_t volumes)
{
  Series s;
  s.size = size;
  s.volumes = volumes;
  const auto nx = static_cast<std::ptrdiff_t>(size[0]);
  const auto ny = static_cast<std::ptrdiff_t>(size[1]);
  const auto nz = static_cast<std::ptrdiff_t>(size[2]);
  s.strides = { 1, nx, nx * ny, nx * ny * nz };
  s.data.assign(s.Voxels() * volumes, 0.0F);
  return s;
}

/** `rank` smooth spatial maps times smooth time courses, amplitude ~10, plus Gaussian noise of σ(x) that varies
 * slowly across the image from 0.5 to 1 (as in real diffusion data); `clean`, when given, gets the signal alone. */
inline Series
LowRankPlusNoise(std::array<std::size_t, 3> size, std::size_t volumes, std::size_t rank, Random & random,
                 Series * clean = nullptr)
{
  Series              s = ZeroSeries(size, volumes);
  std::vector<double> phase(3 * rank), decay(rank);
  for (double & p : phase)
  {
    p = random.Uniform(0.0, 6.28);
  }
  for (double & d : decay)
  {
    d = random.Uniform(0.5, 4.0);
  }
  for (std::size_t z = 0; z < size[2]; ++z)
  {
    for (std::size_t y = 0; y < size[1]; ++y)
    {
      for (std::size_t x = 0; x < size[0]; ++x)
      {
        const double sigma = 0.5 + 0.5 * static_cast<double>(x + y) / static_cast<double>(size[0] + size[1]);
        for (std::size_t t = 0; t < volumes; ++t)
        {
          double value = 0.0;
          for (std::size_t k = 0; k < rank; ++k)
          {
            const double spatial = 10.0 / (k + 1) *
                                   (1.5 + std::sin(0.3 * (k + 1) * x + phase[3 * k]) *
                                            std::cos(0.25 * (k + 1) * y + phase[3 * k + 1]) *
                                            std::cos(0.2 * z + phase[3 * k + 2]));
            const double temporal = std::exp(-decay[k] * static_cast<double>(t) / volumes) *
                                    (k % 2 ? std::cos(3.0 * t / volumes + k) : 1.0);
            value += spatial * temporal;
          }
          s.At(x, y, z, t) = static_cast<float>(value + sigma * random.Normal());
          if (clean != nullptr)
          {
            clean->data.push_back(static_cast<float>(value));
          }
        }
      }
    }
  }
  if (clean != nullptr)
  {
    clean->size = s.size;
    clean->volumes = volumes;
    clean->strides = { static_cast<std::ptrdiff_t>(volumes), static_cast<std::ptrdiff_t>(volumes * size[0]),
                       static_cast<std::ptrdiff_t>(volumes * size[0] * size[1]), 1 };
  }
  return s;
}

/** The same series in a buffer of `elements` with other strides; the gaps hold NaN, which no voxel may read. */
inline Series
Restrided(const Series & in, const std::array<std::ptrdiff_t, 4> & strides, std::size_t elements)
{
  Series out;
  out.size = in.size;
  out.volumes = in.volumes;
  out.strides = strides;
  out.data.assign(elements, std::numeric_limits<float>::quiet_NaN());
  for (std::size_t z = 0; z < in.size[2]; ++z)
    for (std::size_t y = 0; y < in.size[1]; ++y)
      for (std::size_t x = 0; x < in.size[0]; ++x)
        for (std::size_t t = 0; t < in.volumes; ++t)
        {
          out.At(x, y, z, t) = in.At(x, y, z, t);
        }
  return out;
}

/** The same series with each voxel's volumes adjacent (an itk::VectorImage). */
inline Series
VolumesInner(const Series & in)
{
  const auto nv = static_cast<std::ptrdiff_t>(in.volumes);
  const auto nx = static_cast<std::ptrdiff_t>(in.size[0]);
  const auto ny = static_cast<std::ptrdiff_t>(in.size[1]);
  return Restrided(in, { nv, nv * nx, nv * nx * ny, 1 }, in.data.size());
}

struct Result
{
  Series                     output;
  std::vector<float>         sigma;
  std::vector<std::uint16_t> rank;
  svdlr::LocalDenoiseReport  report;
};

/** As if the GPU had room for little more than one plane of `input` at a time: two slab slots of one centre plane
 * (a window of the patch's extent in planes) and 100 KB for a batch, for the patch `cpu` (the CPU's run) used. */
inline svdlr::detail::LocalDenoiseCudaTuning
OnePlanePerSlabTuning(const Series & input, const Result & cpu, const LocalDenoiseOptions & options)
{
  svdlr::detail::LocalDenoiseShape shape;
  shape.nx = static_cast<std::int64_t>(input.size[0]);
  shape.ny = static_cast<std::int64_t>(input.size[1]);
  shape.nz = static_cast<std::int64_t>(input.size[2]);
  shape.volumes = static_cast<std::int64_t>(input.volumes);
  shape.ex = cpu.report.patchSize[0], shape.ey = cpu.report.patchSize[1], shape.ez = cpu.report.patchSize[2];
  shape.patchVoxels =
    options.patchShape == svdlr::PatchShape::Sphere ? static_cast<std::int64_t>(cpu.report.patchVoxels) : 0;
  shape.overlap = svdlr::IsOverlapAggregation(options.aggregation);
  shape.maxVectors = shape.volumes;
  svdlr::detail::LocalDenoiseCudaTuning tuning;
  tuning.availableBytes = 2 * svdlr::detail::SlabSlotBytes(shape, shape.ez) + 100 * 1024;
  return tuning;
}

inline Result
Denoise(const Series & input, LocalDenoiseOptions options, svdlr::Backend backend)
{
  Result result;
  result.output = input.Poisoned();
  result.sigma.assign(input.Voxels(), std::numeric_limits<float>::quiet_NaN());
  result.rank.assign(input.Voxels(), 0xFFFF);
  options.backend = backend;
  result.report = svdlr::DenoiseLocalLowRank(
    input.View(), result.output.MutableView(), { result.sigma.data(), result.rank.data() }, options);
  return result;
}

/** The CUDA backend with its knobs (the front end's validation is skipped: the requests here are valid). */
inline Result
DenoiseTuned(const Series & input, const LocalDenoiseOptions & options, const std::array<std::size_t, 3> & patch,
             const svdlr::detail::LocalDenoiseCudaTuning & tuning, svdlr::detail::LocalDenoiseCudaTrace & trace)
{
  Result result;
  result.output = input.Poisoned();
  result.sigma.assign(input.Voxels(), std::numeric_limits<float>::quiet_NaN());
  result.rank.assign(input.Voxels(), 0xFFFF);
  svdlr::detail::RunLocalDenoiseCudaTuned(input.View(), result.output.MutableView(),
                                          { result.sigma.data(), result.rank.data() }, options, patch, result.report,
                                          tuning, &trace);
  return result;
}

inline double
RootMeanSquare(const std::vector<float> & values)
{
  double sum = 0.0;
  for (const float v : values)
  {
    sum += static_cast<double>(v) * v;
  }
  return std::sqrt(sum / std::max<std::size_t>(values.size(), 1));
}

/** How far apart two results are: the largest differences of a value and of σ, each over the series' rms, and the
 * voxels whose rank differs (what test/seed-spread records). */
struct ResultDistance
{
  double      value{ 0.0 };
  double      sigma{ 0.0 };
  std::size_t ranks{ 0 };
};

/** GPU equals CPU: the same ranks everywhere; σ and every denoised value to float rounding (the two backends run
 * the same float64 algorithm, LAPACK's dsytrd/dsterf/dstein on the CPU and ours on the GPU). */
inline ResultDistance
ExpectSameResult(const Result & gpu, const Result & cpu, const Series & input)
{
  EXPECT_EQ(gpu.output.data.size(), cpu.output.data.size());
  if (gpu.output.data.size() != cpu.output.data.size())
  {
    return { INFINITY, INFINITY, input.Voxels() };
  }
  EXPECT_EQ(gpu.report.patches, cpu.report.patches);
  const double scale = RootMeanSquare(input.data);
  std::size_t  rankDifferences = 0, sigmaDifferences = 0, valueDifferences = 0;
  double       worstValue = 0.0, worstSigma = 0.0;
  for (std::size_t v = 0; v < input.Voxels(); ++v)
  {
    rankDifferences += gpu.rank[v] != cpu.rank[v];
    const double sigmaError = std::abs(static_cast<double>(gpu.sigma[v]) - cpu.sigma[v]);
    worstSigma = std::max(worstSigma, sigmaError);
    sigmaDifferences += !(sigmaError <= 1e-6 * (std::abs(cpu.sigma[v]) + 1e-3 * scale));
  }
  for (std::size_t i = 0; i < cpu.output.data.size(); ++i)
  {
    const double a = gpu.output.data[i];
    const double b = cpu.output.data[i];
    const double error = std::abs(a - b);
    worstValue = std::max(worstValue, std::isnan(error) ? INFINITY : error);
    valueDifferences += !(error <= 1e-6 * std::abs(b) + 1e-6 * scale);
  }
  EXPECT_EQ(rankDifferences, 0u) << "voxels whose rank differs";
  EXPECT_EQ(sigmaDifferences, 0u) << "voxels whose σ differs beyond float rounding (worst " << worstSigma << ")";
  EXPECT_EQ(valueDifferences, 0u) << "values that differ beyond float rounding (worst " << worstValue
                                  << ", series rms " << scale << ")";
  return { worstValue / scale, worstSigma / scale, rankDifferences };
}

/** The GPU run with `tuning` equals the CPU's on `input` (ExpectSameResult, whose distance it returns); `trace` tells
 * the caller which path the GPU took. */
inline ResultDistance
ExpectTunedEqualsCpu(const Series & input, const LocalDenoiseOptions & options,
                     const svdlr::detail::LocalDenoiseCudaTuning & tuning, svdlr::detail::LocalDenoiseCudaTrace & trace)
{
  const Result cpu = Denoise(input, options, svdlr::Backend::CPU);
  return ExpectSameResult(DenoiseTuned(input, options, cpu.report.patchSize, tuning, trace), cpu, input);
}

/** `result` with its output moved into the layout of `reference` (same size), for comparing results of views with
 * other strides. */
inline Result
InLayoutOf(const Result & result, const Series & reference)
{
  Result moved = result;
  moved.output = Restrided(result.output, reference.strides, reference.data.size());
  return moved;
}

/** A known σ map of random values in [0.5, 1], the range of the noise of LowRankPlusNoise. */
inline std::vector<float>
KnownSigmaMap(const Series & input, Random & random)
{
  std::vector<float> sigma(input.Voxels());
  for (float & s : sigma)
  {
    s = static_cast<float>(random.Uniform(0.5, 1.0));
  }
  return sigma;
}

/** A random ball of voxels, the rest outside. */
inline std::vector<std::uint8_t>
BallMask(const std::array<std::size_t, 3> & size, Random & random)
{
  std::vector<std::uint8_t> mask(size[0] * size[1] * size[2]);
  const double              cx = size[0] * random.Uniform(0.4, 0.6), cy = size[1] * random.Uniform(0.4, 0.6);
  const double              cz = size[2] * random.Uniform(0.4, 0.6);
  const double              radius = 0.4 * std::min({ size[0], size[1], size[2] }) + 2.0;
  for (std::size_t z = 0, v = 0; z < size[2]; ++z)
    for (std::size_t y = 0; y < size[1]; ++y)
      for (std::size_t x = 0; x < size[0]; ++x, ++v)
      {
        const double d = std::hypot(x - cx, y - cy, z - cz);
        mask[v] = d < radius ? 1 : 0;
      }
  return mask;
}

class LocalDenoiseCuda : public SVDLowRankEngineCuda
{
protected:
  void
  ExpectGpuEqualsCpu(const Series & input, const LocalDenoiseOptions & options)
  {
    const Result cpu = Denoise(input, options, svdlr::Backend::CPU);
    const Result gpu = Denoise(input, options, svdlr::Backend::CUDA);
    EXPECT_EQ(gpu.report.backend, svdlr::Backend::CUDA);
    ExpectSameResult(gpu, cpu, input);
  }

  Random m_Random;
};

} // namespace test
} // namespace svdlr

#endif
