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
// The σ map of a magnitude series corrected for its noise floor (svdlr::CorrectSigmaForNoiseFloor, issue 21 item 7)
// against an independent float64 reference: the non-central chi mean from its series (Kummer's form of the
// generalised Laguerre function), inverted by bisection, the variance ratio from it, and the patch windows walked
// voxel by voxel. Then DenoiseLocalLowRank's wiring of it, the combinations it refuses, and, on Rician noise of known
// σ, how close the corrected map comes.
#include "svdlr/MagnitudeNoise.h"
#include "svdlrMagnitudePhantom.h"
#include "svdlrTestMatrices.h"
#include "svdlrTestSeed.h"
#include "svdlrTestSeries.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <vector>

namespace
{
using namespace svdlr::test;
using svdlr::NoncentralChiModel;

constexpr double kPi = 3.14159265358979323846;

/** E[M | nu] of `coils` coils at sigma 1: sqrt(pi/2) (2N - 1)!! / (2^(N-1) (N-1)!) e^(-x) 1F1(N + 1/2; N; x) with
 * x = nu^2 / 2 (Kummer's transform of sqrt(pi/2) (2N-1)!!/(2^(N-1) (N-1)!) 1F1(-1/2; N; -x)), summed as a series of
 * positive terms; finite in double for nu up to about 37. */
double
ReferenceMean(double nu, unsigned coils)
{
  const double x = nu * nu / 2.0;
  double       term = 1.0, sum = 1.0;
  for (int k = 0; k < 100000 && term > 1e-18 * sum; ++k)
  {
    term *= (coils + 0.5 + k) / (coils + k) * x / (k + 1.0);
    sum += term;
  }
  double constant = std::sqrt(kPi / 2.0);
  for (unsigned i = 1; i < coils; ++i)
  {
    constant *= (2.0 * i + 1.0) / (2.0 * i);
  }
  return constant * std::exp(-x) * sum;
}

/** nu with ReferenceMean(nu) = mean, by bisection on [0, 36]; 0 at or below the floor. */
double
ReferenceSignal(double mean, unsigned coils)
{
  double low = 0.0, high = 36.0;
  if (mean <= ReferenceMean(0.0, coils))
  {
    return 0.0;
  }
  for (int i = 0; i < 80; ++i)
  {
    const double middle = 0.5 * (low + high);
    (ReferenceMean(middle, coils) < mean ? low : high) = middle;
  }
  return 0.5 * (low + high);
}

/** Var[M | nu] / sigma^2 = nu^2 + 2N - E[M | nu]^2. */
double
ReferenceVarianceRatio(double nu, unsigned coils)
{
  const double mean = ReferenceMean(nu, coils);
  return nu * nu + 2.0 * coils - mean * mean;
}

/** The correction as docs/denoising.md states it, in float64 and by brute force: per pass, each voxel's variance
 * ratio averaged over its volumes at the SNR of the σ of the pass before, then over its patch window (extent e,
 * shifted inward at the borders), and σ = measured / sqrt(that mean). Inside means σ > 0 and in the mask; a voxel
 * outside takes the mean σ of the voxels inside its own window, and none if there are none. */
std::vector<double>
ReferenceCorrection(const Series & denoised, const std::vector<float> & measured, const std::vector<std::uint8_t> & mask,
                    const std::array<std::size_t, 3> & extent, unsigned coils, unsigned passes)
{
  const std::array<std::size_t, 3> & n = denoised.size;
  const std::size_t                  voxels = denoised.Voxels();
  const auto inside = [&](std::size_t v) { return measured[v] > 0.0f && (mask.empty() || mask[v]); };
  const auto start = [](std::size_t c, std::size_t e, std::size_t size) {
    const long long first = static_cast<long long>(c) - static_cast<long long>(e / 2);
    return static_cast<std::size_t>(std::clamp(first, 0LL, static_cast<long long>(size - e)));
  };
  /** The voxels of v's window. */
  const auto window = [&](std::size_t v) {
    const std::size_t x = v % n[0], y = v / n[0] % n[1], z = v / (n[0] * n[1]);
    const std::size_t sx = start(x, extent[0], n[0]), sy = start(y, extent[1], n[1]), sz = start(z, extent[2], n[2]);
    std::vector<std::size_t> voxelsOf;
    for (std::size_t k = sz; k < sz + extent[2]; ++k)
      for (std::size_t j = sy; j < sy + extent[1]; ++j)
        for (std::size_t i = sx; i < sx + extent[0]; ++i)
        {
          voxelsOf.push_back(i + n[0] * (j + n[1] * k));
        }
    return voxelsOf;
  };
  std::vector<double> sigma(measured.begin(), measured.end()), ratio(voxels, 0.0), own(voxels, 0.0);
  for (unsigned pass = 0; pass < passes; ++pass)
  {
    for (std::size_t v = 0; v < voxels; ++v)
    {
      double sum = 0.0, count = 0.0;
      for (const std::size_t w : window(v))
      {
        sum += inside(w) ? sigma[w] : 0.0;
        count += inside(w) ? 1.0 : 0.0;
      }
      own[v] = inside(v) ? sigma[v] : count > 0.0 ? sum / count : 0.0;
      ratio[v] = 0.0;
      for (std::size_t t = 0; own[v] > 0.0 && t < denoised.volumes; ++t)
      {
        ratio[v] += ReferenceVarianceRatio(ReferenceSignal(denoised(v, t) / own[v], coils), coils) / denoised.volumes;
      }
    }
    std::vector<double> next(sigma);
    for (std::size_t v = 0; v < voxels; ++v)
    {
      double sum = 0.0, count = 0.0;
      for (const std::size_t w : window(v))
      {
        sum += own[w] > 0.0 ? ratio[w] : 0.0;
        count += own[w] > 0.0 ? 1.0 : 0.0;
      }
      next[v] = inside(v) ? measured[v] / std::sqrt(sum / count) : measured[v];
    }
    sigma = next;
  }
  return sigma;
}

TEST(SVDLowRankSigmaFloorCorrection, MagnitudeVarianceMatchesTheClosedForm)
{
  for (unsigned coils : { 1u, 2u, 4u, 8u })
  {
    const NoncentralChiModel & model = NoncentralChiModel::ForCoils(coils);
    for (double nu = 0.0; nu <= 30.0; nu += 0.173)
    {
      EXPECT_NEAR(model.MagnitudeVariance(nu), ReferenceVarianceRatio(nu, coils), 2e-4)
        << "coils " << coils << ", nu " << nu;
    }
    EXPECT_EQ(model.MagnitudeVariance(1e3), 1.0);
    // The lookup without a search: its uniform grid is coarser than the signal table just above the floor, where
    // the mean hardly moves with nu (measured: at most 4e-5 apart).
    for (double mean = 0.0; mean <= 45.0; mean += 0.0371)
    {
      EXPECT_NEAR(model.MagnitudeVarianceAtMean(mean), model.MagnitudeVariance(model.SignalFromMeanMagnitude(mean)),
                  1e-4)
        << "coils " << coils << ", mean " << mean;
    }
  }
  // The floor itself, 2 - pi/2 for one coil, to the tables' quadrature error (their mean errs by about 7e-5 there).
  EXPECT_NEAR(NoncentralChiModel::ForCoils(1).MagnitudeVariance(0.0), 2.0 - kPi / 2.0, 2e-4);
}

/** A denoised-looking magnitude series near the floor and above it (D / sigma from about 1 to 12), and a σ map. */
struct FloorCase
{
  Series                    denoised;
  std::vector<float>        sigma;
  std::vector<std::uint8_t> mask;
};

FloorCase
MakeFloorCase(Random & random)
{
  FloorCase c{ EmptySeries({ 7, 6, 5 }, 9), {}, {} };
  const std::size_t voxels = c.denoised.Voxels();
  c.sigma.resize(voxels);
  c.mask.resize(voxels);
  for (std::size_t v = 0; v < voxels; ++v)
  {
    c.sigma[v] = static_cast<float>(random.Uniform(0.5, 2.0));
    c.mask[v] = random.Uniform(0.0, 1.0) < 0.8;
    const double s0 = random.Uniform(0.5, 12.0);
    for (std::size_t t = 0; t < c.denoised.volumes; ++t)
    {
      // Above the floor (1.25 sigma for one coil) mostly, sometimes below it, as a denoised magnitude is.
      c.denoised(v, t) = static_cast<float>(c.sigma[v] * (1.0 + s0 * std::exp(-0.3 * t)) * random.Uniform(0.9, 1.1));
    }
  }
  c.sigma[3] = 0.0f; // as outside a mask: kept, and left out of its neighbours' windows
  return c;
}

TEST(SVDLowRankSigmaFloorCorrection, MatchesTheFloat64Reference)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const FloorCase                  c = MakeFloorCase(random);
  const std::array<std::size_t, 3> extent{ 3, 5, 3 };
  for (unsigned coils : { 1u, 3u })
  {
    for (const bool masked : { false, true })
    {
      const std::vector<std::uint8_t> mask = masked ? c.mask : std::vector<std::uint8_t>{};
      std::vector<float>              corrected(c.sigma.size(), -1.0f);
      svdlr::CorrectSigmaForNoiseFloor(c.denoised.View(), c.sigma.data(), masked ? mask.data() : nullptr, extent,
                                       coils, corrected.data(), 2);
      const std::vector<double> reference =
        ReferenceCorrection(c.denoised, c.sigma, mask, extent, coils, svdlr::kSigmaFloorPasses);
      double worst = 0.0;
      for (std::size_t v = 0; v < c.sigma.size(); ++v)
      {
        // The engine interpolates tables whose mean and variance err by about 1e-4 (MagnitudeVarianceMatches...).
        EXPECT_NEAR(corrected[v], reference[v], 3e-4 * reference[v]) << "voxel " << v << ", coils " << coils;
        worst = std::max(worst, std::abs(corrected[v] / reference[v] - 1.0));
        if (reference[v] > 0.0 && reference[v] != c.sigma[v])
        {
          EXPECT_GT(corrected[v], c.sigma[v]) << "the floor only lowers the spread, so the correction only raises σ";
        }
      }
      std::cout << random.SeedTrace() << ", coils " << coils << (masked ? ", masked" : "")
                << ": largest relative difference from the reference " << worst << std::endl;
      // In place gives the same.
      std::vector<float> inPlace(c.sigma);
      svdlr::CorrectSigmaForNoiseFloor(c.denoised.View(), inPlace.data(), masked ? mask.data() : nullptr, extent,
                                       coils, inPlace.data(), 1);
      EXPECT_EQ(inPlace, corrected);
    }
  }
}

TEST(SVDLowRankSigmaFloorCorrection, BadArgumentsAreRefused)
{
  Random             random(7);
  const FloorCase    c = MakeFloorCase(random);
  std::vector<float> out(c.sigma.size());
  std::vector<float> negative(c.sigma);
  negative[5] = -1.0f;
  EXPECT_THROW(svdlr::CorrectSigmaForNoiseFloor(c.denoised.View(), negative.data(), nullptr, { 3, 3, 3 }, 1,
                                                out.data()),
               svdlr::Error);
  EXPECT_THROW(svdlr::CorrectSigmaForNoiseFloor(c.denoised.View(), nullptr, nullptr, { 3, 3, 3 }, 1, out.data()),
               svdlr::Error);
  EXPECT_THROW(svdlr::CorrectSigmaForNoiseFloor(c.denoised.View(), c.sigma.data(), nullptr, { 4, 3, 3 }, 1,
                                                out.data()),
               svdlr::Error);
  EXPECT_THROW(svdlr::CorrectSigmaForNoiseFloor(c.denoised.View(), c.sigma.data(), nullptr, { 3, 7, 3 }, 1,
                                                out.data()),
               svdlr::Error);
  EXPECT_THROW(svdlr::CorrectSigmaForNoiseFloor(c.denoised.View(), c.sigma.data(), nullptr, { 3, 3, 3 }, 0,
                                                out.data()),
               svdlr::Error);
}

struct DenoiseRun
{
  Series              output;
  std::vector<float>  sigma;
  svdlr::LocalDenoiseReport report;
};

DenoiseRun
Denoise(const Series & input, const svdlr::LocalDenoiseOptions & options)
{
  DenoiseRun run{ EmptySeries(input.size, input.volumes), std::vector<float>(input.Voxels()), {} };
  run.report = svdlr::DenoiseLocalLowRank(input.View(), run.output.View(), { run.sigma.data(), nullptr }, options);
  return run;
}

TEST(SVDLowRankSigmaFloorCorrection, DenoiserCorrectsItsOwnMapWithItsPatchAndPlacesTheFloorWithIt)
{
  // The magnitude path's wiring: the map is the plain run's map corrected with the plain run's output, mask and
  // patch, and the floor is then removed with the corrected σ.
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const MagnitudePhantom    phantom = MakeMagnitudePhantom(6.0, 3.0, 1, random);
  std::vector<std::uint8_t> mask(phantom.magnitude.Voxels());
  for (std::size_t v = 0; v < mask.size(); ++v)
  {
    mask[v] = (v / 3) % 5 != 0;
  }
  for (const svdlr::PatchShape shape : { svdlr::PatchShape::Cuboid, svdlr::PatchShape::Sphere })
  {
    svdlr::LocalDenoiseOptions plain;
    plain.backend = svdlr::Backend::CPU;
    plain.mask = mask.data();
    plain.patchShape = shape;
    plain.noiseEstimator = svdlr::NoiseEstimator::ResidualRefit;
    const DenoiseRun expectedPass = Denoise(phantom.magnitude, plain);
    std::vector<float> expectedSigma(expectedPass.sigma.size());
    svdlr::CorrectSigmaForNoiseFloor(expectedPass.output.View(), expectedPass.sigma.data(), mask.data(),
                                     expectedPass.report.patchSize, 1, expectedSigma.data());

    svdlr::LocalDenoiseOptions corrected = plain;
    corrected.magnitudeNoise.sigmaFloorCorrection = true;
    const DenoiseRun run = Denoise(phantom.magnitude, corrected);
    EXPECT_EQ(run.sigma, expectedSigma);
    EXPECT_EQ(run.output.values, expectedPass.output.values) << "the correction changes the map only";

    corrected.magnitudeNoise.noiseFloor = true;
    const DenoiseRun floorRun = Denoise(phantom.magnitude, corrected);
    Series    expectedFloor = EmptySeries(phantom.magnitude.size, phantom.magnitude.volumes);
    svdlr::CorrectNoiseFloor(expectedPass.output.View(), expectedSigma.data(), 1, expectedFloor.View());
    EXPECT_EQ(floorRun.sigma, expectedSigma);
    EXPECT_EQ(floorRun.output.values, expectedFloor.values);
  }
}

TEST(SVDLowRankSigmaFloorCorrection, KnownSigmaAndStabilisationAreRefused)
{
  const Series               input = EmptySeries({ 5, 5, 5 }, 8);
  Series                     output = EmptySeries({ 5, 5, 5 }, 8);
  const std::vector<float>   sigma(input.Voxels(), 1.0f);
  svdlr::LocalDenoiseOptions options;
  options.backend = svdlr::Backend::CPU;
  options.magnitudeNoise.sigmaFloorCorrection = true;
  options.noiseSigma = sigma.data();
  EXPECT_THROW(svdlr::DenoiseLocalLowRank(input.View(), output.View(), {}, options), svdlr::Error);
  EXPECT_FALSE(svdlr::SigmaFloorCorrectionProblem(options.magnitudeNoise, true).empty());
  options.noiseSigma = nullptr;
  options.magnitudeNoise.stabilise = true;
  EXPECT_THROW(svdlr::DenoiseLocalLowRank(input.View(), output.View(), {}, options), svdlr::Error);
  EXPECT_FALSE(svdlr::SigmaFloorCorrectionProblem(options.magnitudeNoise, false).empty());
  options.magnitudeNoise.stabilise = false;
  EXPECT_TRUE(svdlr::SigmaFloorCorrectionProblem(options.magnitudeNoise, false).empty());
  options.policy = svdlr::RankPolicy::Fixed(2);
  EXPECT_THROW(svdlr::DenoiseLocalLowRank(input.View(), output.View(), {}, options), svdlr::Error);
}

double
MedianAbsoluteError(const std::vector<float> & sigma, double truth)
{
  std::vector<double> errors(sigma.size());
  for (std::size_t v = 0; v < sigma.size(); ++v)
  {
    errors[v] = std::abs(sigma[v] / truth - 1.0);
  }
  std::nth_element(errors.begin(), errors.begin() + errors.size() / 2, errors.end());
  return errors[errors.size() / 2];
}

TEST(SVDLowRankSigmaFloorCorrection, CorrectedMapIsCloseToTheTrueSigmaOnRicianNoise)
{
  // b=0 SNR 6 with diffusion decay to about 0.2 sigma: much of the series sits on the floor, where the magnitude's
  // spread, and with it the residual refit's map, is low.
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const double               sigma = 3.0;
  const MagnitudePhantom     phantom = MakeMagnitudePhantom(6.0, sigma, 1, random);
  svdlr::LocalDenoiseOptions options;
  options.backend = svdlr::Backend::CPU;
  options.noiseEstimator = svdlr::NoiseEstimator::ResidualRefit;
  const double measured = MedianAbsoluteError(Denoise(phantom.magnitude, options).sigma, sigma);
  options.magnitudeNoise.sigmaFloorCorrection = true;
  const double corrected = MedianAbsoluteError(Denoise(phantom.magnitude, options).sigma, sigma);
  std::cout << random.SeedTrace() << ": median |sigma error| " << 100.0 * measured << " % (residual refit), "
            << 100.0 * corrected << " % (floor-corrected)" << std::endl;
  RecordSpread("measuredMedianAbsError", random.Seed(), measured);
  RecordSpread("correctedMedianAbsError", random.Seed(), corrected);
  // Over 500 seeds (test/seed-spread/measure.sh, 2026-11-26), median |error| min / mean / max / sd: the refit's map
  // 13.7 / 15.7 / 17.6 / 0.56 %, the corrected map 1.2 / 3.2 / 5.5 / 0.73 % (this phantom is smaller and at lower SNR
  // than docs/denoising.md's). The bound is 1.5 times the farthest value's distance above the mean (svdlrTestSeed.h).
  EXPECT_LT(corrected, 0.067);
  EXPECT_LT(corrected, measured);
}

} // namespace
