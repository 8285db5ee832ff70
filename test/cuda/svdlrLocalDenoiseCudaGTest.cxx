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
// The local denoiser's CUDA backend against its CPU backend, which defines the semantics: the same σ map, rank
// map and denoised series, to float rounding, on fresh random low-rank-plus-noise series, for both aggregations,
// with and without a mask, with a known σ map (every noise policy, NORDIC's threshold too), with the residual
// noise estimator and the σ floor correction of a magnitude, with a g-factor map, in both memory layouts and in place, with the series
// cut into many slabs and batches, and with our eigen-solver or cuSOLVER's. The slab plan's invariants are checked
// on the host (no GPU needed); every other test skips, saying why, without a usable CUDA device.
#include "svdlrLocalDenoiseCudaTesting.h"

#include "cuda/svdlrLocalDenoiseCuda.h"
#include "cuda/svdlrLocalDenoisePlan.h"
#include "svdlr/Engine.h"
#include "svdlr/LocalDenoise.h"
#include "denoise/svdlrPatchGeometry.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace
{
using namespace svdlr::test;
using svdlr::LocalDenoiseMaps;
using svdlr::LocalDenoiseOptions;
using svdlr::PatchAggregation;
using svdlr::SeriesView;

TEST_F(LocalDenoiseCuda, MarchenkoPasturCentreVoxelEqualsCpuWhenVolumesAreTheSmallerSide)
{
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series input = LowRankPlusNoise({ 17, 15, 13 }, 30, 4, m_Random); // default patch 5x5x5: n = 30 volumes
  ExpectGpuEqualsCpu(input, WrittenForOptions());
}

TEST_F(LocalDenoiseCuda, MarchenkoPasturCentreVoxelEqualsCpuWhenVoxelsAreTheSmallerSide)
{
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series        input = LowRankPlusNoise({ 14, 13, 12 }, 40, 3, m_Random);
  LocalDenoiseOptions options = WrittenForOptions();
  options.patchSize = { 3, 3, 3 }; // n = 27 voxels < 40 volumes
  options.policy = svdlr::RankPolicy::MarchenkoPastur(svdlr::MarchenkoPasturEstimator::CorderoGrande2019);
  ExpectGpuEqualsCpu(input, options);
}

// The approximation holds its factor F (rows or volumes x rank) in shared memory a chunk at a time: ranks large
// enough for several chunks on either side, overlap-averaged, equal the CPU (1,024 doubles a chunk).
TEST_F(LocalDenoiseCuda, ApproximationsWhoseFactorTakesSeveralChunksEqualCpu)
{
  SCOPED_TRACE(m_Random.SeedTrace());
  LocalDenoiseOptions options = WrittenForOptions();
  options.aggregation = PatchAggregation::OverlapAverage;
  options.patchSize = { 7, 7, 7 };
  options.policy = svdlr::RankPolicy::Fixed(50); // volume side: F is 343 rows x 50, 18 chunks of 20 rows
  ExpectGpuEqualsCpu(LowRankPlusNoise({ 11, 10, 9 }, 60, 6, m_Random), options);
  options.patchSize = { 3, 3, 3 };
  options.policy = svdlr::RankPolicy::Fixed(27); // voxel side: F is 700 volumes x 27, 19 chunks of 37 volumes
  ExpectGpuEqualsCpu(LowRankPlusNoise({ 9, 8, 7 }, 700, 5, m_Random), options);
}

// Issue 23, row 5: a series constant over time (every voxel 1 or 2) comes back unchanged with sigma 0 and rank 1 on
// the GPU as on the CPU (the noise rules of svdlrNoiseThreshold.h are shared by both).
TEST_F(LocalDenoiseCuda, SeriesConstantOverTimeComesBackUnchangedAndEqualsCpu)
{
  SCOPED_TRACE(m_Random.SeedTrace());
  Series input = LowRankPlusNoise({ 12, 11, 10 }, 30, 1, m_Random);
  for (std::size_t i = 0; i < input.data.size(); ++i)
  {
    input.data[i] = 1.0f;
  }
  for (std::size_t v = 0; v < input.Voxels(); v += 3)
  {
    const std::size_t x = v % input.size[0], y = v / input.size[0] % input.size[1], z = v / (input.size[0] * input.size[1]);
    for (std::size_t t = 0; t < input.volumes; ++t)
    {
      input.data[x * input.strides[0] + y * input.strides[1] + z * input.strides[2] + t * input.strides[3]] = 2.0f;
    }
  }
  for (const auto policy : { svdlr::RankPolicy::MarchenkoPastur(), svdlr::RankPolicy::GavishDonoho() })
  {
    LocalDenoiseOptions options = WrittenForOptions();
    options.policy = policy;
    ExpectGpuEqualsCpu(input, options);
    const Result gpu = Denoise(input, options, svdlr::Backend::CUDA);
    for (std::size_t i = 0; i < input.data.size(); ++i)
    {
      ASSERT_NEAR(gpu.output.data[i], input.data[i], 1e-5f) << "value " << i;
    }
    for (std::size_t v = 0; v < input.Voxels(); ++v)
    {
      ASSERT_EQ(gpu.sigma[v], 0.0f) << "voxel " << v;
      ASSERT_EQ(gpu.rank[v], 1) << "voxel " << v;
    }
  }
}

TEST_F(LocalDenoiseCuda, OverlapAverageWithMaskAndStrideEqualsCpu)
{
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series                    input = LowRankPlusNoise({ 16, 15, 14 }, 24, 3, m_Random);
  const std::vector<std::uint8_t> mask = BallMask(input.size, m_Random);
  LocalDenoiseOptions             options = WrittenForOptions();
  options.aggregation = PatchAggregation::OverlapAverage;
  options.mask = mask.data();
  ExpectGpuEqualsCpu(input, options);
  options.patchStride = 2;
  ExpectGpuEqualsCpu(input, options);
}

TEST_F(LocalDenoiseCuda, CentreVoxelWithMaskCopiesOutsideAndEqualsCpu)
{
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series                    input = LowRankPlusNoise({ 15, 16, 11 }, 27, 3, m_Random);
  const std::vector<std::uint8_t> mask = BallMask(input.size, m_Random);
  LocalDenoiseOptions             options = WrittenForOptions();
  options.mask = mask.data();
  const Result gpu = Denoise(input, options, svdlr::Backend::CUDA);
  ExpectSameResult(gpu, Denoise(input, options, svdlr::Backend::CPU), input);
  for (std::size_t v = 0; v < input.Voxels(); ++v)
  {
    if (!mask[v])
    {
      ASSERT_EQ(gpu.output.data[v], input.data[v]) << "voxel " << v << " outside the mask";
      ASSERT_EQ(gpu.sigma[v], 0.0f);
      ASSERT_EQ(gpu.rank[v], 0);
    }
  }
}

TEST_F(LocalDenoiseCuda, KnownSigmaMapEqualsCpuForEveryPolicy)
{
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series             input = LowRankPlusNoise({ 13, 14, 12 }, 26, 3, m_Random);
  const std::vector<float> sigma = KnownSigmaMap(input, m_Random);
  for (const auto policy : { svdlr::RankPolicy::MarchenkoPastur(), svdlr::RankPolicy::GavishDonoho(),
                             svdlr::RankPolicy::Fixed(3) })
  {
    LocalDenoiseOptions options = WrittenForOptions();
    options.policy = policy;
    options.noiseSigma = sigma.data();
    options.shrinkage = svdlr::Shrinkage::OptimalFrobenius;
    ExpectGpuEqualsCpu(input, options);
  }
}

// Issue 21, item 8: NORDIC's threshold with a known σ map (as from noise volumes) gives the same ranks on the GPU
// as on the CPU and values within float rounding (ExpectSameResult: 1e-6 relative, inside the 1e-5), for
// both aggregations and shrinkages; and two GPU runs choose the same ranks (no random draws anywhere) and give the
// same bits with the centre voxel. Overlap averaging adds each voxel's patches with float64 atomics, in an order that
// may change from run to run: there the repeat is bounded by that rounding instead.
TEST_F(LocalDenoiseCuda, NordicWithKnownSigmaMapEqualsCpuAndRepeatsBitForBit)
{
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series             input = LowRankPlusNoise({ 13, 14, 12 }, 40, 3, m_Random);
  const std::vector<float> sigma = KnownSigmaMap(input, m_Random);
  for (const auto aggregation : { PatchAggregation::CentreVoxel, PatchAggregation::OverlapAverage })
  {
    for (const auto shrinkage : { svdlr::Shrinkage::Hard, svdlr::Shrinkage::OptimalFrobenius })
    {
      LocalDenoiseOptions options = WrittenForOptions();
      options.policy = svdlr::RankPolicy::Nordic();
      options.noiseSigma = sigma.data();
      options.aggregation = aggregation;
      options.shrinkage = shrinkage;
      ExpectGpuEqualsCpu(input, options);
      const Result first = Denoise(input, options, svdlr::Backend::CUDA);
      const Result second = Denoise(input, options, svdlr::Backend::CUDA);
      EXPECT_EQ(first.rank, second.rank);
      if (aggregation == PatchAggregation::CentreVoxel)
      {
        EXPECT_EQ(first.output.data, second.output.data);
      }
      else
      {
        ASSERT_EQ(first.output.data.size(), second.output.data.size());
        for (std::size_t i = 0; i < first.output.data.size(); ++i)
        {
          ASSERT_NEAR(first.output.data[i], second.output.data[i], 1e-6 * (1.0 + std::fabs(first.output.data[i])))
            << "element " << i;
        }
      }
    }
  }
}

TEST_F(LocalDenoiseCuda, OtherPoliciesAndShrinkageEqualCpu)
{
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series input = LowRankPlusNoise({ 12, 13, 11 }, 28, 4, m_Random);
  for (const auto policy : { svdlr::RankPolicy::GavishDonoho(), svdlr::RankPolicy::GavishDonoho(0.8),
                             svdlr::RankPolicy::Energy(0.95), svdlr::RankPolicy::Fixed(2) })
  {
    LocalDenoiseOptions options = WrittenForOptions();
    options.policy = policy;
    options.aggregation = PatchAggregation::OverlapAverage;
    ExpectGpuEqualsCpu(input, options);
  }
  LocalDenoiseOptions shrunk = WrittenForOptions();
  shrunk.shrinkage = svdlr::Shrinkage::OptimalFrobenius;
  ExpectGpuEqualsCpu(input, shrunk);
}

// Demeaning (LocalDenoiseOptions::volumeGroups) happens on the host before either backend; the GPU's rank rule gets
// the dimensions it removed (PatchRankRule::removed), so its σ, ranks and series equal the CPU's, for patches with
// more voxels than volumes (zero eigenvalues left out) and fewer (none to leave out).
TEST_F(LocalDenoiseCuda, DemeanedSeriesEqualsCpu)
{
  SCOPED_TRACE(m_Random.SeedTrace());
  Series                     input = LowRankPlusNoise({ 14, 13, 12 }, 30, 3, m_Random);
  std::vector<std::uint32_t> groups(input.volumes);
  for (std::size_t t = 0; t < groups.size(); ++t)
  {
    groups[t] = t % 6 == 0 ? 0u : 1u + static_cast<std::uint32_t>(t % 2);
  }
  for (std::size_t z = 0; z < input.size[2]; ++z)
    for (std::size_t y = 0; y < input.size[1]; ++y)
      for (std::size_t x = 0; x < input.size[0]; ++x)
        for (std::size_t t = 0; t < input.volumes; ++t)
        {
          const double offset = 30.0 * (1.0 + 0.3 * std::sin(0.3 * double(x) + 0.2 * double(y + z))) / (1.0 + groups[t]);
          input.At(x, y, z, t) += static_cast<float>(offset);
        }
  for (const std::array<std::size_t, 3> patch : { std::array<std::size_t, 3>{ 5, 5, 5 },
                                                  std::array<std::size_t, 3>{ 3, 3, 3 } })
  {
    LocalDenoiseOptions options;
    options.patchSize = patch;
    options.volumeGroups = groups.data();
    ExpectGpuEqualsCpu(input, options);
  }
}

// The g-factor step (src/noise/svdlrGFactor.cxx) is host code around either backend: the divided series and the σ map
// times g come out alike, with σ estimated and with a known σ (the σ where g = 1) and NORDIC's threshold.
TEST_F(LocalDenoiseCuda, GFactorMapEqualsCpuWithEstimatedAndKnownSigma)
{
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series       input = LowRankPlusNoise({ 14, 13, 12 }, 30, 3, m_Random);
  std::vector<float> gfactor(input.size[0] * input.size[1] * input.size[2]);
  for (std::size_t v = 0; v < gfactor.size(); ++v)
  {
    gfactor[v] = 1.0f + float(v % input.size[0]) / float(input.size[0]); // 1 to 2 along x
  }
  LocalDenoiseOptions options;
  options.gfactor = gfactor.data();
  ExpectGpuEqualsCpu(input, options);
  const std::vector<float> sigma(gfactor.size(), 1.0f);
  options.noiseSigma = sigma.data();
  options.policy = svdlr::RankPolicy::Nordic();
  ExpectGpuEqualsCpu(input, options);
}

// The g-factor estimate (src/noise/svdlrGFactorEstimate.cxx) is host code around either backend: a first pass on the chosen
// backend, the map made on the host from its σ map, then the given-map step. The maps agree to float rounding, and the
// GPU's run is the CPU's given-map run with the GPU's map (the same input to the second pass on both), with the
// thermal σ from the map's percentile and from a known σ, with a mask.
TEST_F(LocalDenoiseCuda, GFactorEstimateEqualsCpu)
{
  SCOPED_TRACE(m_Random.SeedTrace());
  Series input = LowRankPlusNoise({ 16, 15, 12 }, 30, 3, m_Random);
  for (std::size_t v = 0; v < input.Voxels(); ++v)
  {
    const std::size_t x = v % input.size[0], y = v / input.size[0] % input.size[1], z = v / (input.size[0] * input.size[1]);
    const float       g = 1.0f + float(x) / float(input.size[0]); // the noise (and signal) amplified 1 to 2 along x
    for (std::size_t t = 0; t < input.volumes; ++t)
    {
      input.data[x * input.strides[0] + y * input.strides[1] + z * input.strides[2] + t * input.strides[3]] *= g;
    }
  }
  const std::vector<std::uint8_t> mask = BallMask(input.size, m_Random);
  const std::vector<float>        sigma(input.Voxels(), 1.0f);
  for (int known = 0; known < 2; ++known)
  {
    LocalDenoiseOptions options;
    options.estimateGFactor = true;
    options.mask = mask.data();
    if (known)
    {
      options.policy = svdlr::RankPolicy::Nordic();
      options.noiseSigma = sigma.data();
    }
    std::vector<float> gCpu(input.Voxels()), gGpu(input.Voxels());
    Result             gpu;
    for (auto [backend, g] : { std::pair{ svdlr::Backend::CPU, &gCpu }, std::pair{ svdlr::Backend::CUDA, &gGpu } })
    {
      Result run;
      run.output = input.Poisoned();
      run.sigma.assign(input.Voxels(), std::numeric_limits<float>::quiet_NaN());
      run.rank.assign(input.Voxels(), 0xFFFF);
      options.backend = backend;
      run.report = svdlr::DenoiseLocalLowRank(input.View(), run.output.MutableView(),
                                              { run.sigma.data(), run.rank.data(), g->data() }, options);
      if (backend == svdlr::Backend::CUDA)
      {
        gpu = std::move(run);
      }
    }
    EXPECT_EQ(gpu.report.backend, svdlr::Backend::CUDA);
    for (std::size_t v = 0; v < gCpu.size(); ++v)
    {
      // A box mean of σ values that agree to 1e-6, over a reference that does: 1e-5 relative.
      ASSERT_NEAR(gGpu[v], gCpu[v], 1e-5f * gCpu[v]) << "voxel " << v << (known ? ", known sigma" : "");
    }
    LocalDenoiseOptions given = options;
    given.estimateGFactor = false;
    given.gfactor = gGpu.data();
    ExpectSameResult(gpu, Denoise(input, given, svdlr::Backend::CPU), input);
  }
}

TEST_F(LocalDenoiseCuda, ResidualNoiseEstimatorEqualsCpu)
{
  // The residual refit of σ (svdlr::NoiseEstimator::ResidualRefit) runs in ChoosePatchRank, on the device as on the
  // host: the same σ map, ranks and series for the policies that estimate σ, both aggregations, and with a mask.
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series              input = LowRankPlusNoise({ 12, 13, 11 }, 28, 3, m_Random);
  std::vector<std::uint8_t> mask(input.Voxels());
  for (std::size_t v = 0; v < mask.size(); ++v)
  {
    mask[v] = (v / 5) % 4 != 0;
  }
  for (const auto policy : { svdlr::RankPolicy::MarchenkoPastur(svdlr::MarchenkoPasturEstimator::CorderoGrande2019),
                             svdlr::RankPolicy::MarchenkoPastur(), svdlr::RankPolicy::GavishDonoho() })
  {
    for (const auto aggregation : { PatchAggregation::CentreVoxel, PatchAggregation::OverlapAverage })
    {
      LocalDenoiseOptions options = WrittenForOptions();
      options.policy = policy;
      options.aggregation = aggregation;
      options.noiseEstimator = svdlr::NoiseEstimator::ResidualRefit;
      ExpectGpuEqualsCpu(input, options);
      options.mask = mask.data();
      ExpectGpuEqualsCpu(input, options);
    }
  }
}

TEST_F(LocalDenoiseCuda, SigmaFloorCorrectionEqualsCpu)
{
  // The σ floor correction of a magnitude series (svdlr::CorrectSigmaForNoiseFloor) is host code after either
  // backend's pass: the GPU's map and series, corrected on the host, give the CPU's to float rounding. The
  // correction divides by the root of a smooth function of σ and the series, so a rounding difference in them moves
  // the corrected σ by a few times as much: 1e-5 relative for σ, ExpectSameResult's rule for the rest.
  SCOPED_TRACE(m_Random.SeedTrace());
  Series input = LowRankPlusNoise({ 12, 13, 11 }, 28, 3, m_Random);
  for (float & value : input.data)
  {
    value = std::abs(value); // a magnitude: some of it near 0, where the floor's spread is low
  }
  std::vector<std::uint8_t> mask(input.Voxels());
  for (std::size_t v = 0; v < mask.size(); ++v)
  {
    mask[v] = (v / 7) % 3 != 0;
  }
  for (const bool masked : { false, true })
  {
    LocalDenoiseOptions options;
    options.noiseEstimator = svdlr::NoiseEstimator::ResidualRefit;
    options.magnitudeNoise.sigmaFloorCorrection = true;
    options.mask = masked ? mask.data() : nullptr;
    const Result cpu = Denoise(input, options, svdlr::Backend::CPU);
    Result       gpu = Denoise(input, options, svdlr::Backend::CUDA);
    EXPECT_EQ(gpu.report.backend, svdlr::Backend::CUDA);
    std::size_t sigmaDifferences = 0, raised = 0;
    for (std::size_t v = 0; v < input.Voxels(); ++v)
    {
      sigmaDifferences += !(std::abs(static_cast<double>(gpu.sigma[v]) - cpu.sigma[v]) <= 1e-5 * cpu.sigma[v]);
    }
    EXPECT_EQ(sigmaDifferences, 0u) << "voxels whose corrected σ differs beyond 1e-5 relative, masked " << masked;
    const Result plain = [&] {
      LocalDenoiseOptions uncorrected = options;
      uncorrected.magnitudeNoise = {};
      return Denoise(input, uncorrected, svdlr::Backend::CUDA);
    }();
    for (std::size_t v = 0; v < input.Voxels(); ++v)
    {
      raised += gpu.sigma[v] > plain.sigma[v];
    }
    EXPECT_GT(raised, 0u) << "the correction ran on the CUDA path";
    gpu.sigma = cpu.sigma; // compared above
    ExpectSameResult(gpu, cpu, input);
  }
}

TEST_F(LocalDenoiseCuda, DefaultsEqualCpu)
{
  // The defaults (overlap average, optimal shrinkage, Cordero-Grande's estimator), with and without a mask.
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series input = LowRankPlusNoise({ 12, 13, 11 }, 28, 3, m_Random);
  ExpectGpuEqualsCpu(input, LocalDenoiseOptions());
  std::vector<std::uint8_t> mask(input.Voxels());
  for (std::size_t v = 0; v < mask.size(); ++v)
  {
    mask[v] = (v / 7) % 3 != 0;
  }
  LocalDenoiseOptions masked;
  masked.mask = mask.data();
  ExpectGpuEqualsCpu(input, masked);
}

TEST_F(LocalDenoiseCuda, RunAfterQueuedWarmUpsAndAfterReleasedDevicesEqualsCpu)
{
  // As the tool: the context's warm-up, the series' queued after it, then the run, which waits for both. Releasing
  // the device first makes it cold (both warm-ups run); after the second release the run creates a fresh context.
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series input = LowRankPlusNoise({ 12, 11, 10 }, 30, 3, m_Random);
  LocalDenoiseOptions options;
  options.backend = svdlr::Backend::CUDA;
  svdlr::ReleaseCudaDevices();
  svdlr::StartCudaDeviceWarmUp(options.backend, options.deviceId);
  svdlr::StartCudaDenoiseWarmUp(30, options);
  ExpectGpuEqualsCpu(input, options);
  svdlr::WaitForCudaWarmUp();
  svdlr::ReleaseCudaDevices();
  ExpectGpuEqualsCpu(input, options);
}

TEST_F(LocalDenoiseCuda, VectorImageLayoutAndInPlaceEqualCpu)
{
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series        image = LowRankPlusNoise({ 14, 12, 12 }, 25, 3, m_Random);
  const Series        vector = VolumesInner(image);
  LocalDenoiseOptions options = WrittenForOptions();
  options.aggregation = PatchAggregation::OverlapAverage;
  const Result cpu = Denoise(image, options, svdlr::Backend::CPU);
  const Result gpuVector = Denoise(vector, options, svdlr::Backend::CUDA);
  ExpectSameResult(InLayoutOf(gpuVector, image), cpu, image);

  // In place: the output view is the input view.
  Series inPlace = image;
  Result gpuInPlace;
  gpuInPlace.sigma.assign(image.Voxels(), 0.0f);
  gpuInPlace.rank.assign(image.Voxels(), 0);
  options.backend = svdlr::Backend::CUDA;
  options.maxPatchesPerBatch = 300; // several slabs and batches, so that a later slab would read written planes
  gpuInPlace.report = svdlr::DenoiseLocalLowRank(inPlace.View(), inPlace.MutableView(),
                                                 { gpuInPlace.sigma.data(), gpuInPlace.rank.data() }, options);
  gpuInPlace.output = inPlace;
  ExpectSameResult(gpuInPlace, cpu, image);
}

TEST_F(LocalDenoiseCuda, ViewsWithGapsGoThroughAPackedHostCopyAndEqualCpu)
{
  // Neither an itk::Image nor an itk::VectorImage layout: the slabs are gathered into, and scattered from, a packed
  // host copy (svdlrLocalDenoiseResources.h), in the packed order nearest to the view's.
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series        image = LowRankPlusNoise({ 12, 11, 13 }, 20, 3, m_Random);
  LocalDenoiseOptions options = WrittenForOptions();
  options.maxPatchesPerBatch = 211; // several slabs and batches
  const Result         cpu = Denoise(image, options, svdlr::Backend::CPU);
  const std::ptrdiff_t nx = 12, ny = 11, nz = 13, nv = 20;
  // Volumes outermost, rows padded by 3 and volumes by 7.
  const std::array<std::ptrdiff_t, 4> outer{ 1, nx + 3, (nx + 3) * ny, (nx + 3) * ny * nz + 7 };
  // Volumes innermost, each voxel padded by 1.
  const std::array<std::ptrdiff_t, 4> inner{ nv + 1, (nv + 1) * nx, (nv + 1) * nx * ny, 1 };
  for (const auto & strides : { outer, inner })
  {
    const std::size_t elements = static_cast<std::size_t>(
      std::max(strides[3] * nv, std::max(strides[0] * nx, std::max(strides[1] * ny, strides[2] * nz))));
    const Series input = Restrided(image, strides, elements);
    const Result gpu = Denoise(input, options, svdlr::Backend::CUDA);
    ExpectSameResult(InLayoutOf(gpu, image), cpu, image);
  }
}

TEST_F(LocalDenoiseCuda, ManySlabsAndBatchesGiveTheSameResult)
{
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series input = LowRankPlusNoise({ 13, 12, 16 }, 24, 3, m_Random);
  for (const auto aggregation : { PatchAggregation::CentreVoxel, PatchAggregation::OverlapAverage })
  {
    LocalDenoiseOptions options = WrittenForOptions();
    options.aggregation = aggregation;
    options.maxPatchesPerBatch = 37; // not a divisor of anything here
    const Result                               cpu = Denoise(input, options, svdlr::Backend::CPU);
    svdlr::detail::LocalDenoiseCudaTrace       trace;
    const svdlr::detail::LocalDenoiseCudaTuning tuning;
    const Result gpu = DenoiseTuned(input, options, cpu.report.patchSize, tuning, trace);
    EXPECT_GE(trace.batches, input.Voxels() / 37) << "maxPatchesPerBatch was not honoured";
    EXPECT_EQ(trace.batchSize, 37u);
    ExpectSameResult(gpu, cpu, input);
  }
}

TEST_F(LocalDenoiseCuda, CachedResourcesGiveTheSameResultAfterAFailedRunAndAfterARelease)
{
  // The streams, handles and buffers stay cached per device between runs (svdlrDeviceResourceCache.h). A run that
  // fails frees its set instead of caching it, and ReleaseCudaResources frees the cache: the run after each starts
  // from a fresh set and must give exactly what the run on the cached set gave.
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series        input = LowRankPlusNoise({ 11, 10, 12 }, 16, 3, m_Random);
  LocalDenoiseOptions options = WrittenForOptions();
  options.maxPatchesPerBatch = 53;
  const Result                                cpu = Denoise(input, options, svdlr::Backend::CPU);
  const svdlr::detail::LocalDenoiseCudaTuning tuning;
  svdlr::detail::LocalDenoiseCudaTrace        trace;
  const Result                                first = DenoiseTuned(input, options, cpu.report.patchSize, tuning, trace);
  const Result                                cached = DenoiseTuned(input, options, cpu.report.patchSize, tuning, trace);

  Series broken = input;
  broken.At(2, 3, 4, 1) = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(DenoiseTuned(broken, options, cpu.report.patchSize, tuning, trace), svdlr::Error);
  const Result afterFailure = DenoiseTuned(input, options, cpu.report.patchSize, tuning, trace);

  svdlr::ReleaseCudaResources();
  const Result afterRelease = DenoiseTuned(input, options, cpu.report.patchSize, tuning, trace);

  ExpectSameResult(first, cpu, input);
  for (const Result * again : { &cached, &afterFailure, &afterRelease })
  {
    ExpectSameResult(*again, first, input);
  }
}

TEST_F(LocalDenoiseCuda, PlanForcedIntoLittleMemoryStillEqualsCpu)
{
  // As if the GPU had room for little more than one plane of the series at a time: the run goes through one
  // centre plane per slab and small batches, carrying the sums from slab to slab.
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series input = LowRankPlusNoise({ 12, 11, 14 }, 22, 3, m_Random);
  for (const auto aggregation : { PatchAggregation::CentreVoxel, PatchAggregation::OverlapAverage })
  {
    LocalDenoiseOptions options = WrittenForOptions();
    options.aggregation = aggregation;
    const Result cpu = Denoise(input, options, svdlr::Backend::CPU);
    // Two slab slots of one centre plane (a window of ez planes), and 100 KB for a batch: a handful of patches
    // (about 14 KB each at n = 22), too little to widen the slabs.
    const svdlr::detail::LocalDenoiseCudaTuning tuning = OnePlanePerSlabTuning(input, cpu, options);
    svdlr::detail::LocalDenoiseCudaTrace        trace;
    const Result gpu = DenoiseTuned(input, options, cpu.report.patchSize, tuning, trace);
    EXPECT_GE(trace.slabs, 7u) << "the plan did not shrink its slabs (4 by default)";
    EXPECT_LE(trace.batchSize, 16u);
    EXPECT_GT(trace.batches, 12u * 11u * 14u / 16u);
    ExpectSameResult(gpu, cpu, input);
  }
}

TEST_F(LocalDenoiseCuda, NoMemoryForOnePatchIsOutOfMemory)
{
  Random                                random;
  const Series                          input = LowRankPlusNoise({ 8, 8, 8 }, 10, 2, random);
  svdlr::detail::LocalDenoiseCudaTuning tuning;
  tuning.availableBytes = 1000;
  svdlr::detail::LocalDenoiseCudaTrace trace;
  try
  {
    DenoiseTuned(input, WrittenForOptions(), { 3, 3, 3 }, tuning, trace);
    FAIL() << "expected OutOfMemory";
  }
  catch (const svdlr::Error & error)
  {
    EXPECT_EQ(error.Code(), svdlr::ErrorCode::OutOfMemory) << error.what();
  }
}

TEST_F(LocalDenoiseCuda, CusolverReferencePathGivesTheSameResult)
{
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series input = LowRankPlusNoise({ 12, 12, 10 }, 30, 4, m_Random);
  for (const auto aggregation : { PatchAggregation::CentreVoxel, PatchAggregation::OverlapAverage })
  {
    LocalDenoiseOptions options = WrittenForOptions();
    options.aggregation = aggregation;
    svdlr::detail::LocalDenoiseCudaTuning tuning;
    tuning.cusolver = true;
    svdlr::detail::LocalDenoiseCudaTrace trace;
    ExpectTunedEqualsCpu(input, options, tuning, trace);
    EXPECT_TRUE(trace.usedCusolver);
  }
}

TEST_F(LocalDenoiseCuda, OwnEigenSolverGivesTheSameResult)
{
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series        input = LowRankPlusNoise({ 13, 12, 11 }, 33, 4, m_Random);
  LocalDenoiseOptions options = WrittenForOptions();
  options.aggregation = PatchAggregation::OverlapAverage;
  const Result                         cpu = Denoise(input, options, svdlr::Backend::CPU);
  svdlr::detail::LocalDenoiseCudaTrace trace;
  ExpectSameResult(DenoiseTuned(input, options, cpu.report.patchSize, {}, trace), cpu, input);
}

TEST_F(LocalDenoiseCuda, NonFiniteInputNamesTheFirstVoxel)
{
  Random       random;
  Series       input = LowRankPlusNoise({ 10, 9, 12 }, 12, 2, random);
  const std::size_t x = 3, y = 4, z = 9;
  input.At(x, y, z, 5) = std::numeric_limits<float>::quiet_NaN();
  input.At(7, 8, 11, 2) = std::numeric_limits<float>::infinity();
  const std::ptrdiff_t voxel = static_cast<std::ptrdiff_t>(x + 10 * (y + 9 * z));
  // Through the public entry point, and straight into the backend (which checks on the device as it stages).
  LocalDenoiseOptions options = WrittenForOptions();
  options.backend = svdlr::Backend::CUDA;
  Series output = input.Poisoned();
  try
  {
    svdlr::DenoiseLocalLowRank(input.View(), output.MutableView(), {}, options);
    FAIL() << "expected NonFiniteInput";
  }
  catch (const svdlr::Error & error)
  {
    EXPECT_EQ(error.Code(), svdlr::ErrorCode::NonFiniteInput) << error.what();
    EXPECT_EQ(error.Matrix(), voxel);
  }
  svdlr::detail::LocalDenoiseCudaTuning tuning;
  tuning.availableBytes = 0;
  svdlr::detail::LocalDenoiseCudaTrace trace;
  LocalDenoiseOptions                  small = WrittenForOptions();
  small.maxPatchesPerBatch = 50;
  try
  {
    DenoiseTuned(input, small, { 3, 3, 3 }, tuning, trace);
    FAIL() << "expected NonFiniteInput from the backend";
  }
  catch (const svdlr::Error & error)
  {
    EXPECT_EQ(error.Code(), svdlr::ErrorCode::NonFiniteInput) << error.what();
    EXPECT_EQ(error.Matrix(), voxel);
    EXPECT_NE(std::string(error.what()).find("voxel " + std::to_string(voxel)), std::string::npos) << error.what();
  }
}

TEST_F(LocalDenoiseCuda, DenoisingBringsTheSeriesCloserToTheCleanSignal)
{
  // Not a comparison with the CPU: the GPU's result itself must denoise, which guards against both backends being
  // wrong in the same way.
  SCOPED_TRACE(m_Random.SeedTrace());
  Series       clean;
  const Series noisy = LowRankPlusNoise({ 16, 16, 14 }, 40, 3, m_Random, &clean);
  const Result gpu = Denoise(noisy, WrittenForOptions(), svdlr::Backend::CUDA);
  double       before = 0.0, after = 0.0;
  for (std::size_t z = 0; z < noisy.size[2]; ++z)
    for (std::size_t y = 0; y < noisy.size[1]; ++y)
      for (std::size_t x = 0; x < noisy.size[0]; ++x)
        for (std::size_t t = 0; t < noisy.volumes; ++t)
        {
          const double truth = clean.At(x, y, z, t);
          before += std::pow(noisy.At(x, y, z, t) - truth, 2);
          after += std::pow(gpu.output.At(x, y, z, t) - truth, 2);
        }
  // 40 volumes, rank 3 in patches of 125 voxels: MP-PCA keeps about 3 of 40 components, so the noise energy left
  // is a small fraction; a third is a loose bound.
  EXPECT_LT(after, before / 3.0) << "error energy before " << before << ", after " << after;
}

} // namespace

namespace
{

// A stabilised magnitude series gives the GPU what it gives the CPU (the GPU transforms each slab on the device, the
// CPU the series on the host: svdlrMagnitudeTransformCudaGTest.cxx). With a known σ map both stabilise the same numbers;
// the expected magnitude written back is a smooth function of the denoised value, so float rounding stays rounding.
// (The floor-removed output is not compared here: near the floor ν grows like the square root of the distance to
// it, which magnifies rounding; the tool's test compares it on a series above the floor.)
TEST_F(LocalDenoiseCuda, StabilisedMagnitudeSeriesEqualsCpu)
{
  SCOPED_TRACE(m_Random.SeedTrace());
  Series input = LowRankPlusNoise({ 14, 13, 12 }, 28, 3, m_Random);
  for (float & value : input.data)
  {
    value = std::abs(value); // a magnitude: the low-rank signal's floor where it crosses 0
  }
  const std::vector<float>        sigma = KnownSigmaMap(input, m_Random);
  const std::vector<std::uint8_t> mask = BallMask(input.size, m_Random);
  for (unsigned coils : { 1u, 4u })
  {
    LocalDenoiseOptions options = WrittenForOptions();
    options.noiseSigma = sigma.data();
    options.mask = mask.data();
    options.aggregation = PatchAggregation::OverlapAverage;
    options.magnitudeNoise.stabilise = true;
    options.magnitudeNoise.coils = coils;
    ExpectGpuEqualsCpu(input, options);
  }
}

} // namespace
