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
// PhaseDemodulationImageFilter: the engine's phase demodulation in ITK pipelines: its outputs against the engine
// called directly, a known phase removed, and its place before LocalLowRankDenoisingImageFilter.
#include "itkPhaseDemodulationImageFilter.h"

#include "itkLocalLowRankDenoisingImageFilter.h"
#include "svdlr/ComplexSeries.h"
#include "svdlrTestSeries.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <vector>

namespace
{

using ComplexSeries4D = itk::Image<std::complex<float>, 4>;
using Series4D = itk::Image<float, 4>;
using Demodulation = itk::PhaseDemodulationImageFilter<ComplexSeries4D, Series4D>;

ComplexSeries4D::Pointer
ComplexImage(const std::array<std::size_t, 4> & size)
{
  auto image = ComplexSeries4D::New();
  image->SetRegions(ComplexSeries4D::SizeType{ { size[0], size[1], size[2], size[3] } });
  ComplexSeries4D::SpacingType spacing;
  ComplexSeries4D::PointType   origin;
  for (unsigned int i = 0; i < 4; ++i)
  {
    spacing[i] = 0.8 + 0.3 * i;
    origin[i] = 2.0 - i;
  }
  image->SetSpacing(spacing);
  image->SetOrigin(origin);
  image->Allocate();
  return image;
}

TEST(PhaseDemodulation, GivesTheEngineOwnPhaseAndRealPartWithTheInputGeometry)
{
  svdlr::test::Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::array<std::size_t, 4> size{ { 9, 7, 5, 4 } };
  auto                             input = ComplexImage(size);
  const std::size_t                count = input->GetLargestPossibleRegion().GetNumberOfPixels();
  std::vector<float>               re(count), im(count);
  for (std::size_t i = 0; i < count; ++i)
  {
    re[i] = float(4.0 + random.Normal());
    im[i] = float(-3.0 + random.Normal());
    input->GetBufferPointer()[i] = { re[i], im[i] };
  }
  auto filter = Demodulation::New();
  filter->SetInput(input);
  filter->SetFilterSigma(Demodulation::FilterSigmaType{ { 1.5, 0.5, 1.0 } });
  filter->Update();

  const std::array<std::size_t, 3>    grid{ { 9, 7, 5 } };
  const std::array<std::ptrdiff_t, 4> strides{ { 1, 9, 63, 315 } };
  std::vector<float>                  phase(count), real(count);
  svdlr::PhaseDemodulationOptions     options;
  options.filterSigma = { 1.5, 0.5, 1.0 };
  svdlr::DemodulatePhase({ re.data(), grid, 4, strides }, { im.data(), grid, 4, strides },
                         { phase.data(), grid, 4, strides }, { real.data(), grid, 4, strides }, {}, options);
  for (std::size_t i = 0; i < count; ++i)
  {
    ASSERT_FLOAT_EQ(filter->GetOutput()->GetBufferPointer()[i], real[i]) << i;
    ASSERT_FLOAT_EQ(filter->GetPhaseOutput()->GetBufferPointer()[i], phase[i]) << i;
  }
  for (unsigned int i = 0; i < 4; ++i)
  {
    EXPECT_EQ(filter->GetOutput()->GetSpacing()[i], input->GetSpacing()[i]);
    EXPECT_EQ(filter->GetPhaseOutput()->GetOrigin()[i], input->GetOrigin()[i]);
  }
}

TEST(PhaseDemodulation, RemovesAConstantPhasePerVolume)
{
  auto              input = ComplexImage({ { 8, 8, 3, 3 } });
  const std::size_t voxels = 8 * 8 * 3;
  for (std::size_t i = 0; i < input->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
  {
    const double magnitude = 10.0 + double(i % 7), angle = 2.9 - 2.2 * double(i / voxels);
    input->GetBufferPointer()[i] = std::polar(magnitude, angle);
  }
  auto filter = Demodulation::New();
  filter->SetInput(input);
  filter->Update();
  for (std::size_t i = 0; i < input->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
  {
    ASSERT_NEAR(filter->GetOutput()->GetBufferPointer()[i], 10.0 + double(i % 7), 1e-4);
    ASSERT_NEAR(std::remainder(filter->GetPhaseOutput()->GetBufferPointer()[i] - (2.9 - 2.2 * double(i / voxels)),
                               2.0 * 3.14159265358979),
                0.0, 1e-5);
  }
}

TEST(PhaseDemodulation, FeedsTheLocalDenoiserInAPipeline)
{
  svdlr::test::Random random;
  SCOPED_TRACE(random.SeedTrace());
  // 2 components of amplitude 2 (each at most about 2 x 1.2 x 2.5 = 6 in size) on a baseline of 20: positive.
  const auto signal = svdlr::test::LowRankSeries({ 12, 11, 10 }, 20, 2, 1.0, 2.0, random);
  auto       input = ComplexImage({ { 12, 11, 10, 20 } });
  double     noisyError = 0.0;
  for (std::size_t i = 0; i < signal.clean.values.size(); ++i)
  {
    const double clean = 20.0 + signal.clean.values[i]; // positive, as MRI signal is
    const std::complex<double> z(clean + random.Normal(), random.Normal());
    input->GetBufferPointer()[i] = z * std::polar(1.0, 0.7 * double(i / 1320) + 0.05 * double(i % 12));
    noisyError += std::pow(std::abs(z) - clean, 2);
  }
  auto demodulation = Demodulation::New();
  demodulation->SetInput(input);
  auto denoiser = itk::LocalLowRankDenoisingImageFilter<Series4D>::New();
  denoiser->SetInput(demodulation->GetOutput());
  denoiser->SetBackend(itk::SVDLowRankReconstructionEnums::Backend::CPU);
  denoiser->Update();
  double denoisedError = 0.0;
  for (std::size_t i = 0; i < signal.clean.values.size(); ++i)
  {
    denoisedError += std::pow(denoiser->GetOutput()->GetBufferPointer()[i] - (20.0 + signal.clean.values[i]), 2);
  }
  EXPECT_LT(denoisedError, 0.5 * noisyError);
}

TEST(PhaseDemodulation, RefusesANegativeFilterWidth)
{
  auto filter = Demodulation::New();
  filter->SetInput(ComplexImage({ { 4, 4, 2, 2 } }));
  filter->SetFilterSigma(Demodulation::FilterSigmaType{ { 1.0, -1.0, 0.0 } });
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
}

} // namespace
