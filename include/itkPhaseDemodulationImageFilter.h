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
#ifndef itkPhaseDemodulationImageFilter_h
#define itkPhaseDemodulationImageFilter_h

#include "itkImageToImageFilter.h"
#include "itkSVDLowRankEngineBridge.h"

#include <complex>

namespace itk
{

/** \class PhaseDemodulationImageFilter
 * \brief Removes each volume's smooth phase from a complex 4D series, so that its signal lies in the real part.
 *
 * For every volume of a complex series (x, y, z, volume), the smooth phase is the argument of the complex image
 * low-passed by a separable Gaussian of standard deviation FilterSigma voxels along x, y, z (default 2, 2, 0: in
 * plane), leaving each voxel itself out of its own estimate. Output 0 is the real part of the series with that
 * phase removed, Re(z e^{-i phase}): the signal with Gaussian noise (no Rician floor), ready for
 * LocalLowRankDenoisingImageFilter; output 1 (GetPhaseOutput()) is the phase, in radians, for putting it back.
 * See docs/denoising-options.md, "Complex data". The work runs in the ITK-free engine (svdlr/ComplexSeries.h) on ITK's
 * threads.
 *
 * \ingroup SVDLowRankReconstruction
 */
template <typename TInputImage = Image<std::complex<float>, 4>, typename TOutputImage = Image<float, 4>>
class ITK_TEMPLATE_EXPORT PhaseDemodulationImageFilter : public ImageToImageFilter<TInputImage, TOutputImage>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(PhaseDemodulationImageFilter);

  using Self = PhaseDemodulationImageFilter;
  using Superclass = ImageToImageFilter<TInputImage, TOutputImage>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  svdlrNameOfClassMacro(PhaseDemodulationImageFilter, ImageToImageFilter);

  static constexpr unsigned int ImageDimension = TInputImage::ImageDimension;
  static_assert(ImageDimension == 4 && TOutputImage::ImageDimension == 4,
                "PhaseDemodulationImageFilter takes a 4D complex series (x, y, z, volume)");
  using InputImageType = TInputImage;
  using OutputImageType = TOutputImage;
  using FilterSigmaType = FixedArray<double, 3>;

  /** The Gaussian's standard deviation in voxels along x, y, z (0: no smoothing along that axis). */
  itkSetMacro(FilterSigma, FilterSigmaType);
  itkGetConstMacro(FilterSigma, FilterSigmaType);

  /** The smooth phase removed, in radians. */
  OutputImageType *
  GetPhaseOutput()
  {
    return this->GetOutput(1);
  }

protected:
  PhaseDemodulationImageFilter();
  ~PhaseDemodulationImageFilter() override = default;

  void
  VerifyPreconditions() const override;
  void
  GenerateInputRequestedRegion() override;
  void
  EnlargeOutputRequestedRegion(DataObject * output) override;
  void
  GenerateData() override;
  void
  PrintSelf(std::ostream & os, Indent indent) const override;

private:
  FilterSigmaType m_FilterSigma{ { 2.0, 2.0, 0.0 } };
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkPhaseDemodulationImageFilter.hxx"
#endif

#endif
