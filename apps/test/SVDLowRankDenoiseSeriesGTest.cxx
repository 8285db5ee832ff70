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
// SVDLowRankDenoiseSeries end to end, on series generated with a known answer (a low-rank signal plus Gaussian
// noise of known sigma): the denoised series, the maps, the mask and a known noise map; the same pixels as the
// filter run directly (what it refuses: SVDLowRankDenoiseToolRefusalsGTest.cxx).
#include "svdlrDenoiseSeriesFixture.h"

namespace
{
using namespace svdlr_test;

TEST_F(DenoiseTool, HelpShowsExamplesAndExitCodes)
{
  const auto run = Run("--help");
  EXPECT_EQ(run.exitCode, 0);
  EXPECT_NE(run.out.find("Examples:"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("Exit codes:"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("--noise-sigma-map"), std::string::npos) << run.out;
  // Every preset, with what it sets (svdlr/DenoisePresets.h), and each option's default.
  for (const svdlr::DenoisePreset & preset : svdlr::DenoisePresets())
  {
    EXPECT_NE(run.out.find(std::string(preset.name) + ": " + preset.purpose), std::string::npos) << run.out;
    EXPECT_NE(run.out.find(svdlr::DenoisePresetSettings(preset)), std::string::npos) << run.out;
  }
  EXPECT_NE(run.out.find("(default: overlap)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("(default: auto)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("default: mp-cg"), std::string::npos) << run.out;
}

// The configuration the bounds below were measured with: dwidenoise's, with the Veraart estimator (Exp1).
TEST_F(DenoiseTool, DenoisesTheSeriesAndMapsSigmaAndRank)
{
  const auto run = Run("--backend cpu --aggregation centre --shrinkage hard --policy mp --noise-map sigma.nii.gz "
                       "--rank-map rank.nii.gz dwi.nii.gz clean.nii.gz");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("backend:  CPU"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("patch:    5 x 5 x 5 voxels, stride 1, centre voxel"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("policy:   Marchenko-Pastur"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("sigma:    median"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("rank:     median 3"), std::string::npos) << run.out;

  const auto output = itk::ReadImage<Series4D>(Path("clean.nii.gz"));
  const auto sigma = itk::ReadImage<Map>(Path("sigma.nii.gz"));
  const auto rank = itk::ReadImage<RankImage>(Path("rank.nii.gz"));
  const std::size_t elements = m_Series.clean.values.size();
  ASSERT_EQ(output->GetLargestPossibleRegion().GetNumberOfPixels(), elements);
  const double noisyError = RmsDifference(m_Series.noisy.values.data(), m_Series.clean.values.data(), elements);
  const double denoisedError = RmsDifference(output->GetBufferPointer(), m_Series.clean.values.data(), elements);
  svdlr::test::RecordSpread("error/noisy", m_Seed, denoisedError / noisyError);
  EXPECT_LT(denoisedError, 0.7 * noisyError);

  // Away from the borders (where patches are shifted inward), sigma within 5 % of the truth and the true rank.
  // Over 500 seeds (test/seed-spread/measure.sh, 2026-11-25; min..max, mean, standard deviation): the error ratio
  // 0.356..0.381, 0.366, 0.004; the median σ/σtrue 0.975..0.995, 0.986, 0.003; the median rank 3 always. The bounds
  // lie beyond what the margin rule of svdlrTestSeed.h asks (σ 0.969..1.000, the error ratio 0.388).
  std::vector<double> sigmas, ranks;
  for (std::size_t v = 0; v < m_Series.clean.Voxels(); ++v)
  {
    if (svdlr::test::Interior(v, m_Series.clean.size, 2))
    {
      sigmas.push_back(sigma->GetBufferPointer()[v]);
      ranks.push_back(rank->GetBufferPointer()[v]);
    }
  }
  svdlr::test::RecordSpread("median-sigma/true", m_Seed, Median(sigmas) / m_Series.sigma);
  svdlr::test::RecordSpread("median-rank", m_Seed, Median(ranks));
  EXPECT_NEAR(Median(sigmas), m_Series.sigma, 0.05 * m_Series.sigma);
  EXPECT_EQ(Median(ranks), m_Series.rank);

  EXPECT_EQ(output->GetSpacing(), m_Noisy->GetSpacing());
  ExpectSameSpatialGeometry(m_Noisy.GetPointer(), output.GetPointer()); // NIfTI keeps no origin along time
  ExpectSameSpatialGeometry(m_Noisy.GetPointer(), sigma.GetPointer());
  ExpectSameSpatialGeometry(m_Noisy.GetPointer(), rank.GetPointer());
  // Each NIfTI output has its provenance sidecar beside it (docs/command-line.md).
  EXPECT_EQ(Listing(m_Directory), (std::set<std::string>{ "dwi.nii.gz", "clean.nii.gz", "sigma.nii.gz", "rank.nii.gz",
                                                          "clean.json", "sigma.json", "rank.json" }));
}

TEST_F(DenoiseTool, GivesTheFilterOwnPixelsForTheSameParameters)
{
  const auto run = Run("--backend cpu --patch 5,3,3 --stride 2 --policy mp-cg --shrinkage frobenius dwi.nii.gz "
                       "out.mha");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("patch:    5 x 3 x 3 voxels, stride 2, overlap average"), std::string::npos) << run.out;

  auto filter = itk::LocalLowRankDenoisingImageFilter<Series4D>::New();
  filter->SetInput(itk::ReadImage<Series4D>(Path("dwi.nii.gz")));
  filter->SetBackend(itk::SVDLowRankReconstructionEnums::Backend::CPU);
  filter->SetPatchSize({ { 5, 3, 3 } });
  filter->SetPatchStride(2);
  filter->SetAggregation(itk::LocalLowRankDenoisingEnums::Aggregation::OverlapAverage);
  filter->SetRankSelection(itk::SVDLowRankReconstructionEnums::RankSelection::MarchenkoPastur);
  filter->SetMarchenkoPasturEstimator(itk::SVDLowRankReconstructionEnums::MarchenkoPasturEstimator::CorderoGrande2019);
  filter->SetShrinkage(itk::LocalLowRankDenoisingEnums::Shrinkage::OptimalFrobenius);
  filter->Update();
  const auto        output = itk::ReadImage<Series4D>(Path("out.mha"));
  const std::size_t elements = m_Series.noisy.values.size();
  // The same engine on the same floats: equal up to the summation order of threads (none here: one run each).
  EXPECT_LT(RmsDifference(output->GetBufferPointer(), filter->GetOutput()->GetBufferPointer(), elements),
            1e-5 * m_Series.sigma);
}

TEST_F(DenoiseTool, ASphereWithRankWeightsGivesTheFilterOwnPixels)
{
  const auto run = Run("--backend cpu --patch-radius 1.5 --aggregation rank dwi.nii.gz out.mha");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  // Radius 1.5: the 19 voxels of |d|² <= 2, in a 3 x 3 x 3 box.
  EXPECT_NE(run.out.find("patch:    sphere of radius 1.5, 19 voxels (box 3 x 3 x 3), stride 1, overlap weighted by "
                         "1/(1+rank)"),
            std::string::npos)
    << run.out;
  auto filter = itk::LocalLowRankDenoisingImageFilter<Series4D>::New();
  filter->SetInput(itk::ReadImage<Series4D>(Path("dwi.nii.gz")));
  filter->SetBackend(itk::SVDLowRankReconstructionEnums::Backend::CPU);
  filter->SetPatchShape(itk::LocalLowRankDenoisingEnums::PatchShape::Sphere);
  filter->SetPatchRadius(1.5);
  filter->SetAggregation(itk::LocalLowRankDenoisingEnums::Aggregation::OverlapRankWeighted);
  filter->Update();
  const auto output = itk::ReadImage<Series4D>(Path("out.mha"));
  EXPECT_EQ(RmsDifference(output->GetBufferPointer(), filter->GetOutput()->GetBufferPointer(),
                          m_Series.noisy.values.size()),
            0.0);
}

/** The filter's output for `input` with the aggregation, shrinkage and Marchenko-Pastur estimator given. */
Series4D::Pointer
FilterOutput(const Series4D * input, itk::LocalLowRankDenoisingEnums::Aggregation aggregation,
             itk::LocalLowRankDenoisingEnums::Shrinkage shrinkage)
{
  auto filter = itk::LocalLowRankDenoisingImageFilter<Series4D>::New();
  filter->SetInput(input);
  filter->SetBackend(itk::SVDLowRankReconstructionEnums::Backend::CPU);
  filter->SetAggregation(aggregation);
  filter->SetShrinkage(shrinkage);
  filter->SetMarchenkoPasturEstimator(itk::SVDLowRankReconstructionEnums::MarchenkoPasturEstimator::CorderoGrande2019);
  filter->Update();
  return filter->GetOutput();
}

TEST_F(DenoiseTool, TheDefaultIsOverlapWithOptimalShrinkageAndBeatsTheDwidenoisePreset)
{
  const auto byDefault = Run("--backend cpu dwi.nii.gz default.mha");
  ASSERT_EQ(byDefault.exitCode, 0) << byDefault.err;
  // The 5 x 5 x 5 patch of this series' volumes: the auto stride is 2 (svdlr::PatchStrideUsed).
  EXPECT_NE(byDefault.out.find("5 x 5 x 5 voxels, stride 2, overlap average"), std::string::npos) << byDefault.out;
  EXPECT_NE(byDefault.out.find("Marchenko-Pastur (Cordero-Grande 2019), optimal Frobenius shrinkage"),
            std::string::npos)
    << byDefault.out;
  const auto dwidenoise = Run("--backend cpu --preset dwidenoise dwi.nii.gz dwidenoise.mha");
  ASSERT_EQ(dwidenoise.exitCode, 0) << dwidenoise.err;
  EXPECT_NE(dwidenoise.out.find("stride 1, centre voxel"), std::string::npos) << dwidenoise.out;
  EXPECT_NE(dwidenoise.out.find("Marchenko-Pastur (Cordero-Grande 2019), hard threshold"), std::string::npos)
    << dwidenoise.out;

  using Aggregation = itk::LocalLowRankDenoisingEnums::Aggregation;
  using Shrinkage = itk::LocalLowRankDenoisingEnums::Shrinkage;
  const std::size_t elements = m_Series.noisy.values.size();
  const auto        ours = itk::ReadImage<Series4D>(Path("default.mha"));
  const auto        theirs = itk::ReadImage<Series4D>(Path("dwidenoise.mha"));
  const auto best = FilterOutput(m_Noisy, Aggregation::OverlapAverage, Shrinkage::OptimalFrobenius);
  const auto centre = FilterOutput(m_Noisy, Aggregation::CentreVoxel, Shrinkage::Hard);
  EXPECT_LT(RmsDifference(ours->GetBufferPointer(), best->GetBufferPointer(), elements), 1e-5 * m_Series.sigma);
  EXPECT_LT(RmsDifference(theirs->GetBufferPointer(), centre->GetBufferPointer(), elements), 1e-5 * m_Series.sigma);
  const double oursError = RmsDifference(ours->GetBufferPointer(), m_Series.clean.values.data(), elements);
  const double theirsError = RmsDifference(theirs->GetBufferPointer(), m_Series.clean.values.data(), elements);
  svdlr::test::RecordSpread("default/dwidenoise error", m_Seed, oursError / theirsError);
  // Over 100 seeds (2026-11-25): 0.900..0.932, mean 0.917: the bound lies 5 times as far from the mean as the
  // farthest value (the margin rule of svdlrTestSeed.h asks 1.5).
  EXPECT_LT(oursError, theirsError);
}

TEST_F(DenoiseTool, OptionsGivenOverrideThePreset)
{
  const auto run = Run("--backend cpu --preset dwidenoise --aggregation overlap --policy mp dwi.nii.gz out.mha");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  // A preset sets no stride: with the overlap given, the auto stride applies.
  EXPECT_NE(run.out.find("stride 2, overlap average"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("Marchenko-Pastur (Veraart 2016), hard threshold"), std::string::npos) << run.out;
}

TEST_F(DenoiseTool, NoiseEstimatorGivesTheFiltersSigmaMapAndOverridesThePreset)
{
  const auto run = Run("--backend cpu --preset dwidenoise --noise-estimator residual --noise-map sigma.mha --json "
                       "dwi.nii.gz out.mha");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("\"noiseEstimator\": \"residual\""), std::string::npos) << run.out;

  auto filter = itk::LocalLowRankDenoisingImageFilter<Series4D>::New();
  filter->SetInput(m_Noisy);
  filter->SetBackend(itk::SVDLowRankReconstructionEnums::Backend::CPU);
  filter->SetAggregation(itk::LocalLowRankDenoisingEnums::Aggregation::CentreVoxel);
  filter->SetShrinkage(itk::LocalLowRankDenoisingEnums::Shrinkage::Hard);
  filter->SetMarchenkoPasturEstimator(itk::SVDLowRankReconstructionEnums::MarchenkoPasturEstimator::CorderoGrande2019);
  filter->SetNoiseEstimator(itk::LocalLowRankDenoisingEnums::NoiseEstimator::ResidualRefit);
  filter->Update();
  using SigmaMap = itk::Image<float, 3>;
  const auto        sigma = itk::ReadImage<SigmaMap>(Path("sigma.mha"));
  const std::size_t voxels = m_Series.noisy.Voxels();
  EXPECT_TRUE(std::equal(sigma->GetBufferPointer(), sigma->GetBufferPointer() + voxels,
                         filter->GetNoiseSigmaOutput()->GetBufferPointer()));

  const auto byDefault = Run("--backend cpu --preset dwidenoise --json dwi.nii.gz default.mha");
  ASSERT_EQ(byDefault.exitCode, 0) << byDefault.err;
  EXPECT_NE(byDefault.out.find("\"noiseEstimator\": \"mp\""), std::string::npos) << byDefault.out;
}

TEST_F(DenoiseTool, AFixedRankWithoutSigmaFallsBackToTheHardThreshold)
{
  const auto run = Run("--backend cpu --rank 2 dwi.nii.gz out.mha");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("fixed rank 2, hard threshold"), std::string::npos) << run.out;
  const auto refused = ExpectRefused("--shrinkage frobenius --rank 2 dwi.nii.gz out2.mha", 2);
  EXPECT_NE(refused.err.find("--shrinkage frobenius needs sigma"), std::string::npos) << refused.err;
}

// NORDIC's threshold takes σ as given: without one the tool refuses it (exit 2) and names the ways to give it; with
// one it runs and says so.
TEST_F(DenoiseTool, NordicNeedsAGivenSigma)
{
  const auto refused = ExpectRefused("--policy nordic dwi.nii.gz out.mha", 2);
  EXPECT_NE(refused.err.find("--policy nordic takes sigma as given"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--noise-volumes"), std::string::npos) << refused.err;
  const auto run = Run("--backend cpu --policy nordic --noise-sigma 2 --shrinkage hard dwi.nii.gz out.mha");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("NORDIC threshold"), std::string::npos) << run.out;
}

TEST_F(DenoiseTool, ThePresetOfAStrideConflictIsNamed)
{
  const auto run = ExpectRefused("--preset dwidenoise --stride 2 dwi.nii.gz out.mha", 2);
  EXPECT_NE(run.err.find("needs --aggregation overlap (--preset dwidenoise sets centre)"), std::string::npos)
    << run.err;
}

TEST_F(DenoiseTool, MaskedVoxelsAreCopiedAndHaveNoSigmaOrRank)
{
  auto mask = SpatialMap<MaskImage>(m_Noisy, 0);
  const auto & size = m_Series.noisy.size;
  for (std::size_t v = 0; v < m_Series.noisy.Voxels(); ++v)
  {
    mask->GetBufferPointer()[v] = (v % size[0]) < size[0] / 2 ? 1 : 0;
  }
  itk::WriteImage(mask, Path("mask.nii.gz"));
  const auto run =
    Run("--backend cpu --mask mask.nii.gz --noise-map sigma.nrrd --rank-map rank.nrrd dwi.nii.gz out.nii.gz");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  const std::size_t inside = m_Series.noisy.Voxels() / 2;
  EXPECT_NE(run.out.find("(inside the mask: " + std::to_string(inside) + " of " +
                         std::to_string(m_Series.noisy.Voxels()) + " voxels)"),
            std::string::npos)
    << run.out;

  const auto output = itk::ReadImage<Series4D>(Path("out.nii.gz"));
  const auto sigma = itk::ReadImage<Map>(Path("sigma.nrrd"));
  const auto rank = itk::ReadImage<RankImage>(Path("rank.nrrd"));
  // Outside, every value is the input's. Inside, a voxel is denoised when its series changed: single values may
  // not, since a denoised float can round to the noisy one. That was this test's flakiness, when it asked every
  // value inside to change: over 500 seeds (test/seed-spread/measure.sh, 2026-11-25), 0 to 1 of the 40,320 values
  // inside kept their input value: 10 runs of the 500 (2 %) kept one, and each of those failed.
  std::size_t copiedOutside = 0, changedInside = 0, valuesKeptInside = 0;
  for (std::size_t v = 0; v < m_Series.noisy.Voxels(); ++v)
  {
    const bool  in = mask->GetBufferPointer()[v] != 0;
    std::size_t same = 0;
    for (std::size_t t = 0; t < m_Series.noisy.volumes; ++t)
    {
      same += output->GetBufferPointer()[v + t * m_Series.noisy.Voxels()] == m_Series.noisy(v, t) ? 1 : 0;
    }
    (in ? valuesKeptInside : copiedOutside) += same;
    changedInside += in && same < m_Series.noisy.volumes ? 1 : 0;
    EXPECT_EQ(sigma->GetBufferPointer()[v] > 0.0f, in) << "voxel " << v;
    EXPECT_EQ(rank->GetBufferPointer()[v] > 0, in) << "voxel " << v;
  }
  svdlr::test::RecordSpread("values-kept-inside", m_Seed, double(valuesKeptInside));
  EXPECT_EQ(copiedOutside, (m_Series.noisy.Voxels() - inside) * m_Series.noisy.volumes); // unchanged
  EXPECT_EQ(changedInside, inside);                                                       // denoised
}

TEST_F(DenoiseTool, KnownSigmaReplacesTheEstimate)
{
  // A σ map that varies: the noise map written is the one given, voxel by voxel.
  auto given = SpatialMap<Map>(m_Noisy, 0.0f);
  for (std::size_t v = 0; v < m_Series.noisy.Voxels(); ++v)
  {
    given->GetBufferPointer()[v] = static_cast<float>(m_Series.sigma * (0.9 + 0.2 * (v % 7) / 6.0));
  }
  itk::WriteImage(given, Path("known.nii.gz"));
  // The centre voxel: with overlap averaging (the default) each voxel's σ is the mean over the patches holding it.
  const auto fromMap = Run("--backend cpu --aggregation centre --noise-sigma-map known.nii.gz --noise-map sigma.nii.gz "
                           "dwi.nii.gz a.nii.gz");
  ASSERT_EQ(fromMap.exitCode, 0) << fromMap.err;
  EXPECT_NE(fromMap.out.find("known sigma from known.nii.gz"), std::string::npos) << fromMap.out;
  const auto written = itk::ReadImage<Map>(Path("sigma.nii.gz"));
  for (std::size_t v = 0; v < m_Series.noisy.Voxels(); ++v)
  {
    ASSERT_FLOAT_EQ(written->GetBufferPointer()[v], given->GetBufferPointer()[v]) << "voxel " << v;
  }

  // One σ for every voxel, with a fixed rank: the map holds it, and the rank is the one asked for.
  const auto uniform =
    Run("--backend cpu --noise-sigma 1.5 --rank 2 --noise-map s2.nii.gz --rank-map r2.nii.gz dwi.nii.gz b.nii.gz");
  ASSERT_EQ(uniform.exitCode, 0) << uniform.err;
  EXPECT_NE(uniform.out.find("policy:   fixed rank 2, known sigma 1.5"), std::string::npos) << uniform.out;
  EXPECT_NE(uniform.out.find("rank:     median 2, range [2, 2]"), std::string::npos) << uniform.out;
  EXPECT_NE(uniform.out.find("sigma:    median 1.5, range [1.5, 1.5]"), std::string::npos) << uniform.out;
}

TEST_F(DenoiseTool, VectorImageSeriesGivesTheSameResultAsThe4DImage)
{
  auto vector = SeriesVector::New();
  vector->SetRegions(SeriesVector::SizeType{ { m_Series.noisy.size[0], m_Series.noisy.size[1], m_Series.noisy.size[2] } });
  vector->SetNumberOfComponentsPerPixel(static_cast<unsigned int>(m_Series.noisy.volumes));
  vector->Allocate();
  const std::size_t volumes = m_Series.noisy.volumes;
  for (std::size_t v = 0; v < m_Series.noisy.Voxels(); ++v)
  {
    for (std::size_t t = 0; t < volumes; ++t)
    {
      vector->GetBufferPointer()[v * volumes + t] = m_Series.noisy(v, t);
    }
  }
  itk::WriteImage(vector, Path("dwi_vector.nrrd"));
  const auto fromVector = Run("--backend cpu --rank-map rank_vector.nii.gz dwi_vector.nrrd out_vector.nrrd");
  ASSERT_EQ(fromVector.exitCode, 0) << fromVector.err;
  EXPECT_NE(fromVector.out.find("30 volumes"), std::string::npos) << fromVector.out;
  const auto from4D = Run("--backend cpu dwi.nii.gz out.nii.gz");
  ASSERT_EQ(from4D.exitCode, 0) << from4D.err;

  const auto a = itk::ReadImage<SeriesVector>(Path("out_vector.nrrd"));
  const auto b = itk::ReadImage<Series4D>(Path("out.nii.gz"));
  ASSERT_EQ(a->GetNumberOfComponentsPerPixel(), volumes);
  double worst = 0.0;
  for (std::size_t v = 0; v < m_Series.noisy.Voxels(); ++v)
  {
    for (std::size_t t = 0; t < volumes; ++t)
    {
      worst = std::max(worst, std::abs(double(a->GetBufferPointer()[v * volumes + t]) -
                                       b->GetBufferPointer()[v + t * m_Series.noisy.Voxels()]));
    }
  }
  EXPECT_LT(worst, 1e-4 * m_Series.sigma * 12.0);
}


#ifdef SVDLR_LOCAL_DENOISING_EXAMPLE
TEST_F(DenoiseTool, TheExampleGivesTheToolsPixels)
{
  const auto example = RunToolIn(m_Directory, SVDLR_LOCAL_DENOISING_EXAMPLE, "dwi.nii.gz example.nii.gz sigma.nii.gz");
  ASSERT_EQ(example.exitCode, 0) << example.err;
  EXPECT_NE(example.out.find("patch [5, 5, 5]"), std::string::npos) << example.out;
  const auto tool = Run("--backend cpu dwi.nii.gz tool.nii.gz");
  ASSERT_EQ(tool.exitCode, 0) << tool.err;
  const auto a = itk::ReadImage<Series4D>(Path("example.nii.gz"));
  const auto b = itk::ReadImage<Series4D>(Path("tool.nii.gz"));
  const std::size_t elements = m_Series.clean.values.size();
  EXPECT_LT(RmsDifference(a->GetBufferPointer(), b->GetBufferPointer(), elements), 1e-4);
}
#endif

// docs/reliability.md, "More cases": BIDS naming and sidecars. Each map's sidecar describes its map (what it holds, its
// units, the series it came from: svdlr/OutputMaps.h, the BIDS App's too), not the same whole-run document thrice;
// and a cuboid patch is written as its extent, without a radius.
TEST_F(DenoiseTool, EachMapSidecarDescribesItsMap)
{
  const auto run = Run("--backend cpu --noise-map sigma.nii.gz --rank-map rank.nii.gz dwi.nii.gz clean.nii.gz");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  const std::string series = ReadText(Path("clean.json"));
  const std::string sigma = ReadText(Path("sigma.json"));
  const std::string rank = ReadText(Path("rank.json"));
  EXPECT_NE(sigma, rank);
  EXPECT_EQ(series.find("\"Description\""), std::string::npos) << series;
  for (const auto & [text, map] : { std::make_pair(sigma, &svdlr::kNoiseMap), std::make_pair(rank, &svdlr::kRankMap) })
  {
    EXPECT_EQ(text.rfind("{\n  \"Description\": \"" + std::string(map->description) + "\",\n  \"Units\": \"" +
                           map->units + "\",\n  \"Sources\": [\n    \"dwi.nii.gz\"\n  ],\n  \"tool\": ",
                         0),
              0u)
      << text;
    EXPECT_NE(text.find("\"parameters\": {"), std::string::npos) << text; // and the run's parameters
  }
  EXPECT_EQ(std::string(svdlr::kNoiseMap.units), "arbitrary");
  EXPECT_EQ(std::string(svdlr::kRankMap.units), "1");
  EXPECT_EQ(series.find("patchRadius"), std::string::npos) << series; // a cuboid: its extent alone
  EXPECT_EQ(nlohmann::json::parse(series)["parameters"]["patch"], nlohmann::json({ 5, 5, 5 })) << series;
}

} // namespace
