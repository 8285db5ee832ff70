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
#ifndef svdlrTestSeriesImage_h
#define svdlrTestSeriesImage_h

// A test series (svdlrTestSeries.h) as the ITK image the filter and tool tests feed: for the ITK suites only, so
// that the engine's suites stay ITK-free.

#include "svdlrTestSeries.h"

#include "itkImage.h"

#include <algorithm>

namespace svdlr
{
namespace test
{

/** `series` as a 4D image with a geometry of its own (anisotropic spacing, an origin, x and y swapped: a rotation),
 * so that the outputs' geometry is checked. */
inline itk::Image<float, 4>::Pointer
ToImage(const Series & series)
{
  using Series4D = itk::Image<float, 4>;
  auto                    image = Series4D::New();
  Series4D::SpacingType   spacing;
  Series4D::PointType     origin;
  Series4D::DirectionType direction;
  direction.SetIdentity();
  direction[0][0] = direction[1][1] = 0.0;
  direction[0][1] = direction[1][0] = 1.0;
  for (unsigned int i = 0; i < 4; ++i)
  {
    spacing[i] = 1.25 + 0.5 * i;
    origin[i] = 3.0 - 7.0 * i;
  }
  image->SetRegions(Series4D::SizeType{ { series.size[0], series.size[1], series.size[2], series.volumes } });
  image->SetSpacing(spacing);
  image->SetOrigin(origin);
  image->SetDirection(direction);
  image->Allocate();
  std::copy(series.values.begin(), series.values.end(), image->GetBufferPointer());
  return image;
}

} // namespace test
} // namespace svdlr

#endif
