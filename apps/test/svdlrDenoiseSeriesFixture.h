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
#ifndef svdlrDenoiseSeriesFixture_h
#define svdlrDenoiseSeriesFixture_h

// What the two end-to-end suites of SVDLowRankDenoiseSeries on generated series share (its results, and its
// refusals): the series as images with a geometry of their own, comparisons, and the DenoiseTool fixture.

#include "svdlrTestScratch.h"
#include "svdlrTestSeriesImage.h"
#include "svdlrToolRun.h"
#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itkLocalLowRankDenoisingImageFilter.h"
#include "svdlr/DenoisePresets.h"
#include "svdlr/OutputMaps.h"
#include <nlohmann/json.hpp>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <vector>

namespace svdlr_test
{

using Series4D = itk::Image<float, 4>;
using SeriesVector = itk::VectorImage<float, 3>;
using Map = itk::Image<float, 3>;
using MaskImage = itk::Image<unsigned char, 3>;
using RankImage = itk::Image<unsigned short, 3>;

using svdlr::test::ToImage;

template <typename TMap>
typename TMap::Pointer
SpatialMap(const Series4D * series, typename TMap::PixelType value)
{
  auto map = TMap::New();
  itk::LocalLowRankDenoisingDetail::CopySpatialInformation(*series, *map);
  map->Allocate();
  map->FillBuffer(value);
  return map;
}

inline double
RmsDifference(const float * a, const float * b, std::size_t count)
{
  double sum = 0.0;
  for (std::size_t i = 0; i < count; ++i)
  {
    sum += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
  }
  return std::sqrt(sum / static_cast<double>(count));
}

using svdlr::test::Median;

template <typename TImageA, typename TImageB>
void
ExpectSameSpatialGeometry(const TImageA * a, const TImageB * b)
{
  for (unsigned int i = 0; i < 3; ++i)
  {
    EXPECT_EQ(a->GetLargestPossibleRegion().GetSize(i), b->GetLargestPossibleRegion().GetSize(i));
    EXPECT_NEAR(a->GetSpacing()[i], b->GetSpacing()[i], 1e-6);
    EXPECT_NEAR(a->GetOrigin()[i], b->GetOrigin()[i], 1e-5);
    for (unsigned int j = 0; j < 3; ++j)
    {
      EXPECT_NEAR(a->GetDirection()[i][j], b->GetDirection()[i][j], 1e-6);
    }
  }
}

class DenoiseTool : public RandomTest
{
protected:
  void
  SetUp() override
  {
    RandomTest::SetUp();
    // The fixture's seed (printed by RandomTest on any failure) draws the series too, so that it replays them.
    m_SeriesRandom = svdlr::test::Random(m_Seed);
    // 30 volumes: the default patch is the 5 x 5 x 5 cube; rank 3 well above noise of sigma 2.
    m_Series = svdlr::test::LowRankSeries({ { 16, 14, 12 } }, 30, 3, 2.0, 12.0, m_SeriesRandom);
    m_Noisy = ToImage(m_Series.noisy);
    itk::WriteImage(m_Noisy, Path("dwi.nii.gz"));
  }

  ToolRun
  Run(const std::string & arguments)
  {
    return RunToolIn(m_Directory, SVDLR_DENOISE_TOOL, arguments);
  }

  /** Runs a command line that must fail with `exitCode`, and checks that it wrote nothing. */
  ToolRun
  ExpectRefused(const std::string & arguments, int exitCode)
  {
    const auto before = Listing(m_Directory);
    const auto run = Run(arguments);
    EXPECT_EQ(run.exitCode, exitCode) << arguments << "\n" << run.err;
    EXPECT_EQ(Listing(m_Directory), before) << arguments;
    EXPECT_TRUE(run.out.empty()) << arguments << "\n" << run.out;
    return run;
  }

  svdlr::test::Random      m_SeriesRandom{ 0 };
  svdlr::test::NoisySeries m_Series;
  Series4D::Pointer        m_Noisy;
};

} // namespace svdlr_test

#endif
