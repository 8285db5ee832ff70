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
// SVDLowRankDenoiseSeries with complex and noise-scan inputs, end to end: magnitude + phase, real + imaginary and
// complex64 give the engine's own result (phase demodulation, then the local denoiser on the real part); noise
// volumes and noise scans give the known sigma and leave the output; the magnitude noise model (--vst, --noise-floor,
// --sigma-floor-correction) gives the engine's result and is refused where it makes no sense; bad phases and sizes
// are refused with exit code 3 (and bad command lines with 2), leaving nothing written.
#include "svdlrDenoiseToolFixture.h"
#include "svdlrTestScratch.h"
#include "svdlrTestSeries.h"
#include "svdlrToolRun.h"

#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "svdlr/ComplexSeries.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

namespace
{
using namespace svdlr_test;

using Series4D = itk::Image<float, 4>;
using ComplexSeries4D = itk::Image<std::complex<float>, 4>;
using Map = itk::Image<float, 3>;

constexpr std::size_t kVolumes = 30;
constexpr std::size_t kNoiseVolumes = 4;
constexpr double      kSigma = 2.0;

template <typename TImage>
typename TImage::Pointer
ImageOf(const std::array<std::size_t, 3> & size, std::size_t volumes)
{
  auto image = TImage::New();
  image->SetRegions(typename TImage::SizeType{ { size[0], size[1], size[2], volumes } });
  image->Allocate();
  return image;
}

using svdlr::test::Median;

class ComplexDenoiseTool : public DenoiseToolTest
{
protected:
  void
  SetUp() override
  {
    DenoiseToolTest::SetUp();
    svdlr::test::Random random(m_Seed); // the fixture's seed, printed on failure, replays the series
    // A low-rank real signal with complex noise of sigma 2, turned by a smooth phase that changes
    // with each volume, and kNoiseVolumes noise-only volumes at the end.
    // MRI signal is positive: the low-rank series (of either sign: 3 components of amplitude 2 sigma, each at most
    // about 2.3 x 2 x 2 x 1.2 = 11 in size) on a baseline of 40.
    const auto signal = svdlr::test::LowRankSeries(m_Size, kVolumes, 3, kSigma, 2.0, random);
    m_Clean = signal.clean;
    for (float & value : m_Clean.values)
    {
      value += 40.0f;
    }
    const std::size_t voxels = signal.clean.Voxels(), all = kVolumes + kNoiseVolumes;
    m_Real.assign(voxels * all, 0.0f);
    m_Imag.assign(voxels * all, 0.0f);
    for (std::size_t t = 0; t < all; ++t)
    {
      for (std::size_t v = 0; v < voxels; ++v)
      {
        const double x = double(v % m_Size[0]), y = double(v / m_Size[0] % m_Size[1]);
        const double value = t < kVolumes ? m_Clean(v, t) : 0.0;
        const auto   z = std::complex<double>(value + kSigma * random.Normal(), kSigma * random.Normal()) *
                       std::polar(1.0, 0.4 * double(t) - 1.0 + 0.12 * x - 0.07 * y);
        m_Real[v + t * voxels] = float(z.real());
        m_Imag[v + t * voxels] = float(z.imag());
      }
    }
    Write("real_all.nii.gz", all, [](float re, float) { return re; });
    Write("imag_all.nii.gz", all, [](float, float im) { return im; });
    Write("mag_all.nii.gz", all, [](float re, float im) { return std::hypot(re, im); });
    Write("phase_all.nii.gz", all, [](float re, float im) { return std::atan2(im, re); });
    Write("mag.nii.gz", kVolumes, [](float re, float im) { return std::hypot(re, im); });
    Write("phase.nii.gz", kVolumes, [](float re, float im) { return std::atan2(im, re); });
    Write("real.nii.gz", kVolumes, [](float re, float) { return re; });
    Write("imag.nii.gz", kVolumes, [](float, float im) { return im; });
    auto complexImage = ImageOf<ComplexSeries4D>(m_Size, kVolumes);
    for (std::size_t i = 0; i < voxels * kVolumes; ++i)
    {
      complexImage->GetBufferPointer()[i] = { m_Real[i], m_Imag[i] };
    }
    itk::WriteImage(complexImage, Path("complex.nii.gz"));
  }

  /** Writes f(real, imag) of the first `volumes` volumes. */
  template <typename TFunction>
  void
  Write(const std::string & name, std::size_t volumes, TFunction f)
  {
    auto image = ImageOf<Series4D>(m_Size, volumes);
    for (std::size_t i = 0; i < m_Clean.Voxels() * volumes; ++i)
    {
      image->GetBufferPointer()[i] = f(m_Real[i], m_Imag[i]);
    }
    itk::WriteImage(image, Path(name));
  }



  std::vector<float>
  Values(const std::string & name)
  {
    const auto image = itk::ReadImage<Series4D>(Path(name));
    return { image->GetBufferPointer(),
             image->GetBufferPointer() + image->GetLargestPossibleRegion().GetNumberOfPixels() };
  }

  /** The engine run directly: the phase demodulated, the real part denoised with the tool's defaults. */
  std::vector<float>
  EngineResult()
  {
    const std::size_t                    voxels = m_Clean.Voxels();
    const std::array<std::ptrdiff_t, 4> strides{ 1, std::ptrdiff_t(m_Size[0]), std::ptrdiff_t(m_Size[0] * m_Size[1]),
                                                 std::ptrdiff_t(voxels) };
    std::vector<float> phase(voxels * kVolumes), real(voxels * kVolumes), denoised(voxels * kVolumes);
    svdlr::DemodulatePhase({ m_Real.data(), m_Size, kVolumes, strides }, { m_Imag.data(), m_Size, kVolumes, strides },
                           { phase.data(), m_Size, kVolumes, strides }, { real.data(), m_Size, kVolumes, strides }, {},
                           svdlr::PhaseDemodulationOptions{});
    svdlr::LocalDenoiseOptions options;
    options.backend = svdlr::Backend::CPU;
    svdlr::DenoiseLocalLowRank({ real.data(), m_Size, kVolumes, strides },
                               { denoised.data(), m_Size, kVolumes, strides }, {}, options);
    return denoised;
  }

  std::array<std::size_t, 3> m_Size{ { 16, 14, 12 } };
  svdlr::test::Series        m_Clean;
  std::vector<float>         m_Real, m_Imag;
};

double
MaxDifference(const std::vector<float> & a, const std::vector<float> & b)
{
  double worst = 0.0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
  {
    worst = std::max(worst, std::abs(double(a[i]) - b[i]));
  }
  return a.size() == b.size() ? worst : std::numeric_limits<double>::infinity();
}

double
RmsDifference(const std::vector<float> & a, const std::vector<float> & b)
{
  double sum = 0.0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
  {
    sum += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
  }
  return a.size() == b.size() ? std::sqrt(sum / double(a.size())) : std::numeric_limits<double>::infinity();
}

TEST_F(ComplexDenoiseTool, EveryComplexInputGivesTheEngineOwnDemodulatedResult)
{
  const auto expected = EngineResult();
  ASSERT_EQ(Run("--imaginary imag.nii.gz --complex-output real real.nii.gz out_ri.nii.gz").exitCode, 0);
  EXPECT_LT(MaxDifference(Values("out_ri.nii.gz"), expected), 1e-4);
  const auto viaPhase = Run("--phase phase.nii.gz --complex-output real mag.nii.gz out_mp.nii.gz");
  ASSERT_EQ(viaPhase.exitCode, 0) << viaPhase.err;
  EXPECT_LT(MaxDifference(Values("out_mp.nii.gz"), expected), 1e-3); // through float magnitude and phase
  ASSERT_EQ(Run("--complex-output real complex.nii.gz out_c.nii.gz").exitCode, 0);
  EXPECT_LT(MaxDifference(Values("out_c.nii.gz"), expected), 1e-4);
  // The default output is the magnitude of that real part.
  ASSERT_EQ(Run("complex.nii.gz out_m.nii.gz").exitCode, 0);
  std::vector<float> magnitude(expected.size());
  std::transform(expected.begin(), expected.end(), magnitude.begin(), [](float v) { return std::abs(v); });
  EXPECT_LT(MaxDifference(Values("out_m.nii.gz"), magnitude), 1e-4);
}

TEST_F(ComplexDenoiseTool, TwoFileInputsOnManyThreadsGiveTheOneThreadOutputBitForBit)
{
  // The two images read side by side and the volumes converted and demodulated on --nthreads threads.
  for (const char * input : { "--phase phase.nii.gz mag.nii.gz", "--imaginary imag.nii.gz real.nii.gz" })
  {
    SCOPED_TRACE(input);
    const std::string common = std::string("--complex-output real ") + input;
    ASSERT_EQ(Run("--overwrite --nthreads 1 " + common + " one.nii.gz").exitCode, 0);
    const auto one = Values("one.nii.gz");
    for (const char * threads : { "2", "5" })
    {
      ASSERT_EQ(Run(std::string("--overwrite --nthreads ") + threads + " " + common + " many.nii.gz").exitCode, 0);
      const auto many = Values("many.nii.gz");
      ASSERT_EQ(one.size(), many.size());
      EXPECT_EQ(std::memcmp(one.data(), many.data(), one.size() * sizeof(float)), 0) << threads << " threads";
    }
  }
}

TEST_F(ComplexDenoiseTool, TheDenoisedRealPartIsCloserToTheSignalThanTheNoisyOne)
{
  ASSERT_EQ(Run("--complex-output real complex.nii.gz out.nii.gz").exitCode, 0);
  const auto   denoised = Values("out.nii.gz");
  const auto & clean = m_Clean.values;
  double       noisyError = 0.0, denoisedError = 0.0;
  for (std::size_t i = 0; i < clean.size(); ++i)
  {
    noisyError += std::pow(std::hypot(m_Real[i], m_Imag[i]) - clean[i], 2); // the magnitude
    denoisedError += std::pow(denoised[i] - clean[i], 2);
  }
  EXPECT_LT(denoisedError, 0.35 * noisyError);
}

TEST_F(ComplexDenoiseTool, ComplexOutputPutsTheSmoothPhaseBack)
{
  ASSERT_EQ(Run("--complex-output complex complex.nii.gz out.nii.gz").exitCode, 0);
  ASSERT_EQ(Run("complex.nii.gz magnitude.nii.gz").exitCode, 0);
  const auto out = itk::ReadImage<ComplexSeries4D>(Path("out.nii.gz"));
  const auto magnitude = Values("magnitude.nii.gz");
  ASSERT_EQ(out->GetLargestPossibleRegion().GetNumberOfPixels(), magnitude.size());
  std::size_t aligned = 0, strong = 0;
  for (std::size_t i = 0; i < magnitude.size(); ++i)
  {
    const std::complex<double> value = out->GetBufferPointer()[i];
    ASSERT_NEAR(std::abs(value), magnitude[i], 1e-3 * (1.0 + magnitude[i]));
    if (m_Clean.values[i] > 4.0 * kSigma)
    {
      ++strong;
      // The output's phase is the input's (up to its noise): the phase is put back, not lost.
      aligned += std::abs(std::arg(value * std::conj(std::complex<double>(m_Real[i], m_Imag[i])))) < 0.5;
    }
  }
  ASSERT_GT(strong, 100u);
  EXPECT_GT(double(aligned), 0.95 * double(strong));
}

TEST_F(ComplexDenoiseTool, NoiseVolumesGiveSigmaAndAreLeftOutOfTheOutput)
{
  for (const std::string inputs : { "--phase phase_all.nii.gz mag_all.nii.gz", "mag_all.nii.gz" })
  {
    SCOPED_TRACE(inputs);
    const auto run = Run("--noise-volumes 4 --noise-map sigma.nii.gz --overwrite " + inputs + " out.nii.gz");
    ASSERT_EQ(run.exitCode, 0) << run.err;
    const auto out = itk::ReadImage<Series4D>(Path("out.nii.gz"));
    EXPECT_EQ(out->GetLargestPossibleRegion().GetSize(3), kVolumes);
    const auto        sigma = itk::ReadImage<Map>(Path("sigma.nii.gz"));
    const std::size_t voxels = sigma->GetLargestPossibleRegion().GetNumberOfPixels();
    // 125 voxels x 4 volumes (x 2 channels for complex) per window: within a few percent of the true sigma.
    EXPECT_NEAR(Median({ sigma->GetBufferPointer(), sigma->GetBufferPointer() + voxels }), kSigma, 0.08 * kSigma);
  }
  // A separate complex noise scan: the noise volumes alone.
  auto scan = ImageOf<ComplexSeries4D>(m_Size, kNoiseVolumes);
  const std::size_t offset = m_Clean.Voxels() * kVolumes;
  for (std::size_t i = 0; i < m_Clean.Voxels() * kNoiseVolumes; ++i)
  {
    scan->GetBufferPointer()[i] = { m_Real[offset + i], m_Imag[offset + i] };
  }
  itk::WriteImage(scan, Path("norf.nii.gz"));
  const auto run = Run("--noise-scan norf.nii.gz --noise-map s2.nii.gz complex.nii.gz out2.nii.gz");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  const auto sigma = itk::ReadImage<Map>(Path("s2.nii.gz"));
  EXPECT_NEAR(Median({ sigma->GetBufferPointer(),
                       sigma->GetBufferPointer() + sigma->GetLargestPossibleRegion().GetNumberOfPixels() }),
              kSigma, 0.08 * kSigma);
}

TEST_F(ComplexDenoiseTool, PhaseUnitsAreReadOrRefusedByTheirRange)
{
  // Siemens' -4096..4095 is recognised, and gives the radians' result.
  const auto phase = itk::ReadImage<Series4D>(Path("phase.nii.gz"));
  auto       siemens = ImageOf<Series4D>(m_Size, kVolumes);
  auto       degrees = ImageOf<Series4D>(m_Size, kVolumes);
  for (std::size_t i = 0; i < m_Clean.Voxels() * kVolumes; ++i)
  {
    siemens->GetBufferPointer()[i] = std::round(phase->GetBufferPointer()[i] * 4096.0 / 3.14159265358979);
    degrees->GetBufferPointer()[i] = phase->GetBufferPointer()[i] * 180.0 / 3.14159265358979;
  }
  itk::WriteImage(siemens, Path("siemens.nii.gz"));
  itk::WriteImage(degrees, Path("degrees.nii.gz"));
  ASSERT_EQ(Run("--phase phase.nii.gz mag.nii.gz radians_out.nii.gz").exitCode, 0);
  ASSERT_EQ(Run("--phase siemens.nii.gz mag.nii.gz siemens_out.nii.gz").exitCode, 0);
  const auto radiansOut = Values("radians_out.nii.gz");
  // 12-bit phase steps of pi/4096 move the input by about 0.01 (a rank may change in a patch or two).
  EXPECT_LT(RmsDifference(Values("siemens_out.nii.gz"), radiansOut), 0.05);
  // Degrees ([-180, 180]) are ambiguous: refused until named.
  ExpectRefused("--phase degrees.nii.gz mag.nii.gz d_out.nii.gz", 3, "--phase-units");
  ASSERT_EQ(Run("--phase degrees.nii.gz --phase-units degrees mag.nii.gz d_out.nii.gz").exitCode, 0);
  EXPECT_LT(MaxDifference(Values("d_out.nii.gz"), radiansOut), 1e-3);
  // Named units whose range the phase leaves.
  ExpectRefused("--phase siemens.nii.gz --phase-units radians mag.nii.gz r_out.nii.gz", 3, "outside radians");
}

TEST_F(ComplexDenoiseTool, TheCudaBackendGivesTheCpuResultOnComplexInputWithNoiseVolumes)
{
  const std::string arguments = "--phase phase_all.nii.gz --noise-volumes 4 --complex-output real mag_all.nii.gz ";
  ASSERT_EQ(Run(arguments + "cpu.nii.gz").exitCode, 0);
  const auto cuda = RunToolIn(m_Directory, SVDLR_DENOISE_TOOL, "--backend cuda --quiet " + arguments + "cuda.nii.gz");
  if (cuda.exitCode != 0)
  {
    GTEST_SKIP() << "no usable CUDA device: " << cuda.err;
  }
  // The same demodulated series and sigma map go to both backends, which agree to float rounding.
  const auto cpuValues = Values("cpu.nii.gz");
  EXPECT_LT(MaxDifference(Values("cuda.nii.gz"), cpuValues), 1e-5 * 80.0); // values up to about 75
}

TEST_F(ComplexDenoiseTool, BadComplexInputsExitWithThreeAndBadCommandLinesWithTwo)
{
  ExpectRefused("--phase phase_all.nii.gz mag.nii.gz out.nii.gz", 3, "34 volumes; it must have");
  auto small = ImageOf<Series4D>({ { 16, 14, 11 } }, kVolumes);
  small->FillBuffer(0.5f);
  itk::WriteImage(small, Path("small.nii.gz"));
  ExpectRefused("--imaginary small.nii.gz real.nii.gz out.nii.gz", 3, "16 x 14 x 11 voxels");
  ExpectRefused("--noise-scan small.nii.gz complex.nii.gz out.nii.gz", 3, "16 x 14 x 11 voxels");
  ExpectRefused("--noise-volumes 29 mag.nii.gz out.nii.gz", 3, "fewer than 2 are left");
  ExpectRefused("--phase nowhere.nii.gz mag.nii.gz out.nii.gz", 3, "cannot read the phase");
  // NaN in any file of a complex series: NIfTI readers turn it into 0, which must not pass for a phase of 0 rad.
  for (const char * name : { "phase", "mag", "imag" })
  {
    auto withNaN = itk::ReadImage<Series4D>(Path(std::string(name) + ".nii.gz"));
    withNaN->GetBufferPointer()[withNaN->GetLargestPossibleRegion().GetNumberOfPixels() / 2] =
      std::numeric_limits<float>::quiet_NaN();
    itk::WriteImage(withNaN, Path(std::string(name) + "_nan.nii.gz"));
  }
  ExpectRefused("--phase phase_nan.nii.gz mag.nii.gz out.nii.gz", 3, "the phase 'phase_nan.nii.gz' holds NaN or Inf");
  ExpectRefused("--phase phase.nii.gz mag_nan.nii.gz out.nii.gz", 3, "the series 'mag_nan.nii.gz' holds NaN or Inf");
  ExpectRefused("--imaginary imag_nan.nii.gz real.nii.gz out.nii.gz", 3,
                "the imaginary part 'imag_nan.nii.gz' holds NaN or Inf");
  ExpectRefused("--noise-volumes 4 --noise-sigma 2 mag_all.nii.gz out.nii.gz", 2, "give sigma once");
  ExpectRefused("--complex-output complex mag.nii.gz out.nii.gz", 2, "needs complex input");
  ExpectRefused("--phase-units degrees mag.nii.gz out.nii.gz", 2, "--phase");
  ExpectRefused("--phase phase.nii.gz --imaginary imag.nii.gz mag.nii.gz out.nii.gz", 2, "excludes");
}

TEST_F(ComplexDenoiseTool, VstAndNoiseFloorOnAMagnitudeGiveTheEnginesResultOnBothBackends)
{
  const std::string arguments = "--vst --noise-floor --coils 2 --noise-sigma 2 mag.nii.gz ";
  const auto        run = Run(arguments + "vst.nii.gz");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  const auto magnitude = Values("mag.nii.gz");
  const std::size_t voxels = m_Clean.Voxels();
  const std::array<std::ptrdiff_t, 4> strides{ 1, std::ptrdiff_t(m_Size[0]), std::ptrdiff_t(m_Size[0] * m_Size[1]),
                                               std::ptrdiff_t(voxels) };
  std::vector<float>         expected(magnitude.size());
  const std::vector<float>   sigma(voxels, static_cast<float>(kSigma));
  svdlr::LocalDenoiseOptions options;
  options.backend = svdlr::Backend::CPU;
  options.noiseSigma = sigma.data();
  options.magnitudeNoise.stabilise = options.magnitudeNoise.noiseFloor = true;
  options.magnitudeNoise.coils = 2;
  svdlr::DenoiseLocalLowRank({ magnitude.data(), m_Size, kVolumes, strides },
                             { expected.data(), m_Size, kVolumes, strides }, {}, options);
  EXPECT_EQ(MaxDifference(Values("vst.nii.gz"), expected), 0.0);
  std::ifstream     sidecar(Path("vst.json"));
  const std::string record((std::istreambuf_iterator<char>(sidecar)), std::istreambuf_iterator<char>());
  EXPECT_NE(record.find("\"magnitudeNoise\": \"vst+noise-floor\""), std::string::npos) << record;

  const auto cuda = RunToolIn(m_Directory, SVDLR_DENOISE_TOOL, "--backend cuda --quiet " + arguments + "cuda.nii.gz");
  if (cuda.exitCode != 0)
  {
    GTEST_SKIP() << "no usable CUDA device: " << cuda.err;
  }
  // The transforms run on the host around either backend: the backends' float rounding alone differs.
  EXPECT_LT(MaxDifference(Values("cuda.nii.gz"), expected), 1e-5 * 80.0); // values up to about 75
}

TEST_F(ComplexDenoiseTool, AMagnitudeGetsTheAutomaticModelWhereSigmaIsEstimatedAndComplexInputDoesNot)
{
  const auto sidecarModel = [this](const std::string & name) {
    std::ifstream     sidecar(Path(name + ".json"));
    const std::string record((std::istreambuf_iterator<char>(sidecar)), std::istreambuf_iterator<char>());
    const std::string key = "\"magnitudeNoise\": \"";
    const std::size_t at = record.find(key);
    return at == std::string::npos ? record : record.substr(at + key.size(), record.find('"', at + key.size()) - at -
                                                                               key.size());
  };
  for (const auto & [arguments, output, model] :
       { std::tuple{ "mag.nii.gz", "auto", "vst+noise-floor" },
         std::tuple{ "--vst --noise-floor mag.nii.gz", "explicit", "vst+noise-floor" },
         std::tuple{ "--no-magnitude-model mag.nii.gz", "plain", "none" },
         std::tuple{ "--preset dwidenoise mag.nii.gz", "dwidenoise", "none" },
         std::tuple{ "--noise-sigma 2 mag.nii.gz", "known", "none" },
         std::tuple{ "--policy fixed --rank 3 mag.nii.gz", "fixed", "none" },
         std::tuple{ "complex.nii.gz", "fromcomplex", "none" } })
  {
    const auto run = Run(std::string(arguments) + " " + output + ".nii.gz");
    ASSERT_EQ(run.exitCode, 0) << arguments << ": " << run.err;
    EXPECT_EQ(sidecarModel(output), model) << arguments;
  }
  EXPECT_EQ(MaxDifference(Values("auto.nii.gz"), Values("explicit.nii.gz")), 0.0);
  EXPECT_GT(MaxDifference(Values("auto.nii.gz"), Values("plain.nii.gz")), 0.0);
  ExpectRefused("--no-magnitude-model --vst mag.nii.gz out.nii.gz", 2, "--vst with --no-magnitude-model");
}

TEST_F(ComplexDenoiseTool, VstWithoutSigmaOrOnComplexInputIsAUsageError)
{
  ExpectRefused("--vst --policy fixed --rank 3 mag.nii.gz out.nii.gz", 2, "--vst needs sigma");
  ExpectRefused("--noise-floor --policy fixed --rank 3 mag.nii.gz out.nii.gz", 2, "--noise-floor needs sigma");
  ExpectRefused("--vst --phase phase.nii.gz mag.nii.gz out.nii.gz", 2, "is for a magnitude series");
  ExpectRefused("--noise-floor complex.nii.gz out.nii.gz", 2, "is for a magnitude series");
}

TEST_F(ComplexDenoiseTool, SigmaFloorCorrectionGivesTheEnginesCorrectedMapAndIsLabelled)
{
  const auto run = Run("--sigma-floor-correction --noise-estimator residual --noise-map sigma.nii.gz mag.nii.gz "
                       "corrected.nii.gz");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  const auto                          magnitude = Values("mag.nii.gz");
  const std::size_t                   voxels = m_Clean.Voxels();
  const std::array<std::ptrdiff_t, 4> strides{ 1, std::ptrdiff_t(m_Size[0]), std::ptrdiff_t(m_Size[0] * m_Size[1]),
                                               std::ptrdiff_t(voxels) };
  std::vector<float>         expected(magnitude.size()), sigma(voxels);
  svdlr::LocalDenoiseOptions options;
  options.backend = svdlr::Backend::CPU;
  options.noiseEstimator = svdlr::NoiseEstimator::ResidualRefit;
  options.magnitudeNoise.sigmaFloorCorrection = true;
  svdlr::DenoiseLocalLowRank({ magnitude.data(), m_Size, kVolumes, strides },
                             { expected.data(), m_Size, kVolumes, strides }, { sigma.data(), nullptr }, options);
  EXPECT_EQ(MaxDifference(Values("corrected.nii.gz"), expected), 0.0);
  const auto map = itk::ReadImage<Map>(Path("sigma.nii.gz"));
  EXPECT_EQ(MaxDifference({ map->GetBufferPointer(), map->GetBufferPointer() + voxels }, sigma), 0.0);
  std::ifstream     sidecar(Path("corrected.json"));
  const std::string record((std::istreambuf_iterator<char>(sidecar)), std::istreambuf_iterator<char>());
  EXPECT_NE(record.find("\"magnitudeNoise\": \"sigma-floor-correction\""), std::string::npos) << record;
}

TEST_F(ComplexDenoiseTool, SigmaFloorCorrectionWhereItMakesNoSenseIsAUsageError)
{
  const std::string flag = "--sigma-floor-correction ";
  ExpectRefused(flag + "--noise-sigma 2 mag.nii.gz out.nii.gz", 2, "a known sigma");
  ExpectRefused(flag + "--noise-volumes 4 mag_all.nii.gz out.nii.gz", 2, "a known sigma");
  ExpectRefused(flag + "--vst mag.nii.gz out.nii.gz", 2, "variance stabilisation");
  ExpectRefused(flag + "--phase phase.nii.gz mag.nii.gz out.nii.gz", 2, "is for a magnitude series");
  ExpectRefused(flag + "--imaginary imag.nii.gz real.nii.gz out.nii.gz", 2, "is for a magnitude series");
  ExpectRefused(flag + "complex.nii.gz out.nii.gz", 2, "is for a magnitude series");
  ExpectRefused(flag + "--policy fixed --rank 3 mag.nii.gz out.nii.gz", 2, "--sigma-floor-correction needs sigma");
}

} // namespace

namespace
{

/** A g-factor map on `size`: 1 + x / size[0] (1 to 2 along x), with `bad` at voxel [2, 3, 4] unless it is 1. */
void
WriteGFactor(const std::string & path, const std::array<std::size_t, 3> & size, float bad = 1.0f)
{
  auto map = Map::New();
  map->SetRegions(Map::SizeType{ { size[0], size[1], size[2] } });
  map->Allocate();
  for (std::size_t v = 0; v < map->GetLargestPossibleRegion().GetNumberOfPixels(); ++v)
  {
    map->GetBufferPointer()[v] = 1.0f + float(v % size[0]) / float(size[0]);
  }
  if (bad != 1.0f)
  {
    map->GetBufferPointer()[2 + size[0] * (3 + size[1] * 4)] = bad;
  }
  itk::WriteImage(map, path);
}

} // namespace

TEST_F(ComplexDenoiseTool, GFactorGivesTheEnginesResultWithTheNoiseMapTimesG)
{
  WriteGFactor(Path("g.nii.gz"), m_Size);
  ASSERT_EQ(Run("--gfactor g.nii.gz --noise-map sigma.nii.gz mag.nii.gz out.nii.gz").exitCode, 0);
  // The engine with the same map, on the same magnitude.
  const auto        magnitude = itk::ReadImage<Series4D>(Path("mag.nii.gz"));
  const auto        g = itk::ReadImage<Map>(Path("g.nii.gz"));
  const std::size_t voxels = m_Clean.Voxels();
  const std::array<std::ptrdiff_t, 4> strides{ 1, std::ptrdiff_t(m_Size[0]), std::ptrdiff_t(m_Size[0] * m_Size[1]),
                                               std::ptrdiff_t(voxels) };
  std::vector<float>         denoised(voxels * kVolumes), sigma(voxels);
  svdlr::LocalDenoiseOptions options;
  options.backend = svdlr::Backend::CPU;
  options.gfactor = g->GetBufferPointer();
  svdlr::LocalDenoiseMaps maps;
  maps.noiseSigma = sigma.data();
  svdlr::DenoiseLocalLowRank({ magnitude->GetBufferPointer(), m_Size, kVolumes, strides },
                             { denoised.data(), m_Size, kVolumes, strides }, maps, options);
  EXPECT_LT(MaxDifference(Values("out.nii.gz"), denoised), 1e-5 * 80.0); // values up to about 75
  const auto toolSigma = itk::ReadImage<Map>(Path("sigma.nii.gz"));
  EXPECT_LT(MaxDifference({ toolSigma->GetBufferPointer(), toolSigma->GetBufferPointer() + voxels }, sigma), 1e-5);
  // A single given sigma is the sigma where g = 1.
  ASSERT_EQ(Run("--gfactor g.nii.gz --noise-sigma 2 --policy nordic mag.nii.gz given.nii.gz").exitCode, 0);
  const std::vector<float> two(voxels, 2.0f);
  options.policy = svdlr::RankPolicy::Nordic();
  options.noiseSigma = two.data();
  svdlr::DenoiseLocalLowRank({ magnitude->GetBufferPointer(), m_Size, kVolumes, strides },
                             { denoised.data(), m_Size, kVolumes, strides }, {}, options);
  EXPECT_LT(MaxDifference(Values("given.nii.gz"), denoised), 1e-5 * 80.0);
  options.noiseSigma = nullptr;
  // The noise-volume path: the noise volumes divided by g give the sigma where g = 1 (the engine's
  // EstimateNoiseFromScan with the map, on the magnitude's last 4 volumes: Rayleigh), and the map out is that times g.
  ASSERT_EQ(Run("--gfactor g.nii.gz --noise-volumes 4 --policy nordic --noise-map s2.nii.gz mag_all.nii.gz "
                "out2.nii.gz")
              .exitCode,
            0);
  const auto              all = itk::ReadImage<Series4D>(Path("mag_all.nii.gz"));
  std::vector<float>      unit(voxels), expected(voxels); // sigma where g = 1, and the map the run should write
  svdlr::NoiseScanOptions scan;
  scan.gfactor = g->GetBufferPointer();
  svdlr::EstimateNoiseFromScan({ all->GetBufferPointer() + voxels * kVolumes, m_Size, kNoiseVolumes, strides }, {},
                               unit.data(), scan);
  // That sigma (the sigma where g = 1) is the known sigma of the engine's run with the map, whose noise map is
  // then each voxel's patches' sigma times g.
  options.policy = svdlr::RankPolicy::Nordic();
  options.noiseSigma = unit.data();
  maps.noiseSigma = expected.data();
  svdlr::DenoiseLocalLowRank({ all->GetBufferPointer(), m_Size, kVolumes, strides },
                             { denoised.data(), m_Size, kVolumes, strides }, maps, options);
  EXPECT_LT(MaxDifference(Values("out2.nii.gz"), denoised), 1e-5 * 80.0);
  const auto scanned = itk::ReadImage<Map>(Path("s2.nii.gz"));
  EXPECT_LT(MaxDifference({ scanned->GetBufferPointer(), scanned->GetBufferPointer() + voxels }, expected),
            1e-5 * kSigma * 4.0); // sigma up to about 2 kSigma
}

TEST_F(ComplexDenoiseTool, BadGFactorMapsExitWithThreeAndAKnownSigmaMapWithTwo)
{
  WriteGFactor(Path("g.nii.gz"), m_Size);
  WriteGFactor(Path("small_g.nii.gz"), { { 16, 14, 11 } });
  ExpectRefused("--gfactor small_g.nii.gz mag.nii.gz out.nii.gz", 3, "16 x 14 x 11 voxels");
  for (const float bad : { 0.0f, -1.0f, std::numeric_limits<float>::quiet_NaN() })
  {
    WriteGFactor(Path("bad_g.nii.gz"), m_Size, bad);
    ExpectRefused("--gfactor bad_g.nii.gz mag.nii.gz out.nii.gz", 3, "at voxel [2, 3, 4]");
    ExpectRefused("--gfactor bad_g.nii.gz --noise-volumes 4 mag_all.nii.gz out.nii.gz", 3, "at voxel [2, 3, 4]");
  }
  WriteGFactor(Path("sigma_map.nii.gz"), m_Size);
  ExpectRefused("--gfactor g.nii.gz --known-sigma-map sigma_map.nii.gz mag.nii.gz out.nii.gz", 2, "--gfactor");
  ExpectRefused("--gfactor g.nii.gz --vst mag.nii.gz out.nii.gz", 2, "--gfactor");
  ExpectRefused("--gfactor nowhere.nii.gz mag.nii.gz out.nii.gz", 3, "g-factor map");
}

TEST_F(ComplexDenoiseTool, EstimatedGFactorGivesTheEnginesResultAndWritesTheMapItUsed)
{
  ASSERT_EQ(Run("--estimate-gfactor --noise-sigma 2 --policy nordic --noise-map sigma.nii.gz --gfactor-out g.nii.gz "
                "mag.nii.gz out.nii.gz")
              .exitCode,
            0);
  // The engine with the estimate asked for, on the same magnitude, with the single sigma as the sigma where g = 1.
  const auto        magnitude = itk::ReadImage<Series4D>(Path("mag.nii.gz"));
  const std::size_t voxels = m_Clean.Voxels();
  const std::array<std::ptrdiff_t, 4> strides{ 1, std::ptrdiff_t(m_Size[0]), std::ptrdiff_t(m_Size[0] * m_Size[1]),
                                               std::ptrdiff_t(voxels) };
  std::vector<float>         denoised(voxels * kVolumes), sigma(voxels), g(voxels);
  const std::vector<float>   two(voxels, 2.0f);
  svdlr::LocalDenoiseOptions options;
  options.backend = svdlr::Backend::CPU;
  options.policy = svdlr::RankPolicy::Nordic();
  options.noiseSigma = two.data();
  options.estimateGFactor = true;
  svdlr::LocalDenoiseMaps maps;
  maps.noiseSigma = sigma.data();
  maps.gfactor = g.data();
  svdlr::DenoiseLocalLowRank({ magnitude->GetBufferPointer(), m_Size, kVolumes, strides },
                             { denoised.data(), m_Size, kVolumes, strides }, maps, options);
  EXPECT_LT(MaxDifference(Values("out.nii.gz"), denoised), 1e-5 * 80.0); // values up to about 75
  const auto toolSigma = itk::ReadImage<Map>(Path("sigma.nii.gz"));
  EXPECT_LT(MaxDifference({ toolSigma->GetBufferPointer(), toolSigma->GetBufferPointer() + voxels }, sigma), 1e-5);
  const auto toolG = itk::ReadImage<Map>(Path("g.nii.gz"));
  EXPECT_LT(MaxDifference({ toolG->GetBufferPointer(), toolG->GetBufferPointer() + voxels }, g), 1e-6);
  // A given map comes out as given.
  WriteGFactor(Path("given.nii.gz"), m_Size);
  ASSERT_EQ(Run("--gfactor given.nii.gz --gfactor-out given_out.nii.gz mag.nii.gz out2.nii.gz").exitCode, 0);
  EXPECT_EQ(Values("given_out.nii.gz"), Values("given.nii.gz"));
}

TEST_F(ComplexDenoiseTool, EstimatedGFactorWithWhatItCannotTakeExitsWithTwo)
{
  WriteGFactor(Path("g.nii.gz"), m_Size);
  ExpectRefused("--estimate-gfactor --gfactor g.nii.gz mag.nii.gz out.nii.gz", 2, "not both");
  ExpectRefused("--estimate-gfactor --known-sigma-map g.nii.gz mag.nii.gz out.nii.gz", 2,
                "--estimate-gfactor with --known-sigma-map");
  ExpectRefused("--estimate-gfactor --noise-volumes 4 mag_all.nii.gz out.nii.gz", 2, "--noise-volumes");
  ExpectRefused("--estimate-gfactor --vst mag.nii.gz out.nii.gz", 2, "--estimate-gfactor");
  ExpectRefused("--gfactor-out g2.nii.gz mag.nii.gz out.nii.gz", 2, "--gfactor-out");
  ExpectRefused("--batch --estimate-gfactor -o batch_out mag.nii.gz", 2, "not --batch");
}
