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
// LocalLowRankDenoisingImageFilter in place (InPlaceOn): the series denoised in the input's buffer gives, to the bit,
// what the filter gives into a buffer of its own, on every backend (Auto takes the GPU where there is one: the CUDA
// backend's in-place path), with a mask and with the magnitude model; off by default, the input stays as it was.
#include "itkLocalLowRankDenoisingTesting.h"

namespace
{
using LocalLowRankDenoisingInPlace = LocalLowRankDenoising;

using Backend = itk::SVDLowRankReconstructionEnums::Backend;

/** The mask of the left half of the 14 x 12 x 10 grid. */
Filter4D::MaskImageType::Pointer
LeftHalfMask()
{
  auto mask = Filter4D::MaskImageType::New();
  mask->SetRegions(Filter4D::MaskImageType::SizeType{ { 14, 12, 10 } });
  mask->Allocate();
  for (std::size_t v = 0; v < 14 * 12 * 10; ++v)
  {
    mask->GetBufferPointer()[v] = (v % 14) < 7 ? 255 : 0;
  }
  return mask;
}

/** The filter run on `input` in its own buffer and in place: the same series and maps, bit for bit, the in-place
 * output in what was the input's buffer. */
template <typename TFilter>
void
ExpectInPlaceEqualsOutOfPlace(typename TFilter::InputImageType::Pointer input, Backend backend,
                              Filter4D::MaskImageType * mask, bool magnitude)
{
  const auto configure = [&](TFilter & filter) {
    filter.SetBackend(backend);
    filter.SetMaskImage(mask);
    filter.SetAutomaticMagnitudeModel(magnitude);
    filter.WarnOnBackendFallbackOff(); // no GPU here: the CPU, said once by GetBackendUsed
  };
  const std::size_t elements = input->GetPixelContainer()->Size();
  const std::vector<float> original(input->GetBufferPointer(), input->GetBufferPointer() + elements);

  auto separate = TFilter::New();
  configure(*separate);
  separate->SetInput(input);
  separate->Update();
  ASSERT_FALSE(separate->GetInPlace()) << "off by default";
  ASSERT_TRUE(std::equal(original.begin(), original.end(), input->GetBufferPointer())) << "the input kept";

  const float * inputBuffer = input->GetBufferPointer();
  auto          inPlace = TFilter::New();
  configure(*inPlace);
  inPlace->InPlaceOn();
  inPlace->SetInput(input);
  inPlace->Update();
  EXPECT_EQ(inPlace->GetOutput()->GetBufferPointer(), inputBuffer) << "denoised in the input's buffer";
  EXPECT_EQ(inPlace->GetBackendUsed(), separate->GetBackendUsed());
  EXPECT_STREQ(inPlace->GetMagnitudeNoiseUsed(), separate->GetMagnitudeNoiseUsed());
  std::cout << "backend " << inPlace->GetBackendUsed() << ", magnitude model: '" << inPlace->GetMagnitudeNoiseUsed()
            << "'\n";
  const float * a = separate->GetOutput()->GetBufferPointer();
  const float * b = inPlace->GetOutput()->GetBufferPointer();
  for (std::size_t i = 0; i < elements; ++i)
  {
    ASSERT_EQ(a[i], b[i]) << "element " << i;
  }
  const std::size_t voxels = separate->GetRankOutput()->GetPixelContainer()->Size();
  for (std::size_t v = 0; v < voxels; ++v)
  {
    ASSERT_EQ(separate->GetNoiseSigmaOutput()->GetBufferPointer()[v],
              inPlace->GetNoiseSigmaOutput()->GetBufferPointer()[v]) << "voxel " << v;
    ASSERT_EQ(separate->GetRankOutput()->GetBufferPointer()[v], inPlace->GetRankOutput()->GetBufferPointer()[v])
      << "voxel " << v;
  }
}

} // namespace

TEST_F(LocalLowRankDenoisingInPlace, A4DSeriesGivesTheSameOutputAndMapsInTheInputsBuffer)
{
  for (const Backend backend : { Backend::CPU, Backend::Auto })
  {
    SCOPED_TRACE(backend == Backend::CPU ? "CPU" : "Auto");
    ExpectInPlaceEqualsOutOfPlace<Filter4D>(ToImage(m_Series.noisy), backend, nullptr, false);
  }
}

TEST_F(LocalLowRankDenoisingInPlace, AVectorImageGivesTheSameOutputAndMapsInTheInputsBuffer)
{
  for (const Backend backend : { Backend::CPU, Backend::Auto })
  {
    SCOPED_TRACE(backend == Backend::CPU ? "CPU" : "Auto");
    ExpectInPlaceEqualsOutOfPlace<FilterVector>(ToVectorImage(m_Series.noisy), backend, nullptr, false);
  }
}

TEST_F(LocalLowRankDenoisingInPlace, AMaskedMagnitudeSeriesGivesTheSameOutputInTheInputsBuffer)
{
  svdlr::test::Series magnitude = m_Series.noisy;
  for (float & value : magnitude.values)
  {
    value = std::abs(value);
  }
  const auto mask = LeftHalfMask();
  for (const Backend backend : { Backend::CPU, Backend::Auto })
  {
    SCOPED_TRACE(backend == Backend::CPU ? "CPU" : "Auto");
    ExpectInPlaceEqualsOutOfPlace<Filter4D>(ToImage(magnitude), backend, mask, true);
  }
}

TEST_F(LocalLowRankDenoisingInPlace, ADoubleSeriesDenoisedInPlaceEqualsItsSeparateRun)
{
  using SeriesD = itk::Image<double, 4>;
  using FilterD = itk::LocalLowRankDenoisingImageFilter<SeriesD>;
  const auto asDouble = [&] {
    const auto floats = ToImage(m_Series.noisy);
    auto       image = SeriesD::New();
    image->SetRegions(floats->GetLargestPossibleRegion());
    image->Allocate();
    std::copy(floats->GetBufferPointer(), floats->GetBufferPointer() + floats->GetPixelContainer()->Size(),
              image->GetBufferPointer());
    return image;
  };
  auto separate = FilterD::New();
  separate->SetBackend(Backend::CPU);
  separate->SetInput(asDouble());
  separate->Update();
  const auto input = asDouble();
  const double * inputBuffer = input->GetBufferPointer();
  auto           inPlace = FilterD::New();
  inPlace->SetBackend(Backend::CPU);
  inPlace->InPlaceOn();
  inPlace->SetInput(input);
  inPlace->Update();
  EXPECT_EQ(inPlace->GetOutput()->GetBufferPointer(), inputBuffer);
  for (std::size_t i = 0; i < input->GetPixelContainer()->Size(); ++i)
  {
    ASSERT_EQ(separate->GetOutput()->GetBufferPointer()[i], inPlace->GetOutput()->GetBufferPointer()[i]) << i;
  }
}
