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
// A magnitude series' variance stabilisation on the GPU: the CUDA denoiser stabilises each slab as it unpacks it
// and inverts it as it finalises it (svdlrMagnitudeTransform.h), where the CPU backend transforms the whole series
// on the host around its run. Both must give the same series, σ and rank maps, to float rounding, in every layout,
// in place, across slabs of one plane, and with the default model (σ estimated, the floor removed). The model's σ
// pass forms the maps alone, which must be the CPU's. Every test skips, saying why, without a usable CUDA device.
#include "svdlrLocalDenoiseCudaTesting.h"

#include "cuda/svdlrCudaLocalDenoiser.h"
#include "denoise/svdlrLocalDenoiseBackends.h"
#include "noise/svdlrMagnitudeTransform.h"
#include "svdlr/MagnitudeNoise.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace
{
using namespace svdlr::test;

/** A magnitude: the low-rank series' absolute value (its floor where it crosses 0) plus `offset`. */
Series
MagnitudeOf(Series series, float offset)
{
  for (float & value : series.data)
  {
    value = std::abs(value) + offset;
  }
  return series;
}

LocalDenoiseOptions
StabilisedWithKnownSigma(const std::vector<float> & sigma, unsigned coils)
{
  LocalDenoiseOptions options = WrittenForOptions();
  options.noiseSigma = sigma.data();
  options.aggregation = PatchAggregation::OverlapAverage;
  options.magnitudeNoise.stabilise = true;
  options.magnitudeNoise.coils = coils;
  return options;
}

TEST_F(LocalDenoiseCuda, VstInTheVectorImageLayoutAndInPlaceAcrossSlabsEqualsCpu)
{
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series                    image = MagnitudeOf(LowRankPlusNoise({ 14, 12, 12 }, 25, 3, m_Random), 0.0f);
  const std::vector<float>        sigma = KnownSigmaMap(image, m_Random);
  const std::vector<std::uint8_t> mask = BallMask(image.size, m_Random);
  LocalDenoiseOptions             options = StabilisedWithKnownSigma(sigma, 2);
  options.mask = mask.data();
  options.maxPatchesPerBatch = 300; // several slabs and batches, so that a later slab would read written planes
  const Result cpu = Denoise(image, options, svdlr::Backend::CPU);

  const Series vector = VolumesInner(image);
  ExpectSameResult(InLayoutOf(Denoise(vector, options, svdlr::Backend::CUDA), image), cpu, image);

  Series inPlace = image;
  Result gpuInPlace;
  gpuInPlace.sigma.assign(image.Voxels(), 0.0f);
  gpuInPlace.rank.assign(image.Voxels(), 0);
  options.backend = svdlr::Backend::CUDA;
  gpuInPlace.report = svdlr::DenoiseLocalLowRank(inPlace.View(), inPlace.MutableView(),
                                                 { gpuInPlace.sigma.data(), gpuInPlace.rank.data() }, options);
  gpuInPlace.output = inPlace;
  EXPECT_EQ(gpuInPlace.report.backend, svdlr::Backend::CUDA);
  ExpectSameResult(gpuInPlace, cpu, image);
}

TEST_F(LocalDenoiseCuda, VstThroughSlabsOfOnePlaneEqualsTheHostTransform)
{
  // The tuned backend with the transform itself, one centre plane a slab: each slab's σ is read at its own planes.
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series             input = MagnitudeOf(LowRankPlusNoise({ 12, 11, 14 }, 22, 3, m_Random), 0.0f);
  const std::vector<float> sigma = KnownSigmaMap(input, m_Random);
  const LocalDenoiseOptions options = StabilisedWithKnownSigma(sigma, 1);
  const Result              cpu = Denoise(input, options, svdlr::Backend::CPU);

  svdlr::MagnitudeTransform transform;
  transform.tables = svdlr::NoncentralChiModel::ForCoils(1).Tables();
  transform.sigma = sigma.data();
  transform.toSignal = false; // E[M | nu], as the model without the floor removal
  LocalDenoiseOptions plain = options;
  plain.magnitudeNoise = {};
  svdlr::detail::LocalDenoiseCudaTuning tuning = OnePlanePerSlabTuning(input, cpu, plain);
  // The transform's tables and σ map count against the device memory as the mask's do (about 110 KB here).
  tuning.availableBytes += svdlr::detail::DeviceMagnitudeTransform(&transform, input.Voxels()).Bytes();
  svdlr::detail::LocalDenoiseCudaTrace        trace;
  Result                                      gpu;
  gpu.output = input.Poisoned();
  gpu.sigma.assign(input.Voxels(), 0.0f);
  gpu.rank.assign(input.Voxels(), 0);
  svdlr::detail::RunLocalDenoiseCudaTuned(input.View(), gpu.output.MutableView(), { gpu.sigma.data(), gpu.rank.data() },
                                          plain, cpu.report.patchSize, gpu.report, tuning, &trace, &transform);
  EXPECT_GE(trace.slabs, 7u) << "the plan did not shrink its slabs";
  ExpectSameResult(gpu, cpu, input);
}

TEST_F(LocalDenoiseCuda, DefaultMagnitudeModelAboveTheFloorEqualsCpu)
{
  // σ estimated by the first pass, stabilised, denoised, and the floor removed, as the tool does by default. Above
  // the floor (nu of 10 to 20 σ) the inverse is smooth, so that float rounding stays rounding; near it nu grows like
  // the root of the distance to the floor, which magnifies rounding.
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series        input = MagnitudeOf(LowRankPlusNoise({ 13, 12, 11 }, 30, 3, m_Random), 10.0f);
  LocalDenoiseOptions options;
  options.magnitudeNoise.stabilise = true;
  options.magnitudeNoise.noiseFloor = true;
  const Result cpu = Denoise(input, options, svdlr::Backend::CPU);
  const Result gpu = Denoise(input, options, svdlr::Backend::CUDA);
  EXPECT_EQ(gpu.report.backend, svdlr::Backend::CUDA);
  EXPECT_EQ(svdlr::MagnitudeNoiseName(gpu.report.magnitudeNoise), "vst+noise-floor");
  ExpectSameResult(gpu, cpu, input);
}

TEST_F(LocalDenoiseCuda, PassForTheMapsAloneEqualsTheCpusMaps)
{
  // An output view with null data: no eigenvectors (ours skips them, cuSOLVER's runs without: NOVECTOR), no
  // approximation and no series back; the maps equal a whole pass's on the CPU, masked, in batches across slabs.
  SCOPED_TRACE(m_Random.SeedTrace());
  const Series                    input = MagnitudeOf(LowRankPlusNoise({ 14, 12, 12 }, 25, 3, m_Random), 0.0f);
  const std::vector<std::uint8_t> mask = BallMask(input.size, m_Random);
  for (const auto aggregation : { PatchAggregation::CentreVoxel, PatchAggregation::OverlapAverage })
  {
    LocalDenoiseOptions options = WrittenForOptions();
    options.aggregation = aggregation;
    options.mask = mask.data();
    options.maxPatchesPerBatch = 300;
    const Result cpu = Denoise(input, options, svdlr::Backend::CPU);
    for (const bool cusolver : { false, true })
    {
      SCOPED_TRACE(cusolver ? "cuSOLVER" : "our solver");
      svdlr::detail::LocalDenoiseCudaTuning tuning;
      tuning.cusolver = cusolver;
      svdlr::detail::LocalDenoiseCudaTrace trace;
      Result                               gpu = cpu;
      gpu.sigma.assign(input.Voxels(), std::numeric_limits<float>::quiet_NaN());
      gpu.rank.assign(input.Voxels(), 0xFFFF);
      const SeriesView<float> mapsAlone{ nullptr, input.size, input.volumes, input.strides };
      svdlr::detail::RunLocalDenoiseCudaTuned(input.View(), mapsAlone, { gpu.sigma.data(), gpu.rank.data() }, options,
                                              cpu.report.patchSize, gpu.report, tuning, &trace);
      EXPECT_EQ(trace.usedCusolver, cusolver);
      EXPECT_GE(trace.batches, 2u);
      ExpectSameResult(gpu, cpu, input); // the output is the CPU's own: the maps and the patch count are compared
    }
    // Through the front end, on the backend Auto picks.
    std::vector<float> sigma(input.Voxels(), -1.0f);
    options.backend = svdlr::Backend::CUDA;
    const svdlr::LocalDenoiseReport report = svdlr::detail::DenoiseLowRankPass(
      input.View(), { nullptr, input.size, input.volumes, input.strides }, { sigma.data(), nullptr }, options, nullptr);
    EXPECT_EQ(report.backend, svdlr::Backend::CUDA);
    EXPECT_EQ(report.patches, cpu.report.patches);
    const double scale = RootMeanSquare(input.data);
    for (std::size_t v = 0; v < sigma.size(); ++v)
    {
      ASSERT_NEAR(sigma[v], cpu.sigma[v], 1e-6 * (std::abs(cpu.sigma[v]) + 1e-3 * scale)) << "voxel " << v;
    }
  }
}

} // namespace
