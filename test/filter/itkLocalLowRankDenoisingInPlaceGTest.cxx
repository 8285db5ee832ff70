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
  using Value = typename TFilter::InputImageType::InternalPixelType;
  const std::size_t        elements = input->GetPixelContainer()->Size();
  const std::vector<Value> original(input->GetBufferPointer(), input->GetBufferPointer() + elements);

  auto separate = TFilter::New();
  configure(*separate);
  separate->SetInput(input);
  separate->Update();
  ASSERT_FALSE(separate->GetInPlace()) << "off by default";
  ASSERT_TRUE(std::equal(original.begin(), original.end(), input->GetBufferPointer())) << "the input kept";

  const Value * inputBuffer = input->GetBufferPointer();
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
  const Value * a = separate->GetOutput()->GetBufferPointer();
  const Value * b = inPlace->GetOutput()->GetBufferPointer();
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
  const auto floats = ToImage(m_Series.noisy);
  auto       input = SeriesD::New();
  input->SetRegions(floats->GetLargestPossibleRegion());
  input->Allocate();
  std::copy(floats->GetBufferPointer(), floats->GetBufferPointer() + floats->GetPixelContainer()->Size(),
            input->GetBufferPointer());
  ExpectInPlaceEqualsOutOfPlace<itk::LocalLowRankDenoisingImageFilter<SeriesD>>(input, Backend::CPU, nullptr, false);
}
