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
#include "SVDLowRankDicomSeries4D.h"

#include <algorithm>

namespace svdlr_io
{

DicomSeries4D
ReadDicomSeries4D(const DicomSeriesSummary & series)
{
  DicomImageSet set = ReadDicomImages(series);
  if (set.layout != DicomLayout::Volumes)
  {
    throw DicomError("DICOM series " + series.seriesInstanceUID + " is " + DescribeDicomLayout(set) +
                     ", not a 4D series of several volumes (echoes, temporal positions, b-values)");
  }
  const DicomVolumeImage * first = set.parts.front().image;
  for (std::size_t p = 1; p < set.parts.size(); ++p)
  {
    if (!SameDicomGrid(*first, *set.parts[p].image))
    {
      throw DicomError(set.parts[p].slices.front().file + ": the volume \"" + set.names[p] +
                       "\" lies on another grid (size, origin, spacing or direction) than \"" + set.names.front() +
                       "\": a 4D series needs every volume on one grid");
    }
  }
  using Image4D = itk::Image<float, 4>;
  DicomSeries4D result;
  result.names = set.names;
  result.by = set.by;
  result.image = Image4D::New();
  const auto             size3 = first->GetLargestPossibleRegion().GetSize();
  Image4D::SizeType      size{ { size3[0], size3[1], size3[2], set.parts.size() } };
  Image4D::SpacingType   spacing(1.0);
  Image4D::PointType     origin(0.0);
  Image4D::DirectionType direction;
  direction.SetIdentity();
  for (unsigned int i = 0; i < 3; ++i)
  {
    spacing[i] = first->GetSpacing()[i];
    origin[i] = first->GetOrigin()[i];
    for (unsigned int j = 0; j < 3; ++j)
      direction[i][j] = first->GetDirection()[i][j];
  }
  result.image->SetRegions(Image4D::RegionType(size));
  result.image->SetSpacing(spacing);
  result.image->SetOrigin(origin);
  result.image->SetDirection(direction);
  result.image->Allocate();
  const std::size_t volumePixels = size3[0] * size3[1] * size3[2];
  for (std::size_t p = 0; p < set.parts.size(); ++p)
  {
    std::copy_n(
      set.parts[p].image->GetBufferPointer(), volumePixels, result.image->GetBufferPointer() + p * volumePixels);
  }
  return result;
}

} // namespace svdlr_io
