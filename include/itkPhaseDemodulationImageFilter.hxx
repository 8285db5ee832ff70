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
#ifndef itkPhaseDemodulationImageFilter_hxx
#define itkPhaseDemodulationImageFilter_hxx

#include "itkPhaseDemodulationImageFilter.h"
#include "svdlr/ComplexSeries.h"

#include <cmath>
#include <vector>

namespace itk
{

template <typename TInputImage, typename TOutputImage>
PhaseDemodulationImageFilter<TInputImage, TOutputImage>::PhaseDemodulationImageFilter()
{
  this->SetNumberOfRequiredOutputs(2);
  this->SetNthOutput(1, this->MakeOutput(1));
}

template <typename TInputImage, typename TOutputImage>
void
PhaseDemodulationImageFilter<TInputImage, TOutputImage>::VerifyPreconditions() const
{
  Superclass::VerifyPreconditions();
  for (unsigned int i = 0; i < 3; ++i)
  {
    if (!(std::isfinite(m_FilterSigma[i]) && m_FilterSigma[i] >= 0.0))
    {
      itkExceptionMacro("FilterSigma must be finite and >= 0 voxels, got " << m_FilterSigma);
    }
  }
}

template <typename TInputImage, typename TOutputImage>
void
PhaseDemodulationImageFilter<TInputImage, TOutputImage>::GenerateInputRequestedRegion()
{
  Superclass::GenerateInputRequestedRegion();
  // Each volume's phase depends on the whole volume: the filter asks for (and makes) the whole series.
  auto * input = const_cast<InputImageType *>(this->GetInput());
  if (input)
  {
    input->SetRequestedRegionToLargestPossibleRegion();
  }
}

template <typename TInputImage, typename TOutputImage>
void
PhaseDemodulationImageFilter<TInputImage, TOutputImage>::EnlargeOutputRequestedRegion(DataObject * output)
{
  Superclass::EnlargeOutputRequestedRegion(output);
  output->SetRequestedRegionToLargestPossibleRegion();
}

template <typename TInputImage, typename TOutputImage>
void
PhaseDemodulationImageFilter<TInputImage, TOutputImage>::GenerateData()
{
  this->AllocateOutputs();
  const InputImageType * input = this->GetInput();
  OutputImageType *      real = this->GetOutput(0);
  OutputImageType *      phase = this->GetOutput(1);
  const auto &           size = input->GetLargestPossibleRegion().GetSize();
  const std::size_t      count = input->GetLargestPossibleRegion().GetNumberOfPixels();
  // The engine reads float real and imaginary parts (x fastest, then y, z, volume).
  std::vector<float> re(count), im(count), phaseValues(count), realValues(count);
  const auto *       pixels = input->GetBufferPointer();
  for (std::size_t i = 0; i < count; ++i)
  {
    re[i] = static_cast<float>(pixels[i].real());
    im[i] = static_cast<float>(pixels[i].imag());
  }
  const std::array<std::size_t, 3>    grid{ { size[0], size[1], size[2] } };
  const auto                           nx = static_cast<std::ptrdiff_t>(size[0]);
  const auto                           nxy = nx * static_cast<std::ptrdiff_t>(size[1]);
  const std::array<std::ptrdiff_t, 4> strides{ { 1, nx, nxy, nxy * static_cast<std::ptrdiff_t>(size[2]) } };
  svdlr::PhaseDemodulationOptions      options;
  options.filterSigma = { { m_FilterSigma[0], m_FilterSigma[1], m_FilterSigma[2] } };
  options.parallelFor = SVDLowRankEngineBridge::MakeParallelFor(this->GetMultiThreader());
  try
  {
    svdlr::DemodulatePhase({ re.data(), grid, size[3], strides }, { im.data(), grid, size[3], strides },
                           { phaseValues.data(), grid, size[3], strides },
                           { realValues.data(), grid, size[3], strides }, {}, options);
  }
  catch (const svdlr::Error & error)
  {
    SVDLowRankEngineBridge::Rethrow(error, this->GetNameOfClass(), "volumes");
  }
  using OutputPixelType = typename OutputImageType::PixelType;
  for (std::size_t i = 0; i < count; ++i)
  {
    real->GetBufferPointer()[i] = static_cast<OutputPixelType>(realValues[i]);
    phase->GetBufferPointer()[i] = static_cast<OutputPixelType>(phaseValues[i]);
  }
}

template <typename TInputImage, typename TOutputImage>
void
PhaseDemodulationImageFilter<TInputImage, TOutputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "FilterSigma: " << m_FilterSigma << std::endl;
}

} // namespace itk

#endif
