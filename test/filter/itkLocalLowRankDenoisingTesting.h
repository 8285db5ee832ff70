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
#ifndef itkLocalLowRankDenoisingTesting_h
#define itkLocalLowRankDenoisingTesting_h

// The LocalLowRankDenoisingImageFilter tests' series, image conversions and fixture, shared by the test files of
// itkLocalLowRankDenoisingImageFilterGTest.

#include "itkLocalLowRankDenoisingImageFilter.h"

#include "itkCommand.h"
#include "itkImageFileReader.h"
#include "itkNiftiImageIOFactory.h"
#include "itkSVDLowRankReconstructionImageFilter.h"
#include "svdlrTestData.h"
#include "svdlr/VolumeGroups.h"
#include "svdlrTestSeriesImage.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace
{

using Series4D = itk::Image<float, 4>;
using SeriesVector = itk::VectorImage<float, 3>;
using Filter4D = itk::LocalLowRankDenoisingImageFilter<Series4D>;
using FilterVector = itk::LocalLowRankDenoisingImageFilter<SeriesVector>;

using svdlr::test::ToImage;

SeriesVector::Pointer
ToVectorImage(const svdlr::test::Series & series)
{
  auto                     image = SeriesVector::New();
  SeriesVector::SizeType   size{ { series.size[0], series.size[1], series.size[2] } };
  image->SetRegions(size);
  image->SetNumberOfComponentsPerPixel(static_cast<unsigned int>(series.volumes));
  image->Allocate();
  float * buffer = image->GetBufferPointer();
  for (std::size_t v = 0; v < series.Voxels(); ++v)
  {
    for (std::size_t t = 0; t < series.volumes; ++t)
    {
      buffer[v * series.volumes + t] = series(v, t);
    }
  }
  return image;
}

/** The mask of the left half (x < 7) of the fixture's 14 x 12 x 10 grid. */
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

double
RmsError(const float * a, const svdlr::test::Series & b)
{
  double sum = 0.0;
  for (std::size_t i = 0; i < b.values.size(); ++i)
  {
    sum += (a[i] - b.values[i]) * static_cast<double>(a[i] - b.values[i]);
  }
  return std::sqrt(sum / static_cast<double>(b.values.size()));
}

using svdlr::test::Median;

/** The configuration the tests with measured bounds were measured with, dwidenoise's with the Veraart estimator
 * (centre voxel, hard threshold, Exp1), pinned so that the defaults can move without moving those bounds. */
template <typename TFilter>
void
PinMeasuredConfiguration(TFilter * filter)
{
  filter->SetAggregation(itk::LocalLowRankDenoisingEnums::Aggregation::CentreVoxel);
  filter->SetShrinkage(itk::LocalLowRankDenoisingEnums::Shrinkage::Hard);
  filter->SetMarchenkoPasturEstimator(itk::SVDLowRankReconstructionEnums::MarchenkoPasturEstimator::Veraart2016);
}

std::string
UpdateError(itk::ProcessObject * filter)
{
  try
  {
    filter->Update();
  }
  catch (const itk::ExceptionObject & error)
  {
    return error.GetDescription();
  }
  ADD_FAILURE() << "Update() did not throw";
  return {};
}

class LocalLowRankDenoising : public ::testing::Test
{
protected:
  void
  SetUp() override
  {
    m_Series = svdlr::test::LowRankSeries({ { 14, 12, 10 } }, 24, 3, 2.0, 12.0, m_Random);
  }
  svdlr::test::Random      m_Random;
  svdlr::test::NoisySeries m_Series;

private:
  ::testing::ScopedTrace m_SeedTrace{ __FILE__, __LINE__, m_Random.SeedTrace() }; // on every failure of the suite
};

} // namespace

#endif
