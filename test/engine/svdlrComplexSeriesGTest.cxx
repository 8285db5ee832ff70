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
// Phase demodulation and noise-scan sigma (svdlr/ComplexSeries.h): against an independent float64 reference (a
// direct, non-separable Gaussian sum), against known smooth phases, and against the known sigma of noise scans.
#include "svdlr/ComplexSeries.h"
#include "svdlrTestSeries.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <vector>

namespace
{
using namespace svdlr::test;
using svdlr::PhaseDemodulationOptions;

constexpr double kPi = 3.14159265358979323846;

/** The angle between two phases, in [0, pi]. */
double
AngleBetween(double a, double b)
{
  return std::abs(std::arg(std::polar(1.0, a - b)));
}

struct Demodulated
{
  Series phase, real, imag;
};

Demodulated
Demodulate(const Series & real, const Series & imag, const PhaseDemodulationOptions & options)
{
  Demodulated out{ EmptySeries(real.size, real.volumes), EmptySeries(real.size, real.volumes),
                   EmptySeries(real.size, real.volumes) };
  for (Series * s : { &out.phase, &out.real, &out.imag })
  {
    std::fill(s->values.begin(), s->values.end(), std::numeric_limits<float>::quiet_NaN());
  }
  svdlr::DemodulatePhase(real.View(), imag.View(), out.phase.View(), out.real.View(), out.imag.View(), options);
  return out;
}

/** The smooth phase by the definition: the argument of a direct sum over every other voxel within 3 sigma along
 * each axis, with weight prod exp(-d^2 / (2 sigma^2)), in float64. */
double
ReferencePhase(const Series & real, const Series & imag, std::size_t voxel, std::size_t t,
               const std::array<double, 3> & sigma)
{
  const auto &                 n = real.size;
  const std::array<long, 3>    at{ long(voxel % n[0]), long(voxel / n[0] % n[1]), long(voxel / (n[0] * n[1])) };
  std::array<long, 3>          radius{};
  for (int a = 0; a < 3; ++a)
  {
    radius[a] = sigma[a] > 0 ? long(std::ceil(3.0 * sigma[a])) : 0;
  }
  std::complex<double> sum = 0.0;
  for (long dz = -radius[2]; dz <= radius[2]; ++dz)
    for (long dy = -radius[1]; dy <= radius[1]; ++dy)
      for (long dx = -radius[0]; dx <= radius[0]; ++dx)
      {
        const long x = at[0] + dx, y = at[1] + dy, z = at[2] + dz;
        if ((dx == 0 && dy == 0 && dz == 0) || x < 0 || y < 0 || z < 0 || x >= long(n[0]) || y >= long(n[1]) || z >= long(n[2]))
        {
          continue;
        }
        double weight = 1.0;
        const long d[3] = { dx, dy, dz };
        for (int a = 0; a < 3; ++a)
        {
          weight *= sigma[a] > 0 ? std::exp(-0.5 * double(d[a] * d[a]) / (sigma[a] * sigma[a])) : 1.0;
        }
        const std::size_t v = std::size_t(x) + n[0] * (std::size_t(y) + n[1] * std::size_t(z));
        sum += weight * std::complex<double>(real(v, t), imag(v, t));
      }
  return std::arg(sum);
}

/** A complex series of magnitude `magnitude` and phase phase(x, y, z, t), no noise. */
template <typename TPhase>
std::pair<Series, Series>
ComplexSeries(std::array<std::size_t, 3> size, std::size_t volumes, double magnitude, TPhase phase)
{
  Series real = EmptySeries(size, volumes), imag = EmptySeries(size, volumes);
  for (std::size_t t = 0; t < volumes; ++t)
    for (std::size_t v = 0; v < real.Voxels(); ++v)
    {
      const double angle = phase(v % size[0], v / size[0] % size[1], v / (size[0] * size[1]), t);
      real(v, t) = float(magnitude * std::cos(angle));
      imag(v, t) = float(magnitude * std::sin(angle));
    }
  return { real, imag };
}

TEST(SVDLowRankPhaseDemodulation, MatchesAFloat64DirectSumOnRandomData)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::array<std::size_t, 3> size{ 11, 9, 6 };
  Series                           real = EmptySeries(size, 3), imag = EmptySeries(size, 3);
  for (std::size_t i = 0; i < real.values.size(); ++i)
  {
    real.values[i] = float(5.0 + random.Normal());
    imag.values[i] = float(-2.0 + random.Normal());
  }
  PhaseDemodulationOptions options;
  options.filterSigma = { 1.5, 1.0, 0.7 };
  options.threads = 2;
  const Demodulated out = Demodulate(real, imag, options);
  double worstPhase = 0.0, worstValue = 0.0;
  for (std::size_t t = 0; t < real.volumes; ++t)
    for (std::size_t v = 0; v < real.Voxels(); ++v)
    {
      const double phi = ReferencePhase(real, imag, v, t, options.filterSigma);
      const std::complex<double> rotated = std::complex<double>(real(v, t), imag(v, t)) * std::polar(1.0, -phi);
      worstPhase = std::max(worstPhase, AngleBetween(out.phase(v, t), phi));
      worstValue = std::max({ worstValue, std::abs(out.real(v, t) - rotated.real()),
                              std::abs(out.imag(v, t) - rotated.imag()) });
    }
  EXPECT_LT(worstPhase, 1e-5);
  EXPECT_LT(worstValue, 1e-4); // values of about 5: float32 rounding
}

/** Random real and imaginary parts, about (5, -2) with unit noise. */
std::pair<Series, Series>
RandomComplexSeries(Random & random, std::array<std::size_t, 3> size, std::size_t volumes)
{
  Series real = EmptySeries(size, volumes), imag = EmptySeries(size, volumes);
  for (std::size_t i = 0; i < real.values.size(); ++i)
  {
    real.values[i] = float(5.0 + random.Normal());
    imag.values[i] = float(-2.0 + random.Normal());
  }
  return { real, imag };
}

/** Whether two series hold the same bits. */
bool
SameBits(const Series & a, const Series & b)
{
  return a.values.size() == b.values.size() &&
         std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(float)) == 0;
}

TEST(SVDLowRankPhaseDemodulation, VolumesOnManyThreadsGiveTheOneThreadResultBitForBit)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  // x shorter than the kernel (radius 6) cuts it at both borders of every row.
  const auto [real, imag] = RandomComplexSeries(random, { 5, 13, 4 }, 9);
  PhaseDemodulationOptions options;
  options.filterSigma = { 2.0, 1.5, 0.8 };
  options.threads = 1;
  const Demodulated one = Demodulate(real, imag, options);
  for (unsigned threads : { 2u, 4u, 9u, 16u })
  {
    SCOPED_TRACE("threads " + std::to_string(threads));
    options.threads = threads;
    const Demodulated many = Demodulate(real, imag, options);
    EXPECT_TRUE(SameBits(one.phase, many.phase));
    EXPECT_TRUE(SameBits(one.real, many.real));
    EXPECT_TRUE(SameBits(one.imag, many.imag));
  }
}

TEST(SVDLowRankPhaseDemodulation, SmoothingAlongXGivesTheBitsOfSmoothingAlongYOnTheTransposedImage)
{
  // Along x each row is summed in a register, along y whole rows at a time: the same sums in the same order.
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::size_t nx = 17, ny = 8;
  const auto [real, imag] = RandomComplexSeries(random, { nx, ny, 2 }, 3);
  Series transposedReal = EmptySeries({ ny, nx, 2 }, 3), transposedImag = EmptySeries({ ny, nx, 2 }, 3);
  const auto transposed = [&](std::size_t v) {
    const std::size_t x = v % nx, y = v / nx % ny, z = v / (nx * ny);
    return y + ny * (x + nx * z);
  };
  for (std::size_t t = 0; t < real.volumes; ++t)
    for (std::size_t v = 0; v < real.Voxels(); ++v)
    {
      transposedReal(transposed(v), t) = real(v, t);
      transposedImag(transposed(v), t) = imag(v, t);
    }
  PhaseDemodulationOptions alongX, alongY;
  alongX.filterSigma = { 2.5, 0.0, 0.0 };
  alongY.filterSigma = { 0.0, 2.5, 0.0 };
  const Demodulated x = Demodulate(real, imag, alongX);
  const Demodulated y = Demodulate(transposedReal, transposedImag, alongY);
  std::size_t differing = 0;
  for (std::size_t t = 0; t < real.volumes; ++t)
    for (std::size_t v = 0; v < real.Voxels(); ++v)
    {
      const std::size_t w = transposed(v);
      const float along[3] = { x.phase(v, t), x.real(v, t), x.imag(v, t) };
      const float across[3] = { y.phase(w, t), y.real(w, t), y.imag(w, t) };
      differing += std::memcmp(along, across, sizeof(along)) != 0;
    }
  EXPECT_EQ(differing, 0u);
}

TEST(SVDLowRankPhaseDemodulation, RemovesALinearPhaseAwayFromTheBordersAndAConstantOneEverywhere)
{
  const std::array<std::size_t, 3> size{ 24, 20, 4 };
  const auto linear = [](std::size_t x, std::size_t y, std::size_t z, std::size_t t) {
    return 0.9 * double(t) - 2.0 + 0.15 * double(x) - 0.1 * double(y) + 0.3 * double(z);
  };
  const auto [real, imag] = ComplexSeries(size, 4, 100.0, linear);
  PhaseDemodulationOptions options; // in plane, sigma 2: radius 6
  const Demodulated out = Demodulate(real, imag, options);
  for (std::size_t t = 0; t < 4; ++t)
    for (std::size_t v = 0; v < real.Voxels(); ++v)
    {
      const std::size_t x = v % size[0], y = v / size[0] % size[1], z = v / (size[0] * size[1]);
      if (x < 6 || y < 6 || x + 6 >= size[0] || y + 6 >= size[1])
      {
        continue; // the cut kernel is not symmetric there, and a linear phase is not its own average
      }
      ASSERT_LT(AngleBetween(out.phase(v, t), linear(x, y, z, t)), 1e-5) << "voxel " << v << " volume " << t;
      ASSERT_NEAR(out.real(v, t), 100.0, 1e-3);
      ASSERT_NEAR(out.imag(v, t), 0.0, 1e-3);
    }
  const auto constant = [](std::size_t, std::size_t, std::size_t, std::size_t t) { return 2.5 - 1.7 * double(t); };
  const auto [cr, ci] = ComplexSeries(size, 4, 100.0, constant);
  const Demodulated flat = Demodulate(cr, ci, options);
  for (std::size_t t = 0; t < 4; ++t)
    for (std::size_t v = 0; v < cr.Voxels(); ++v)
    {
      ASSERT_NEAR(flat.real(v, t), 100.0, 1e-3) << "voxel " << v << " volume " << t;
      ASSERT_NEAR(flat.imag(v, t), 0.0, 1e-3);
    }
}

TEST(SVDLowRankPhaseDemodulation, DemodulatedRealHasNoRicianFloorAtLowSnr)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::array<std::size_t, 3> size{ 40, 40, 3 };
  const double                     amplitude = 1.0, sigma = 1.0; // SNR 1: the magnitude's mean is about 1.55 sigma
  const auto smooth = [](std::size_t x, std::size_t y, std::size_t, std::size_t t) {
    return 0.5 * double(t) + 0.05 * double(x) + 0.0008 * double(y * y);
  };
  auto [real, imag] = ComplexSeries(size, 2, amplitude, smooth);
  for (std::size_t i = 0; i < real.values.size(); ++i)
  {
    real.values[i] += float(sigma * random.Normal());
    imag.values[i] += float(sigma * random.Normal());
  }
  const Demodulated out = Demodulate(real, imag, PhaseDemodulationOptions{});
  double sum = 0.0, sumSquares = 0.0, magnitude = 0.0;
  for (std::size_t i = 0; i < real.values.size(); ++i)
  {
    sum += out.real.values[i];
    sumSquares += double(out.imag.values[i]) * out.imag.values[i];
    magnitude += std::hypot(real.values[i], imag.values[i]);
  }
  const double count = double(real.values.size());
  EXPECT_NEAR(sum / count, amplitude, 0.1 * sigma);            // unbiased (within the estimate's own noise)
  EXPECT_GT(magnitude / count - amplitude, 0.4 * sigma);        // where the magnitude's floor is
  EXPECT_NEAR(std::sqrt(sumSquares / count), sigma, 0.05 * sigma); // the imaginary part holds noise alone
}

TEST(SVDLowRankPhaseDemodulation, RemodulationPutsThePhaseBackInAnInterleavedLayout)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::array<std::size_t, 3> size{ 5, 4, 3 };
  const std::size_t                volumes = 6, voxels = 60;
  // itk::VectorImage order: the volumes of a voxel side by side.
  const std::array<std::ptrdiff_t, 4> strides{ 6, 30, 120, 1 };
  std::vector<float> value(voxels * volumes), phase(voxels * volumes), real(voxels * volumes), imag(voxels * volumes);
  for (std::size_t i = 0; i < value.size(); ++i)
  {
    value[i] = float(random.Normal());
    phase[i] = float(random.Uniform(-kPi, kPi));
  }
  svdlr::RemodulatePhase({ value.data(), size, volumes, strides }, { phase.data(), size, volumes, strides },
                         { real.data(), size, volumes, strides }, { imag.data(), size, volumes, strides }, 2);
  for (std::size_t i = 0; i < value.size(); ++i)
  {
    ASSERT_NEAR(real[i], value[i] * std::cos(double(phase[i])), 1e-6);
    ASSERT_NEAR(imag[i], value[i] * std::sin(double(phase[i])), 1e-6);
  }
}

TEST(SVDLowRankPhaseDemodulation, RejectsMismatchedSizesNonFiniteInputAndBadFilterWidths)
{
  const std::array<std::size_t, 3> size{ 6, 6, 2 };
  const auto zero = [](std::size_t, std::size_t, std::size_t, std::size_t) { return 0.0; };
  auto [real, imag] = ComplexSeries(size, 2, 1.0, zero);
  Series short_ = EmptySeries(size, 1);
  Series phase = EmptySeries(size, 2), out = EmptySeries(size, 2);
  const auto code = [&](const Series & im, const PhaseDemodulationOptions & options) {
    try
    {
      svdlr::DemodulatePhase(real.View(), im.View(), phase.View(), out.View(), {}, options);
    }
    catch (const svdlr::Error & error)
    {
      return error.Code();
    }
    ADD_FAILURE() << "no error";
    return svdlr::ErrorCode::Aborted;
  };
  EXPECT_EQ(code(short_, {}), svdlr::ErrorCode::InvalidArgument);
  PhaseDemodulationOptions negative;
  negative.filterSigma = { 2.0, -1.0, 0.0 };
  EXPECT_EQ(code(imag, negative), svdlr::ErrorCode::InvalidArgument);
  imag(7, 1) = std::numeric_limits<float>::infinity();
  EXPECT_EQ(code(imag, {}), svdlr::ErrorCode::NonFiniteInput);
}

/** A noise scan: `volumes` volumes of complex Gaussian noise, sigma per channel; or the root-sum-of-squares
 * magnitude of `coils` such channels. */
std::pair<Series, Series>
NoiseScan(std::array<std::size_t, 3> size, std::size_t volumes, double sigma, unsigned coils, bool complexSamples,
          Random & random)
{
  Series first = EmptySeries(size, volumes), imag = EmptySeries(size, volumes);
  for (std::size_t i = 0; i < first.values.size(); ++i)
  {
    if (complexSamples)
    {
      first.values[i] = float(sigma * random.Normal());
      imag.values[i] = float(sigma * random.Normal());
      continue;
    }
    double power = 0.0;
    for (unsigned c = 0; c < coils; ++c)
    {
      const double a = sigma * random.Normal(), b = sigma * random.Normal();
      power += a * a + b * b;
    }
    first.values[i] = float(std::sqrt(power));
  }
  return { first, imag };
}

TEST(SVDLowRankNoiseScan, FindsTheKnownSigmaOfComplexRayleighAndChiScans)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::array<std::size_t, 3> size{ 20, 18, 10 };
  const double                     sigma = 3.0;
  struct Case
  {
    bool     complexSamples;
    unsigned coils;
  };
  for (const Case c : { Case{ true, 1 }, Case{ false, 1 }, Case{ false, 4 } })
  {
    SCOPED_TRACE(c.complexSamples ? "complex" : ("magnitude, coils " + std::to_string(c.coils)));
    const auto [first, imag] = NoiseScan(size, 3, sigma, c.coils, c.complexSamples, random);
    svdlr::NoiseScanOptions options;
    options.coils = c.coils;
    std::vector<float> map(first.Voxels(), -1.0f);
    const auto estimate = svdlr::EstimateNoiseFromScan(
      first.View(), c.complexSamples ? imag.View() : svdlr::SeriesView<const float>{}, map.data(), options);
    EXPECT_NEAR(estimate.sigma, sigma, 0.02 * sigma); // 3600 voxels x 3 volumes
    EXPECT_FALSE(estimate.uniform);
    EXPECT_EQ(estimate.samplesPerWindow, 125u * 3u * (c.complexSamples ? 2u : 1u));
    std::vector<float> sorted = map;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    EXPECT_NEAR(sorted[sorted.size() / 2], sigma, 0.03 * sigma);
    EXPECT_GT(*std::min_element(map.begin(), map.end()), 0.7 * sigma); // every window pools >= 8 x 3 samples
  }
}

TEST(SVDLowRankNoiseScan, ASmallScanGivesOneSigmaForTheWholeImage)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::array<std::size_t, 3> size{ 3, 3, 3 }; // 27 voxels x 1 volume: below kMinimumNoiseSamplesPerWindow
  const auto [first, imag] = NoiseScan(size, 1, 2.0, 1, false, random);
  std::vector<float> map(first.Voxels(), -1.0f);
  const auto estimate = svdlr::EstimateNoiseFromScan(first.View(), {}, map.data(), svdlr::NoiseScanOptions{});
  EXPECT_TRUE(estimate.uniform);
  EXPECT_EQ(estimate.samplesPerWindow, 27u);
  for (float s : map)
  {
    EXPECT_FLOAT_EQ(s, float(estimate.sigma));
  }
  svdlr::NoiseScanOptions even;
  even.window = 4;
  EXPECT_THROW(svdlr::EstimateNoiseFromScan(first.View(), {}, nullptr, even), svdlr::Error);
}

} // namespace
