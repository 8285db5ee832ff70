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
// LocalLowRankDenoisingImageFilter's newer settings reaching the engine: magnitude noise, the enums' bridge, the
// spherical patch with weighted aggregation, the volume groups of demeaning, and the g-factor map.
#include "itkLocalLowRankDenoisingTesting.h"

namespace
{
// A suite name of its own: the fixture, in an anonymous namespace, is another class in each test file, and GoogleTest
// refuses one suite over two fixture classes.
using LocalLowRankDenoisingSettings = LocalLowRankDenoising;
} // namespace

namespace
{

/** |series| as a magnitude: a positive low-rank signal plus Gaussian noise, taken in absolute value. */
svdlr::test::Series
MagnitudeOf(const svdlr::test::Series & series)
{
  svdlr::test::Series magnitude = series;
  for (float & value : magnitude.values)
  {
    value = std::abs(value);
  }
  return magnitude;
}

/** Each element of the filter's `image` (its buffer of `expected`'s length) equals `expected`'s, to the bit. */
void
ExpectBufferEquals(const float * image, const std::vector<float> & expected, const char * what)
{
  for (std::size_t i = 0; i < expected.size(); ++i)
  {
    ASSERT_EQ(image[i], expected[i]) << what << " element " << i;
  }
}

} // namespace

TEST_F(LocalLowRankDenoisingSettings, MagnitudeNoiseSettingsReachTheEngine)
{
  const svdlr::test::Series magnitude = MagnitudeOf(m_Series.noisy);
  auto                      filter = Filter4D::New();
  filter->SetInput(ToImage(magnitude));
  filter->SetBackend(itk::SVDLowRankReconstructionEnums::Backend::CPU);
  filter->StabiliseMagnitudeOn();
  filter->RemoveNoiseFloorOn();
  filter->SetCoils(3);
  filter->Update();

  svdlr::test::Series        expected = svdlr::test::EmptySeries(magnitude.size, magnitude.volumes);
  svdlr::LocalDenoiseOptions options;
  options.backend = svdlr::Backend::CPU;
  options.magnitudeNoise.stabilise = true;
  options.magnitudeNoise.noiseFloor = true;
  options.magnitudeNoise.coils = 3;
  svdlr::DenoiseLocalLowRank(magnitude.View(), expected.View(), {}, options);
  const float * output = filter->GetOutput()->GetBufferPointer();
  double      changed = 0.0;
  for (std::size_t i = 0; i < expected.values.size(); ++i)
  {
    ASSERT_EQ(output[i], expected.values[i]) << "element " << i;
    changed += std::abs(output[i] - magnitude.values[i]);
  }
  EXPECT_GT(changed, 0.0);
}

TEST_F(LocalLowRankDenoisingSettings, SigmaFloorCorrectionReachesTheEngineAndIsRefusedWithAKnownSigma)
{
  const svdlr::test::Series magnitude = MagnitudeOf(m_Series.noisy);
  auto                      filter = Filter4D::New();
  filter->SetInput(ToImage(magnitude));
  filter->SetBackend(itk::SVDLowRankReconstructionEnums::Backend::CPU);
  filter->SigmaFloorCorrectionOn();
  filter->SetCoils(2);
  filter->Update();

  svdlr::test::Series        expected = svdlr::test::EmptySeries(magnitude.size, magnitude.volumes);
  std::vector<float>         plainSigma(magnitude.Voxels()), expectedSigma(magnitude.Voxels());
  svdlr::LocalDenoiseOptions options;
  options.backend = svdlr::Backend::CPU;
  options.magnitudeNoise.sigmaFloorCorrection = true;
  options.magnitudeNoise.coils = 2;
  svdlr::DenoiseLocalLowRank(magnitude.View(), expected.View(), { expectedSigma.data(), nullptr }, options);
  options.magnitudeNoise = {};
  svdlr::DenoiseLocalLowRank(magnitude.View(), expected.View(), { plainSigma.data(), nullptr }, options);
  const float * sigma = filter->GetNoiseSigmaOutput()->GetBufferPointer();
  std::size_t   raised = 0;
  for (std::size_t v = 0; v < expectedSigma.size(); ++v)
  {
    ASSERT_EQ(sigma[v], expectedSigma[v]) << "voxel " << v;
    raised += sigma[v] > plainSigma[v];
  }
  EXPECT_GT(raised, 0u);

  auto known = Filter4D::New();
  known->SetInput(ToImage(magnitude));
  known->SetNoiseSigmaImage(filter->GetNoiseSigmaOutput());
  known->SigmaFloorCorrectionOn();
  EXPECT_NE(UpdateError(known.GetPointer()).find("known sigma"), std::string::npos);
}

TEST_F(LocalLowRankDenoisingSettings, StabilisingWithoutSigmaIsRefused)
{
  auto filter = Filter4D::New();
  filter->SetInput(ToImage(MagnitudeOf(m_Series.noisy)));
  filter->SetRank(3);
  filter->StabiliseMagnitudeOn();
  EXPECT_NE(UpdateError(filter.GetPointer()).find("need sigma"), std::string::npos);
}

namespace
{

TEST(LocalLowRankDenoisingEnums, EnumsMapToTheEngineAndBack)
{
  using Aggregation = itk::LocalLowRankDenoisingEnums::Aggregation;
  using Shape = itk::LocalLowRankDenoisingEnums::PatchShape;
  namespace bridge = itk::LocalLowRankDenoisingBridge;
  const std::pair<Aggregation, svdlr::PatchAggregation> aggregations[] = {
    { Aggregation::CentreVoxel, svdlr::PatchAggregation::CentreVoxel },
    { Aggregation::OverlapAverage, svdlr::PatchAggregation::OverlapAverage },
    { Aggregation::OverlapRankWeighted, svdlr::PatchAggregation::OverlapRankWeighted },
    { Aggregation::OverlapGaussianWeighted, svdlr::PatchAggregation::OverlapGaussianWeighted }
  };
  for (const auto & [itkValue, engineValue] : aggregations)
  {
    EXPECT_EQ(bridge::ToEngine(itkValue), engineValue);
    EXPECT_EQ(bridge::FromEngine(engineValue), itkValue);
  }
  EXPECT_EQ(bridge::ToEngine(Shape::Sphere), svdlr::PatchShape::Sphere);
  EXPECT_EQ(bridge::FromEngine(svdlr::PatchShape::Cuboid), Shape::Cuboid);
}

} // namespace

TEST_F(LocalLowRankDenoisingSettings, ASphereWithGaussianWeightsReachesTheEngineAndReportsItsPatch)
{
  auto filter = Filter4D::New();
  filter->SetInput(ToImage(m_Series.noisy));
  filter->SetBackend(itk::SVDLowRankReconstructionEnums::Backend::CPU);
  filter->SetPatchShape(itk::LocalLowRankDenoisingEnums::PatchShape::Sphere);
  filter->SetAggregation(itk::LocalLowRankDenoisingEnums::Aggregation::OverlapGaussianWeighted);
  filter->Update();
  const auto & size = m_Series.noisy.size;
  const svdlr::SpherePatch sphere = svdlr::SpherePatchUsed({ size[0], size[1], size[2] }, m_Series.noisy.volumes, 0.0);
  EXPECT_EQ(filter->GetPatchVoxelsUsed(), sphere.voxels);
  EXPECT_EQ(filter->GetPatchRadiusUsed(), sphere.radius);
  EXPECT_LT(RmsError(filter->GetOutput()->GetBufferPointer(), m_Series.clean),
            RmsError(m_Series.noisy.values.data(), m_Series.clean));
  filter->SetPatchSize({ { 3, 3, 3 } }); // a sphere takes a radius
  EXPECT_NE(UpdateError(filter).find("takes PatchRadius"), std::string::npos);
}

TEST_F(LocalLowRankDenoisingSettings, VolumeGroupsReachTheEngineAndMustHaveOnePerVolume)
{
  const std::vector<std::uint32_t> groups =
    svdlr::DemeanGroups(svdlr::Demean::Echoes, m_Series.noisy.volumes, 2, {}); // two "echoes" of 12 volumes
  auto filter = Filter4D::New();
  filter->SetInput(ToImage(m_Series.noisy));
  filter->SetBackend(itk::SVDLowRankReconstructionEnums::Backend::CPU);
  filter->SetVolumeGroups(groups);
  filter->Update();

  svdlr::test::Series        expected = svdlr::test::EmptySeries(m_Series.noisy.size, m_Series.noisy.volumes);
  svdlr::LocalDenoiseOptions options;
  options.backend = svdlr::Backend::CPU;
  options.volumeGroups = groups.data();
  svdlr::DenoiseLocalLowRank(m_Series.noisy.View(), expected.View(), {}, options);
  const float * output = filter->GetOutput()->GetBufferPointer();
  for (std::size_t i = 0; i < expected.values.size(); ++i)
  {
    ASSERT_EQ(output[i], expected.values[i]) << "element " << i;
  }

  filter->SetVolumeGroups(std::vector<std::uint32_t>(groups.begin(), groups.end() - 1));
  EXPECT_NE(UpdateError(filter.GetPointer()).find("one per volume"), std::string::npos);
}

TEST_F(LocalLowRankDenoisingSettings, GFactorImageReachesTheEngineAndScalesTheNoiseMap)
{
  const auto & size = m_Series.noisy.size;
  auto         gfactor = Filter4D::NoiseSigmaImageType::New();
  gfactor->SetRegions(Filter4D::NoiseSigmaImageType::SizeType{ { size[0], size[1], size[2] } });
  gfactor->Allocate();
  const std::size_t voxels = m_Series.noisy.Voxels();
  for (std::size_t v = 0; v < voxels; ++v)
  {
    gfactor->GetBufferPointer()[v] = 1.0f + float(v % size[0]) / float(size[0]); // 1 to 2 along x
  }
  auto filter = Filter4D::New();
  filter->SetInput(ToImage(m_Series.noisy));
  filter->SetBackend(itk::SVDLowRankReconstructionEnums::Backend::CPU);
  filter->SetGFactorImage(gfactor);
  filter->Update();

  svdlr::test::Series        expected = svdlr::test::EmptySeries(size, m_Series.noisy.volumes);
  std::vector<float>         sigma(voxels);
  svdlr::LocalDenoiseOptions options;
  options.backend = svdlr::Backend::CPU;
  options.gfactor = gfactor->GetBufferPointer();
  svdlr::LocalDenoiseMaps maps;
  maps.noiseSigma = sigma.data();
  svdlr::DenoiseLocalLowRank(m_Series.noisy.View(), expected.View(), maps, options);
  ExpectBufferEquals(filter->GetOutput()->GetBufferPointer(), expected.values, "series");
  ExpectBufferEquals(filter->GetNoiseSigmaOutput()->GetBufferPointer(), sigma, "sigma map");

  gfactor->GetBufferPointer()[5] = 0.0f;
  gfactor->Modified();
  EXPECT_NE(UpdateError(filter.GetPointer()).find("g-factor map must be finite and > 0"), std::string::npos);
  auto small = Filter4D::NoiseSigmaImageType::New();
  small->SetRegions(Filter4D::NoiseSigmaImageType::SizeType{ { size[0], size[1], size[2] - 1 } });
  small->Allocate();
  small->FillBuffer(1.0f);
  filter->SetGFactorImage(small);
  EXPECT_NE(UpdateError(filter.GetPointer()).find("GFactorImage has size"), std::string::npos);
}

TEST_F(LocalLowRankDenoisingSettings, EstimateGFactorReachesTheEngineAndTheMapComesOut)
{
  const std::size_t voxels = m_Series.noisy.Voxels();
  auto              filter = Filter4D::New();
  filter->SetInput(ToImage(m_Series.noisy));
  filter->SetBackend(itk::SVDLowRankReconstructionEnums::Backend::CPU);
  filter->Update();
  // Without a map the map out is 1 everywhere.
  for (std::size_t v = 0; v < voxels; ++v)
  {
    ASSERT_EQ(filter->GetGFactorOutput()->GetBufferPointer()[v], 1.0f) << "voxel " << v;
  }
  filter->EstimateGFactorOn();
  filter->Update();

  svdlr::test::Series        expected = svdlr::test::EmptySeries(m_Series.noisy.size, m_Series.noisy.volumes);
  std::vector<float>         sigma(voxels), g(voxels);
  svdlr::LocalDenoiseOptions options;
  options.backend = svdlr::Backend::CPU;
  options.estimateGFactor = true;
  svdlr::LocalDenoiseMaps maps;
  maps.noiseSigma = sigma.data();
  maps.gfactor = g.data();
  svdlr::DenoiseLocalLowRank(m_Series.noisy.View(), expected.View(), maps, options);
  ExpectBufferEquals(filter->GetOutput()->GetBufferPointer(), expected.values, "series");
  ExpectBufferEquals(filter->GetNoiseSigmaOutput()->GetBufferPointer(), sigma, "sigma map");
  ExpectBufferEquals(filter->GetGFactorOutput()->GetBufferPointer(), g, "g-factor map");
  EXPECT_NE(filter->GetBackendNotes().find("g-factor estimated"), std::string::npos);

  auto given = Filter4D::NoiseSigmaImageType::New();
  given->SetRegions(Filter4D::NoiseSigmaImageType::SizeType{ { m_Series.noisy.size[0], m_Series.noisy.size[1],
                                                                m_Series.noisy.size[2] } });
  given->Allocate();
  given->FillBuffer(1.5f);
  filter->SetGFactorImage(given);
  EXPECT_NE(UpdateError(filter.GetPointer()).find("not both"), std::string::npos);
  filter->EstimateGFactorOff();
  filter->Update();
  EXPECT_EQ(filter->GetGFactorOutput()->GetBufferPointer()[0], 1.5f);
}
