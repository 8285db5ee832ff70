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
#ifndef SVDLowRankVolume_h
#define SVDLowRankVolume_h

// Turning any 2D image or 3D volume into a 3D volume of another pixel type, geometry kept: what the
// slice-stack writers (DICOM, PNG) take.

#include "itkImage.h"

namespace svdlr_io
{

/** `image` as a 3D volume of TPixel (a 2D image becomes one slice), pixels cast. */
template <typename TPixel, typename TImage>
typename itk::Image<TPixel, 3>::Pointer
AsVolume(const TImage * image)
{
  using VolumeType = itk::Image<TPixel, 3>;
  auto                               volume = VolumeType::New();
  const auto                         size = image->GetLargestPossibleRegion().GetSize();
  typename VolumeType::SizeType      volumeSize{ { size[0], size[1], TImage::ImageDimension == 3 ? size[2] : 1 } };
  typename VolumeType::SpacingType   spacing(1.0);
  typename VolumeType::PointType     origin(0.0);
  typename VolumeType::DirectionType direction;
  direction.SetIdentity();
  for (unsigned int i = 0; i < TImage::ImageDimension; ++i)
  {
    spacing[i] = image->GetSpacing()[i];
    origin[i] = image->GetOrigin()[i];
    for (unsigned int j = 0; j < TImage::ImageDimension; ++j)
    {
      direction[i][j] = image->GetDirection()[i][j];
    }
  }
  volume->SetRegions(typename VolumeType::RegionType(volumeSize));
  volume->SetSpacing(spacing);
  volume->SetOrigin(origin);
  volume->SetDirection(direction);
  volume->Allocate();
  const auto * in = image->GetBufferPointer();
  auto *       out = volume->GetBufferPointer();
  for (std::size_t i = 0, n = volume->GetLargestPossibleRegion().GetNumberOfPixels(); i < n; ++i)
  {
    out[i] = static_cast<TPixel>(in[i]);
  }
  return volume;
}

} // namespace svdlr_io

#endif
