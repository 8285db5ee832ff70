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
// The magnitude noise model (svdlr/MagnitudeNoise.h) against independent float64 references: the Rician mean in
// closed form (Bessel functions), and for several coils the non-central chi density integrated numerically with
// Simpson's rule; the transforms' inverses; and DenoiseLocalLowRank's magnitude path on a low-SNR phantom.
#include "svdlr/DenoiseChoices.h"
#include "svdlr/MagnitudeNoise.h"
#include "denoise/svdlrLocalDenoiseBackends.h"
#include "svdlrMagnitudePhantom.h"
#include "svdlrTestMatrices.h"
#include "svdlrTestSeries.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

namespace
{
using namespace svdlr::test;
using svdlr::NoncentralChiModel;

constexpr double kPi = 3.14159265358979323846;

/** E[M | nu] for one coil, sigma 1: sqrt(pi/2) L_1/2(-nu^2/2) = sqrt(pi/2) e^(-x/2) ((1 + x) I0(x/2) + x I1(x/2)),
 * x = nu^2 / 2 (the Laguerre form of the Rice mean). Bessel functions scaled by e^(-x/2) stay finite up to nu ~ 50. */
double
RiceMean(double nu)
{
  const double x = nu * nu / 2.0;
  const double scale = std::exp(-x / 2.0);
  return std::sqrt(kPi / 2.0) *
         ((1.0 + x) * std::cyl_bessel_i(0.0, x / 2.0) * scale + x * std::cyl_bessel_i(1.0, x / 2.0) * scale);
}

/** The non-central chi density of `coils` coils at sigma 1: m^N / nu^(N-1) exp(-(m^2 + nu^2) / 2) I_{N-1}(m nu), and
 * for nu = 0 the chi density with 2N degrees of freedom, m^(2N-1) exp(-m^2 / 2) / (2^(N-1) (N-1)!). */
double
Density(double m, double nu, unsigned coils)
{
  const double n = coils;
  if (nu == 0.0)
  {
    return std::pow(m, 2.0 * n - 1.0) * std::exp(-m * m / 2.0) / (std::pow(2.0, n - 1.0) * std::tgamma(n));
  }
  const double z = m * nu;
  // I_{N-1}(z) e^{-z} keeps the product finite; the remaining exponent is -(m - nu)^2 / 2.
  return std::pow(m, n) / std::pow(nu, n - 1.0) * std::exp(-(m - nu) * (m - nu) / 2.0) *
         (std::cyl_bessel_i(n - 1.0, z) * std::exp(-z));
}

/** The integral of h(m) p(m | nu) over m >= 0 by Simpson's rule on [0, nu + sqrt(2N) + 14], 20000 intervals. */
double
ReferenceExpectation(const std::function<double(double)> & h, double nu, unsigned coils)
{
  const int    intervals = 20000;
  const double end = nu + std::sqrt(2.0 * coils) + 14.0;
  const double step = end / intervals;
  double       sum = 0.0;
  for (int i = 0; i <= intervals; ++i)
  {
    const double m = i * step;
    const double weight = (i == 0 || i == intervals) ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0);
    sum += weight * h(m) * Density(m, nu, coils);
  }
  return sum * step / 3.0;
}

TEST(SVDLowRankMagnitudeNoise, RicianMeanMatchesTheClosedForm)
{
  const auto & model = NoncentralChiModel::ForCoils(1);
  for (double nu : { 0.0, 0.3, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 12.5, 20.0, 39.0, 45.0 })
  {
    EXPECT_NEAR(model.MeanMagnitude(nu), RiceMean(nu), 2e-4) << "nu " << nu;
  }
  // Beyond the closed form's range: the asymptotic series nu + 1 / (2 nu) + 1 / (8 nu^3).
  for (double nu : { 60.0, 200.0 })
  {
    EXPECT_NEAR(model.MeanMagnitude(nu), nu + 1.0 / (2.0 * nu) + 1.0 / (8.0 * nu * nu * nu), 2e-4) << "nu " << nu;
  }
}

TEST(SVDLowRankMagnitudeNoise, MomentsMatchTheDensityIntegralForSeveralCoils)
{
  for (unsigned coils : { 1u, 4u })
  {
    const auto & model = NoncentralChiModel::ForCoils(coils);
    const auto   g = [&model](double m) { return model.Stabilise(m); };
    for (double nu : { 0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0 })
    {
      SCOPED_TRACE("coils " + std::to_string(coils) + ", nu " + std::to_string(nu));
      EXPECT_NEAR(ReferenceExpectation([](double) { return 1.0; }, nu, coils), 1.0, 1e-9); // the reference itself
      EXPECT_NEAR(model.MeanMagnitude(nu), ReferenceExpectation([](double m) { return m; }, nu, coils), 2e-4);
      const double mean = ReferenceExpectation(g, nu, coils);
      const double square = ReferenceExpectation([&g](double m) { return g(m) * g(m); }, nu, coils);
      EXPECT_NEAR(model.ExpectedStabilised(nu), mean, 2e-4);
      EXPECT_NEAR(model.StabilisedVariance(nu), square - mean * mean, 1e-3);
    }
  }
}

TEST(SVDLowRankMagnitudeNoise, StabilisedVarianceIsNearOneAndNearerThanFirstOrder)
{
  for (unsigned coils : { 1u, 8u })
  {
    const auto &             model = NoncentralChiModel::ForCoils(coils);
    const NoncentralChiModel firstOrder(coils, 0);
    double                   worst = 0.0, worstFirstOrder = 0.0;
    for (double nu = 0.0; nu <= 40.0; nu += 0.05)
    {
      const double variance = model.StabilisedVariance(nu);
      // Measured: within 0.084 of 1 for one coil (at nu ~ 1.5, where the Rice shape changes fastest), 0.021 for
      // eight; within 0.003 from nu = 6 on (svdlr/MagnitudeNoise.h).
      EXPECT_NEAR(variance, 1.0, nu < 6.0 ? 0.09 : 0.005) << "coils " << coils << ", nu " << nu;
      worst = std::max(worst, std::abs(variance - 1.0));
      worstFirstOrder = std::max(worstFirstOrder, std::abs(firstOrder.StabilisedVariance(nu) - 1.0));
    }
    EXPECT_LT(worst, 0.75 * worstFirstOrder) << "coils " << coils;
  }
}

TEST(SVDLowRankMagnitudeNoise, ForwardThenInverseIsTheIdentity)
{
  for (unsigned coils : { 1u, 3u, 32u })
  {
    const auto & model = NoncentralChiModel::ForCoils(coils);
    for (double m = -1.0; m <= 120.0; m += 0.0137)
    {
      ASSERT_NEAR(model.InverseStabilise(model.Stabilise(m)), m, 1e-9 * std::max(1.0, m)) << "coils " << coils;
    }
    for (double nu = 0.01; nu <= 120.0; nu += 0.0113)
    {
      ASSERT_NEAR(model.SignalFromMeanMagnitude(model.MeanMagnitude(nu)), nu, 1e-6) << "coils " << coils;
      ASSERT_NEAR(model.SignalFromExpectedStabilised(model.ExpectedStabilised(nu)), nu, 1e-6) << "coils " << coils;
    }
    // Below the floor nothing is left of the signal.
    EXPECT_EQ(model.SignalFromMeanMagnitude(0.5 * model.MeanMagnitude(0.0)), 0.0);
    EXPECT_EQ(model.SignalFromExpectedStabilised(0.5 * model.ExpectedStabilised(0.0)), 0.0);
  }
}

TEST(SVDLowRankMagnitudeNoise, SeriesTransformsScaleWithEachVoxelsSigmaAndCopyWhereItIsZero)
{
  Series magnitude = EmptySeries({ 3, 2, 1 }, 4);
  for (std::size_t i = 0; i < magnitude.values.size(); ++i)
  {
    magnitude.values[i] = static_cast<float>(0.37 * i);
  }
  const std::vector<float> sigma{ 0.0f, 0.5f, 1.0f, 2.0f, 3.5f, 10.0f };
  const auto &             model = NoncentralChiModel::ForCoils(2);
  Series                   stabilised = EmptySeries(magnitude.size, magnitude.volumes);
  Series                   floorless = EmptySeries(magnitude.size, magnitude.volumes);
  svdlr::StabiliseMagnitude(magnitude.View(), sigma.data(), 2, stabilised.View());
  svdlr::CorrectNoiseFloor(magnitude.View(), sigma.data(), 2, floorless.View());
  Series unstabilised = stabilised;
  svdlr::UnstabiliseMagnitude(unstabilised.View(), sigma.data(), 2, svdlr::MagnitudeEstimate::Signal,
                              unstabilised.View()); // in place
  for (std::size_t v = 0; v < 6; ++v)
  {
    for (std::size_t t = 0; t < 4; ++t)
    {
      const double s = sigma[v], m = magnitude(v, t);
      EXPECT_NEAR(stabilised(v, t), s > 0 ? s * model.Stabilise(m / s) : m, 1e-5 * (1.0 + m));
      EXPECT_NEAR(floorless(v, t), s > 0 ? s * model.SignalFromMeanMagnitude(m / s) : m, 1e-5 * (1.0 + m));
      const double d = stabilised(v, t);
      EXPECT_NEAR(unstabilised(v, t), s > 0 ? s * model.SignalFromExpectedStabilised(d / s) : m, 1e-4 * (1.0 + m));
    }
  }
  std::vector<float> negative(sigma);
  negative[3] = -1.0f;
  EXPECT_THROW(svdlr::StabiliseMagnitude(magnitude.View(), negative.data(), 2, stabilised.View()), svdlr::Error);
  EXPECT_THROW(svdlr::StabiliseMagnitude(magnitude.View(), nullptr, 2, stabilised.View()), svdlr::Error);
  EXPECT_THROW(svdlr::StabiliseMagnitude(magnitude.View(), sigma.data(), 0, stabilised.View()), svdlr::Error);
}

double
MeanSquaredError(const Series & a, const Series & b)
{
  double sum = 0.0;
  for (std::size_t i = 0; i < a.values.size(); ++i)
  {
    sum += (double(a.values[i]) - b.values[i]) * (double(a.values[i]) - b.values[i]);
  }
  return sum / static_cast<double>(a.values.size());
}

Series
Denoise(const Series & input, const svdlr::MagnitudeNoiseOptions & model, const float * sigma)
{
  Series                     output = EmptySeries(input.size, input.volumes);
  svdlr::LocalDenoiseOptions options;
  options.magnitudeNoise = model;
  options.noiseSigma = sigma;
  options.backend = svdlr::Backend::CPU;
  svdlr::DenoiseLocalLowRank(input.View(), output.View(), {}, options);
  return output;
}

// b=0 SNR 5, sigma 2: PSNR against the noise-free signal nu.
TEST(SVDLowRankMagnitudeNoise, StabilisingAndRemovingTheFloorBringsALowSnrSeriesCloserToTheSignal)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const double sigma = 2.0;
  for (unsigned coils : { 1u, 4u })
  {
    const MagnitudePhantom   phantom = MakeMagnitudePhantom(5.0, sigma, coils, random);
    const std::vector<float> sigmaMap(phantom.signal.Voxels(), static_cast<float>(sigma));
    svdlr::MagnitudeNoiseOptions plain, stabilised, floorOnly;
    stabilised.stabilise = stabilised.noiseFloor = true;
    floorOnly.noiseFloor = true;
    stabilised.coils = floorOnly.coils = coils;
    const double noisy = MeanSquaredError(phantom.magnitude, phantom.signal);
    const double magnitude = MeanSquaredError(Denoise(phantom.magnitude, plain, nullptr), phantom.signal);
    const double vstKnown = MeanSquaredError(Denoise(phantom.magnitude, stabilised, sigmaMap.data()), phantom.signal);
    const double vstEstimated = MeanSquaredError(Denoise(phantom.magnitude, stabilised, nullptr), phantom.signal);
    const double floorKnown = MeanSquaredError(Denoise(phantom.magnitude, floorOnly, sigmaMap.data()), phantom.signal);
    const auto gainOverMagnitude = [magnitude](double error) { return 10.0 * std::log10(magnitude / error); };
    std::cout << random.SeedTrace() << ", coils " << coils << ": PSNR against the signal, gain over magnitude MP-PCA "
              << "(which gains " << 10.0 * std::log10(noisy / magnitude) << " dB over the noisy input): VST+floor "
              << gainOverMagnitude(vstKnown) << " dB (sigma known), " << gainOverMagnitude(vstEstimated)
              << " dB (sigma estimated); floor only " << gainOverMagnitude(floorKnown) << " dB (sigma known)"
              << std::endl;
    const std::string coilsName = "coils" + std::to_string(coils);
    RecordSpread(coilsName + ".vstKnownGainDb", random.Seed(), gainOverMagnitude(vstKnown));
    RecordSpread(coilsName + ".vstEstimatedGainDb", random.Seed(), gainOverMagnitude(vstEstimated));
    RecordSpread(coilsName + ".floorKnownGainDb", random.Seed(), gainOverMagnitude(floorKnown));
    // Over 100 seeds (test/seed-spread/measure.sh), in dB, min / mean / sd: one coil 5.89 / 6.20 / 0.12 (VST, sigma
    // known), 3.57 / 3.84 / 0.10 (VST, estimated), 5.74 / 6.06 / 0.12 (floor only); four coils 12.84 / 13.11 / 0.12,
    // 4.69 / 4.93 / 0.08, 12.75 / 13.04 / 0.12. The bounds sit about 5 sd below the minima. With the first pass
    // that measures sigma on the coarse lattice (kPatchExtentPerSigmaPassStride), 100 seeds: VST estimated
    // 3.55 / 3.81 / 0.10 (one coil) and 4.66 / 4.92 / 0.10 (four), the others unchanged.
    const bool one = coils == 1;
    EXPECT_GT(gainOverMagnitude(vstKnown), one ? 5.3 : 12.2) << "coils " << coils;
    EXPECT_GT(gainOverMagnitude(vstEstimated), one ? 3.0 : 4.2) << "coils " << coils;
    EXPECT_GT(gainOverMagnitude(floorKnown), one ? 5.1 : 12.1) << "coils " << coils;
  }
}

// The model with a known σ is its three steps, whichever way the engine takes them: around the CPU backend's run
// (no volume groups), or before the demeaning pass and after it (volume groups). Bit for bit, as the same operations
// run in the same order on the same numbers.
TEST(SVDLowRankMagnitudeNoise, VstIsStabiliseThenDenoiseThenInvertWithAndWithoutVolumeGroups)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const MagnitudePhantom     phantom = MakeMagnitudePhantom(5.0, 2.0, 1, random);
  const Series &             input = phantom.magnitude;
  const std::vector<float>   sigma(input.Voxels(), 2.0f);
  std::vector<std::uint32_t> groups(input.volumes);
  for (std::size_t t = 0; t < groups.size(); ++t)
  {
    groups[t] = t % 3 == 0 ? 0 : 1;
  }
  const std::uint32_t * const choices[] = { nullptr, groups.data() };
  for (const std::uint32_t * volumeGroups : choices)
  {
    svdlr::LocalDenoiseOptions plain;
    plain.noiseSigma = sigma.data();
    plain.volumeGroups = volumeGroups;
    plain.backend = svdlr::Backend::CPU;
    Series stabilised = EmptySeries(input.size, input.volumes);
    Series expected = EmptySeries(input.size, input.volumes);
    svdlr::StabiliseMagnitude(input.View(), sigma.data(), 1, stabilised.View());
    svdlr::DenoiseLocalLowRank(stabilised.View(), expected.View(), {}, plain);
    svdlr::UnstabiliseMagnitude(expected.View(), sigma.data(), 1, svdlr::MagnitudeEstimate::Signal, expected.View());

    svdlr::LocalDenoiseOptions model = plain;
    model.magnitudeNoise.stabilise = model.magnitudeNoise.noiseFloor = true;
    Series                           output = EmptySeries(input.size, input.volumes);
    const svdlr::LocalDenoiseReport report = svdlr::DenoiseLocalLowRank(input.View(), output.View(), {}, model);
    EXPECT_EQ(svdlr::MagnitudeNoiseName(report.magnitudeNoise), "vst+noise-floor");
    std::size_t differences = 0;
    for (std::size_t i = 0; i < output.values.size(); ++i)
    {
      differences += output.values[i] != expected.values[i];
    }
    EXPECT_EQ(differences, 0u) << (volumeGroups ? "with" : "without") << " volume groups";
  }
}

// The σ pass forms the maps alone (an output view with null data): the same σ and rank maps as a whole pass, bit
// for bit on the CPU (the same eigenvalues and ranks, summed in the same order), for each aggregation and patch
// shape, with and without a mask. Its logic errors: a transform or volume groups with it.
TEST(SVDLowRankMagnitudeNoise, PassForTheMapsAloneGivesTheWholePasssMaps)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const Series &            input = MakeMagnitudePhantom(5.0, 2.0, 1, random).magnitude;
  std::vector<std::uint8_t> mask(input.Voxels());
  for (std::size_t v = 0; v < mask.size(); ++v)
  {
    mask[v] = random.Uniform(0.0, 1.0) < 0.7;
  }
  const svdlr::SeriesView<float> mapsAlone{ nullptr, input.size, input.volumes, input.Strides() };
  for (const auto aggregation : { svdlr::PatchAggregation::OverlapAverage, svdlr::PatchAggregation::CentreVoxel })
  {
    for (const auto shape : { svdlr::PatchShape::Cuboid, svdlr::PatchShape::Sphere })
    {
      for (const bool masked : { false, true })
      {
        svdlr::LocalDenoiseOptions options;
        options.backend = svdlr::Backend::CPU;
        options.aggregation = aggregation;
        options.patchShape = shape;
        options.mask = masked ? mask.data() : nullptr;
        std::vector<float>         sigma(input.Voxels(), -1.0f), sigmaAlone(input.Voxels(), -2.0f);
        std::vector<std::uint16_t> rank(input.Voxels(), 1), rankAlone(input.Voxels(), 2);
        Series                     output = EmptySeries(input.size, input.volumes);
        svdlr::detail::DenoiseLowRankPass(input.View(), output.View(), { sigma.data(), rank.data() }, options, nullptr);
        svdlr::detail::DenoiseLowRankPass(input.View(), mapsAlone, { sigmaAlone.data(), rankAlone.data() }, options,
                                          nullptr);
        SCOPED_TRACE(std::string(svdlr::AggregationName(aggregation)) + (masked ? ", masked" : "") +
                     (shape == svdlr::PatchShape::Sphere ? ", sphere" : ", cuboid"));
        EXPECT_EQ(sigmaAlone, sigma);
        EXPECT_EQ(rankAlone, rank);
        EXPECT_GT(*std::max_element(sigma.begin(), sigma.end()), 0.0f);
      }
    }
  }
  svdlr::LocalDenoiseOptions options;
  std::vector<std::uint32_t> groups(input.volumes, 0);
  options.volumeGroups = groups.data();
  EXPECT_THROW(svdlr::detail::DenoiseLowRankPass(input.View(), mapsAlone, {}, options, nullptr), std::logic_error);
}

TEST(SVDLowRankMagnitudeNoise, WithoutSigmaAPolicyThatEstimatesNoneIsRefused)
{
  Series                     input = EmptySeries({ 5, 5, 5 }, 8);
  Series                     output = EmptySeries({ 5, 5, 5 }, 8);
  svdlr::LocalDenoiseOptions options;
  options.policy = svdlr::RankPolicy::Fixed(2);
  options.magnitudeNoise.stabilise = true;
  EXPECT_THROW(svdlr::DenoiseLocalLowRank(input.View(), output.View(), {}, options), svdlr::Error);
}

} // namespace
