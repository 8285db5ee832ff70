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
// SVDLowRankReconstructionImageFilter's ranks chosen from the noise (Gavish-Donoho, Marchenko-Pastur): on real MRI
// (axial slices of the Colin27 brain) with added Gaussian noise of known σ, and the parameters' rules.
#include "itkSVDLowRankReconstructionImageFilter.h"

#include "itkImageFileReader.h"
#include "itkImageRegionConstIterator.h"
#include "itkImageRegionIterator.h"
#include "itkNiftiImageIOFactory.h"
#include "svdlrTestData.h"
#include "svdlrTestMatrices.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <sstream>
#include <string>

namespace
{
using namespace svdlr::test;

using Volume = itk::Image<float, 3>;
using Filter = itk::SVDLowRankReconstructionImageFilter<Volume>;
using RankSelection = itk::SVDLowRankReconstructionEnums::RankSelection;
using Estimator = itk::SVDLowRankReconstructionEnums::MarchenkoPasturEstimator;

// Axial slices 60, 80, 100, 120 of Colin27 (181 x 217 x 181, intensities up to about 100), or null when the file is
// missing (a failure when SVDLR_REQUIRE_TEST_DATA=1).
Volume::Pointer
Colin27AxialSlices()
{
  const std::string path = svdlr_test::Colin27Path();
  if (path.empty())
  {
    return nullptr;
  }
  itk::NiftiImageIOFactory::RegisterOneFactory();
  const auto brain = itk::ReadImage<Volume>(path);
  auto       size = brain->GetLargestPossibleRegion().GetSize();
  size[2] = 4;
  auto slices = Volume::New();
  slices->SetRegions(Volume::RegionType(size));
  slices->Allocate();
  for (itk::IndexValueType z = 0; z < 4; ++z)
  {
    for (itk::IndexValueType y = 0; y < static_cast<itk::IndexValueType>(size[1]); ++y)
    {
      for (itk::IndexValueType x = 0; x < static_cast<itk::IndexValueType>(size[0]); ++x)
      {
        slices->SetPixel({ { x, y, z } }, brain->GetPixel({ { x, y, 60 + 20 * z } }));
      }
    }
  }
  return slices;
}

Volume::Pointer
WithNoise(const Volume * clean, double sigma, Random & random)
{
  auto noisy = Volume::New();
  noisy->CopyInformation(clean);
  noisy->SetRegions(clean->GetLargestPossibleRegion());
  noisy->Allocate();
  itk::ImageRegionConstIterator<Volume> in(clean, clean->GetLargestPossibleRegion());
  itk::ImageRegionIterator<Volume>      out(noisy, noisy->GetLargestPossibleRegion());
  for (; !in.IsAtEnd(); ++in, ++out)
  {
    out.Set(static_cast<float>(in.Get() + sigma * random.Normal()));
  }
  return noisy;
}

double
Distance(const Volume * a, const Volume * b)
{
  itk::ImageRegionConstIterator<Volume> ia(a, a->GetLargestPossibleRegion());
  itk::ImageRegionConstIterator<Volume> ib(b, b->GetLargestPossibleRegion());
  double                                sum = 0.0;
  for (; !ia.IsAtEnd(); ++ia, ++ib)
  {
    const double d = double(ia.Get()) - double(ib.Get());
    sum += d * d;
  }
  return std::sqrt(sum);
}

Filter::Pointer
FilterOn(const Volume * input)
{
  auto filter = Filter::New();
  filter->SetInput(input);
  filter->SetBackend(itk::SVDLowRankReconstructionEnums::Backend::CPU);
  return filter;
}

class SVDLowRankReconstructionNoiseRank : public ::testing::Test
{
protected:
  void
  SetUp() override
  {
    m_Clean = Colin27AxialSlices();
    if (!m_Clean)
    {
      GTEST_SKIP() << "test data missing: Colin27 (Debian package mricron-data)";
    }
  }

  Volume::Pointer m_Clean;
};

struct NoisePolicy
{
  const char * name;
  const char * tag; // of the quantities recorded for test/seed-spread
  void (*configure)(Filter *);
};

const NoisePolicy kNoisePolicies[] = {
  { "Gavish-Donoho, estimated sigma", "gd", [](Filter * f) { f->SetRankSelection(RankSelection::GavishDonoho); } },
  { "Marchenko-Pastur, Veraart 2016", "mp",
    [](Filter * f) { f->SetMarchenkoPasturEstimator(Estimator::Veraart2016); } },
  { "Marchenko-Pastur, Cordero-Grande 2019", "mp-cg",
    [](Filter * f) { f->SetMarchenkoPasturEstimator(Estimator::CorderoGrande2019); } },
};

/** RecordSpread of `quantity` for `policy`. */
void
Record(const NoisePolicy & policy, const std::string & quantity, const Random & random, double value)
{
  RecordSpread(std::string(policy.tag) + "." + quantity, random.Seed(), value);
}

Volume::Pointer
TruncatedToRank(const Volume * image, unsigned int rank)
{
  auto truncate = FilterOn(image);
  truncate->SetRank(rank);
  truncate->Update();
  return truncate->GetOutput();
}

// The tolerances of the two tests below come from test/seed-spread/measure.sh, 500 seeds each (2026-11-25), with the
// margin rule of svdlrTestSeed.h. σ/σtrue counts 4 slices per seed (2000 values).

// Real brain content that is exactly low rank (the slices' rank-5 truncations) plus noise of σ = 10: the model every
// noise policy assumes. Measured (min..max, mean, standard deviation):
//                       σ/σtrue per slice            σ/σtrue, mean of 4 slices    rank per slice
//   Gavish-Donoho       0.986..1.039, 1.014, 0.008   1.002..1.030, 1.014, 0.004   5 always
//   MP, Veraart 2016    0.967..1.002, 0.986, 0.005   0.977..0.994, 0.986, 0.003   5..8, mean 5.27
//   MP, Cordero-Grande  0.967..1.002, 0.987, 0.004   0.979..0.994, 0.987, 0.002   5..7, mean 5.13
// and the output's distance to the clean slices over the noisy input's: 0.220..0.274 (mean 0.224 to 0.236).
// Bounds: σ within 6 % per slice (Gavish-Donoho's 0.971..1.055, Marchenko-Pastur's 0.957..1.015 by the rule) and
// 4 % on the mean of the slices, Marchenko-Pastur's rank 5..9, the distance ratio below 0.3.
TEST_F(SVDLowRankReconstructionNoiseRank, LowRankBrainPlusNoiseGivesSigmaAndRank)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  constexpr double sigma = 10.0;
  const auto       clean = TruncatedToRank(m_Clean, 5);
  const auto       noisy = WithNoise(clean, sigma, random);
  for (const NoisePolicy & policy : kNoisePolicies)
  {
    SCOPED_TRACE(policy.name);
    auto filter = FilterOn(noisy);
    policy.configure(filter);
    filter->Update();
    const auto & sigmas = filter->GetNoiseSigmas();
    const auto & ranks = filter->GetEffectiveRanks();
    ASSERT_EQ(sigmas.size(), 4u);
    double mean = 0.0;
    for (std::size_t s = 0; s < sigmas.size(); ++s)
    {
      Record(policy, "sigma/true", random, sigmas[s] / sigma);
      Record(policy, "rank", random, double(ranks[s]));
      EXPECT_NEAR(sigmas[s], sigma, 0.06 * sigma) << "slice " << s;
      mean += sigmas[s] / sigmas.size();
      if (filter->GetRankSelection() == RankSelection::GavishDonoho)
      {
        EXPECT_EQ(ranks[s], 5u) << "slice " << s;
      }
      else
      {
        EXPECT_GE(ranks[s], 5u) << "slice " << s;
        EXPECT_LE(ranks[s], 9u) << "slice " << s;
      }
    }
    const double distanceRatio = Distance(filter->GetOutput(), clean) / Distance(noisy, clean);
    Record(policy, "mean-sigma/true", random, mean / sigma);
    Record(policy, "distance/noisy", random, distanceRatio);
    EXPECT_NEAR(mean, sigma, 0.04 * sigma);
    // Keeping about 5 of 181 components leaves about 1/6 of the noise's norm.
    EXPECT_LT(distanceRatio, 0.3);
  }
}

// The brain slices as they are, plus noise of σ = 20 (a fifth of white matter's intensity). A slice's own singular
// values decay into the noise bulk, which none of the policies models: Marchenko-Pastur's σ falls low and
// Gavish-Donoho's, from the median singular value that the slice's tail raises, high (SetNoiseSigma avoids that
// where σ is known). All three still bring every slice closer to the clean one. Measured (min..max, mean, sd):
//                       σ/σtrue per slice            distance to clean / noisy input's
//   Gavish-Donoho       1.067..1.147, 1.105, 0.015   0.587..0.602, 0.594
//   MP, Veraart 2016    0.895..0.997, 0.954, 0.015   0.612..0.651, 0.630
//   MP, Cordero-Grande  0.945..1.024, 0.986, 0.012   0.593..0.613, 0.602
// This test was flaky with σ within 10 % for both Marchenko-Pastur estimators: Veraart's reached 0.895 (seed
// 9542736034914436769) and failed 1 of the 500 runs. The bounds by the margin rule are per policy.
TEST_F(SVDLowRankReconstructionNoiseRank, RealBrainPlusNoiseIsDenoisedAndSigmaIsClose)
{
  // σ found / σ: lowest and highest allowed, in the order of kNoisePolicies.
  constexpr double sigmaRatioBounds[][2] = { { 1.04, 1.17 }, { 0.86, 1.02 }, { 0.92, 1.05 } };
  Random           random;
  SCOPED_TRACE(random.SeedTrace());
  constexpr double sigma = 20.0;
  const auto       noisy = WithNoise(m_Clean, sigma, random);
  for (std::size_t p = 0; p < std::size(kNoisePolicies); ++p)
  {
    const NoisePolicy & policy = kNoisePolicies[p];
    SCOPED_TRACE(policy.name);
    auto filter = FilterOn(noisy);
    policy.configure(filter);
    filter->Update();
    for (std::size_t s = 0; s < 4; ++s)
    {
      const double sigmaRatio = filter->GetNoiseSigmas()[s] / sigma;
      Record(policy, "sigma/true", random, sigmaRatio);
      EXPECT_GE(sigmaRatio, sigmaRatioBounds[p][0]) << "slice " << s;
      EXPECT_LE(sigmaRatio, sigmaRatioBounds[p][1]) << "slice " << s;
    }
    const double distanceRatio = Distance(filter->GetOutput(), m_Clean) / Distance(noisy, m_Clean);
    Record(policy, "distance/noisy", random, distanceRatio);
    EXPECT_LT(distanceRatio, 0.7);
  }
}

TEST_F(SVDLowRankReconstructionNoiseRank, KnownSigmaIsReportedAndSetsTheThreshold)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  constexpr double sigma = 10.0;
  const auto       noisy = WithNoise(TruncatedToRank(m_Clean, 5), sigma, random);
  auto             known = FilterOn(noisy);
  known->SetNoiseSigma(sigma);
  EXPECT_EQ(known->GetRankSelection(), RankSelection::GavishDonoho);
  known->Update();
  // Gavish & Donoho's threshold λ*(β)·√n·σ for the 217 x 181 slices.
  const double n = 217.0, beta = 181.0 / 217.0;
  const double threshold =
    std::sqrt(2.0 * (beta + 1.0) + 8.0 * beta / (beta + 1.0 + std::sqrt(beta * beta + 14.0 * beta + 1.0))) *
    std::sqrt(n) * sigma;
  // Rank 5 on every slice of 500 seeds (2000 of 2000, 2026-11-25): the threshold lies far from the signal's values.
  for (std::size_t s = 0; s < 4; ++s)
  {
    EXPECT_EQ(known->GetNoiseSigmas()[s], sigma);
    const auto & values = known->GetSingularValues()[s];
    const auto   above = std::count_if(values.begin(), values.end(), [&](double v) { return v > threshold; });
    RecordSpread("rank", random.Seed(), double(known->GetEffectiveRanks()[s]));
    EXPECT_EQ(known->GetEffectiveRanks()[s], static_cast<itk::SizeValueType>(above)) << "slice " << s;
    EXPECT_EQ(known->GetEffectiveRanks()[s], 5u) << "slice " << s;
  }
}

TEST_F(SVDLowRankReconstructionNoiseRank, FixedRankReportsNaNSigmas)
{
  auto filter = FilterOn(m_Clean);
  filter->SetRank(5);
  filter->Update();
  ASSERT_EQ(filter->GetNoiseSigmas().size(), 4u);
  for (const double sigma : filter->GetNoiseSigmas())
  {
    EXPECT_TRUE(std::isnan(sigma));
  }
}

TEST(SVDLowRankReconstructionNoiseRankParameters, SettersSelectThePolicyAndKeepTheirValues)
{
  auto filter = Filter::New();
  filter->SetNoiseSigma(2.5);
  EXPECT_EQ(filter->GetRankSelection(), RankSelection::GavishDonoho);
  filter->SetMarchenkoPasturEstimator(Estimator::CorderoGrande2019);
  EXPECT_EQ(filter->GetRankSelection(), RankSelection::MarchenkoPastur);
  filter->SetRank(3);
  EXPECT_EQ(filter->GetRankSelection(), RankSelection::FixedRank);
  filter->SetRankSelection(RankSelection::GavishDonoho);
  EXPECT_EQ(filter->GetNoiseSigma(), 2.5);
  EXPECT_EQ(filter->GetMarchenkoPasturEstimator(), Estimator::CorderoGrande2019);

  std::ostringstream printed;
  filter->Print(printed);
  EXPECT_NE(printed.str().find("NoiseSigma: 2.5"), std::string::npos) << printed.str();
  EXPECT_NE(printed.str().find("MarchenkoPasturEstimator: CorderoGrande2019"), std::string::npos) << printed.str();
  EXPECT_NE(printed.str().find("RankSelection: GavishDonoho"), std::string::npos) << printed.str();
}

std::string
UpdateError(Filter * filter)
{
  try
  {
    filter->Update();
  }
  catch (const itk::ExceptionObject & error)
  {
    return error.GetDescription();
  }
  ADD_FAILURE() << "expected itk::ExceptionObject";
  return {};
}

TEST(SVDLowRankReconstructionNoiseRankParameters, NegativeOrNonFiniteNoiseSigmaIsRejected)
{
  auto image = Volume::New();
  image->SetRegions(Volume::SizeType{ { 8, 6, 2 } });
  image->Allocate();
  image->FillBuffer(1.0f);
  for (const double sigma : { -1.0, std::nan(""), HUGE_VAL })
  {
    auto filter = FilterOn(image);
    filter->SetNoiseSigma(sigma);
    EXPECT_NE(UpdateError(filter).find("noise sigma must be finite and >= 0"), std::string::npos) << sigma;
  }
}

TEST(SVDLowRankReconstructionNoiseRankParameters, SubspaceSolverWithANoisePolicyIsRejected)
{
  auto image = Volume::New();
  image->SetRegions(Volume::SizeType{ { 8, 6, 2 } });
  image->Allocate();
  image->FillBuffer(1.0f);
  auto filter = FilterOn(image);
  filter->SetMarchenkoPasturEstimator(Estimator::Veraart2016);
  filter->SetSolver(itk::SVDLowRankReconstructionEnums::Solver::Subspace);
  EXPECT_NE(UpdateError(filter).find("the subspace solver needs a fixed rank"), std::string::npos);
}

} // namespace
