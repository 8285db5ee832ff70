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
// SVDLowRankDenoiseSeries with multi-echo input and demeaning, end to end: a 5D series comes back 5D with its
// geometry and echo order, and equal to the engine's joint denoise of the stacked echoes; echo files give the 5D
// result echo by echo; --demean echoes and shells give the engine's result with the groups of svdlr/VolumeGroups.h;
// echoes that differ, a 5D image of one echo and b-values of the wrong count are refused with exit code 3 (and bad
// command lines with 2), leaving nothing written.
#include "svdlrDenoiseToolFixture.h"
#include "svdlrTestScratch.h"
#include "svdlrTestSeries.h"
#include "svdlrToolRun.h"

#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "svdlr/LocalDenoise.h"
#include "svdlr/VolumeGroups.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <vector>

namespace
{
using namespace svdlr_test;

using Series4D = itk::Image<float, 4>;
using Series5D = itk::Image<float, 5>;

constexpr std::size_t kVolumesPerEcho = 12;
constexpr std::size_t kEchoes = 3;

class MultiEchoDenoiseTool : public DenoiseToolTest
{
protected:
  void
  SetUp() override
  {
    DenoiseToolTest::SetUp();
    svdlr::test::Random random(m_Seed);
    // Each echo the same low-rank signal on a baseline, decaying with the echo (T2*), plus noise of sigma 1.
    const auto signal = svdlr::test::LowRankSeries(m_Size, kVolumesPerEcho, 2, 1.0, 3.0, random);
    const std::size_t voxels = signal.clean.Voxels(), perEcho = voxels * kVolumesPerEcho;
    m_Stacked.resize(perEcho * kEchoes);
    for (std::size_t e = 0; e < kEchoes; ++e)
    {
      const double decay = std::exp(-0.6 * double(e));
      for (std::size_t i = 0; i < perEcho; ++i)
      {
        m_Stacked[e * perEcho + i] = float(decay * (100.0 + signal.clean.values[i]) + random.Normal());
      }
    }
    auto image = Series5D::New();
    image->SetRegions(Series5D::SizeType{ { m_Size[0], m_Size[1], m_Size[2], kVolumesPerEcho, kEchoes } });
    Series5D::SpacingType spacing;
    Series5D::PointType   origin;
    for (unsigned int i = 0; i < 5; ++i)
    {
      spacing[i] = 1.0 + 0.25 * i;
      origin[i] = i < 3 ? -10.0 * (i + 1) : 0.0;
    }
    image->SetSpacing(spacing);
    image->SetOrigin(origin);
    image->Allocate();
    std::copy(m_Stacked.begin(), m_Stacked.end(), image->GetBufferPointer());
    itk::WriteImage(image, Path("five.nii.gz"));
    for (std::size_t e = 0; e < kEchoes; ++e)
    {
      WriteEcho("echo" + std::to_string(e + 1) + ".nii.gz", e, kVolumesPerEcho);
    }
  }

  void
  WriteEcho(const std::string & name, std::size_t echo, std::size_t volumes, double spacing = 1.0)
  {
    auto image = Series4D::New();
    image->SetRegions(Series4D::SizeType{ { m_Size[0], m_Size[1], m_Size[2], volumes } });
    Series4D::SpacingType spacings;
    Series4D::PointType   origin;
    for (unsigned int i = 0; i < 4; ++i)
    {
      spacings[i] = i == 0 ? spacing : 1.0 + 0.25 * i;
      origin[i] = i < 3 ? -10.0 * (i + 1) : 0.0;
    }
    image->SetSpacing(spacings);
    image->SetOrigin(origin);
    image->Allocate();
    const std::size_t perEcho = m_Size[0] * m_Size[1] * m_Size[2] * kVolumesPerEcho;
    const float *     from = m_Stacked.data() + echo * perEcho;
    std::copy(from, from + image->GetLargestPossibleRegion().GetNumberOfPixels(), image->GetBufferPointer());
    itk::WriteImage(image, Path(name));
  }



  /** The engine run on the stacked echoes with the tool's defaults and `groups`. */
  std::vector<float>
  EngineResult(const std::vector<std::uint32_t> & groups)
  {
    const std::size_t                   voxels = m_Size[0] * m_Size[1] * m_Size[2], volumes = kVolumesPerEcho * kEchoes;
    const std::array<std::ptrdiff_t, 4> strides{ 1, std::ptrdiff_t(m_Size[0]), std::ptrdiff_t(m_Size[0] * m_Size[1]),
                                                 std::ptrdiff_t(voxels) };
    std::vector<float>         denoised(m_Stacked.size());
    svdlr::LocalDenoiseOptions options;
    options.backend = svdlr::Backend::CPU;
    options.magnitudeNoise.automatic = svdlr::kDefaultAutomaticMagnitudeModel; // the tool's: its input is a magnitude
    options.volumeGroups = groups.empty() ? nullptr : groups.data();
    svdlr::DenoiseLocalLowRank({ m_Stacked.data(), m_Size, volumes, strides },
                               { denoised.data(), m_Size, volumes, strides }, {}, options);
    return denoised;
  }

  template <typename TImage>
  std::vector<float>
  Values(const std::string & name)
  {
    const auto image = itk::ReadImage<TImage>(Path(name));
    return { image->GetBufferPointer(),
             image->GetBufferPointer() + image->GetLargestPossibleRegion().GetNumberOfPixels() };
  }

  std::array<std::size_t, 3> m_Size{ { 10, 9, 8 } };
  std::vector<float>         m_Stacked; // echo after echo, as a 5D image's buffer
};

double
MaxDifference(const std::vector<float> & a, const std::vector<float> & b)
{
  if (a.size() != b.size())
  {
    return std::numeric_limits<double>::infinity();
  }
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i)
  {
    worst = std::max(worst, std::abs(double(a[i]) - b[i]));
  }
  return worst;
}

TEST_F(MultiEchoDenoiseTool, FiveDSeriesComesBackFiveDWithItsGeometryAndTheJointDenoise)
{
  const auto run = Run("five.nii.gz out.nii.gz");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  const auto input = itk::ReadImage<Series5D>(Path("five.nii.gz"));
  const auto output = itk::ReadImage<Series5D>(Path("out.nii.gz"));
  EXPECT_EQ(output->GetLargestPossibleRegion().GetSize(), input->GetLargestPossibleRegion().GetSize());
  for (unsigned int i = 0; i < 5; ++i)
  {
    EXPECT_NEAR(output->GetSpacing()[i], input->GetSpacing()[i], 1e-6) << "axis " << i;
    EXPECT_NEAR(output->GetOrigin()[i], input->GetOrigin()[i], 1e-5) << "axis " << i;
  }
  // The stacked echoes denoised as one series, echo after echo: the echoes keep their order (and decay).
  const std::vector<float> values(output->GetBufferPointer(),
                                  output->GetBufferPointer() + output->GetLargestPossibleRegion().GetNumberOfPixels());
  EXPECT_LE(MaxDifference(values, EngineResult({})), 1e-4);
  const std::size_t perEcho = values.size() / kEchoes;
  double            previous = std::numeric_limits<double>::infinity();
  for (std::size_t e = 0; e < kEchoes; ++e)
  {
    double sum = 0.0, inputSum = 0.0;
    for (std::size_t i = 0; i < perEcho; ++i)
    {
      sum += values[e * perEcho + i];
      inputSum += m_Stacked[e * perEcho + i];
    }
    // Denoising keeps each echo's mean (the noise has none) well inside the 45 % step from one echo to the next.
    EXPECT_NEAR(sum, inputSum, 0.02 * inputSum) << "echo " << e + 1;
    EXPECT_LT(sum / double(perEcho), previous);
    previous = sum / double(perEcho);
  }
  EXPECT_NE(ReadText(Path("out.json")).find("\"echoes\": 3"), std::string::npos) << ReadText(Path("out.json"));
}

TEST_F(MultiEchoDenoiseTool, EchoFilesGiveTheFiveDResultEchoByEcho)
{
  ASSERT_EQ(Run("five.nii.gz out5.nii.gz").exitCode, 0);
  const auto run =
    Run("echo1.nii.gz out1.nii.gz --echo echo2.nii.gz --echo echo3.nii.gz --echo-output out2.nii.gz "
        "--echo-output out3.nii.gz --noise-map sigma.nii.gz");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  const auto        joint = Values<Series5D>("out5.nii.gz");
  const std::size_t perEcho = joint.size() / kEchoes;
  for (std::size_t e = 0; e < kEchoes; ++e)
  {
    const auto echo = Values<Series4D>("out" + std::to_string(e + 1) + ".nii.gz");
    EXPECT_EQ(echo, std::vector<float>(joint.begin() + e * perEcho, joint.begin() + (e + 1) * perEcho)) << e + 1;
    // Each echo's sidecar names every echo read.
    const std::string sidecar = ReadText(Path("out" + std::to_string(e + 1) + ".json"));
    EXPECT_NE(sidecar.find("echo3.nii.gz"), std::string::npos) << sidecar;
  }
}

TEST_F(MultiEchoDenoiseTool, DemeaningGivesTheEngineResultWithTheGroupsOfItsChoice)
{
  ASSERT_EQ(Run("five.nii.gz echoes.nii.gz --demean echoes").exitCode, 0);
  const auto byEcho = svdlr::DemeanGroups(svdlr::Demean::Echoes, kVolumesPerEcho * kEchoes, kEchoes, {});
  EXPECT_LE(MaxDifference(Values<Series5D>("echoes.nii.gz"), EngineResult(byEcho)), 1e-4);
  EXPECT_NE(ReadText(Path("echoes.json")).find("\"demean\": \"echoes\""), std::string::npos);

  // Shells from the .bval beside each echo's series (the same b-values in every echo).
  std::vector<double> bvalues;
  {
    std::ofstream bval(Path("five.bval"));
    for (std::size_t t = 0; t < kVolumesPerEcho; ++t)
    {
      bvalues.push_back(t % 4 == 0 ? 5.0 : 1000.0 + 10.0 * double(t % 3));
      bval << bvalues.back() << (t + 1 < kVolumesPerEcho ? " " : "\n");
    }
  }
  ASSERT_EQ(Run("five.nii.gz shells.nii.gz --demean shells").exitCode, 0);
  std::vector<double> stacked;
  for (std::size_t e = 0; e < kEchoes; ++e)
  {
    stacked.insert(stacked.end(), bvalues.begin(), bvalues.end());
  }
  const auto byShell = svdlr::DemeanGroups(svdlr::Demean::Shells, stacked.size(), kEchoes, stacked);
  ASSERT_EQ(svdlr::GroupCount(byShell), 2u);
  EXPECT_LE(MaxDifference(Values<Series5D>("shells.nii.gz"), EngineResult(byShell)), 1e-4);
  EXPECT_GT(MaxDifference(Values<Series5D>("shells.nii.gz"), Values<Series5D>("echoes.nii.gz")), 1e-3);
}

TEST_F(MultiEchoDenoiseTool, BadEchoesAndBValuesAreRefusedByName)
{
  WriteEcho("short.nii.gz", 1, kVolumesPerEcho - 1);
  ExpectRefused("echo1.nii.gz o1.nii.gz --echo short.nii.gz --echo-output o2.nii.gz", 3, "does not match echo 1");
  WriteEcho("wide.nii.gz", 1, kVolumesPerEcho, 1.5);
  ExpectRefused("echo1.nii.gz o1.nii.gz --echo wide.nii.gz --echo-output o2.nii.gz", 3, "spacing along axis 0");
  ExpectRefused("echo1.nii.gz o1.nii.gz --echo echo2.nii.gz", 2, "one --echo-output per --echo");
  ExpectRefused("echo1.nii.gz o1.nii.gz --demean echoes", 3, "needs a multi-echo series");
  ExpectRefused("echo1.nii.gz o1.nii.gz --demean shells", 3, "cannot read the b-values");
  {
    std::ofstream bval(Path("few.bval"));
    bval << "0 1000 1000\n";
  }
  ExpectRefused("echo1.nii.gz o1.nii.gz --demean shells --bval few.bval", 3, "hold 3 values for the 12 volumes");
  ExpectRefused("echo1.nii.gz o1.nii.gz --bval few.bval", 2, "--bval goes with --demean shells");

  // NaN in a further echo is named by that echo's file, before any work.
  m_Stacked[m_Stacked.size() / kEchoes + 5] = std::numeric_limits<float>::quiet_NaN();
  WriteEcho("nan.nii.gz", 1, kVolumesPerEcho);
  ExpectRefused("echo1.nii.gz o1.nii.gz --echo nan.nii.gz --echo-output o2.nii.gz", 3, "'nan.nii.gz'");

  // A 5D image of one echo: ITK would read it as 4D, so its header is looked at.
  auto one = Series5D::New();
  one->SetRegions(Series5D::SizeType{ { m_Size[0], m_Size[1], m_Size[2], kVolumesPerEcho, 1 } });
  one->Allocate();
  one->FillBuffer(1.0f);
  itk::WriteImage(one, Path("one.nii.gz"));
  ExpectRefused("one.nii.gz o1.nii.gz", 3, "5D image of 1 echo");
}

} // namespace
