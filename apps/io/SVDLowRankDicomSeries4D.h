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
#ifndef SVDLowRankDicomSeries4D_h
#define SVDLowRankDicomSeries4D_h

// A 4D DICOM series (echoes, temporal positions, b-values and directions; classic files or Enhanced MR) as one
// 4D image (x, y, z, volume) for the local low-rank denoiser: the volumes that ReadDicomImages groups, which must
// all lie on one grid.

#include "SVDLowRankDicomFrames.h"

#include "itkImage.h"

#include <cmath>
#include <string>
#include <vector>

namespace svdlr_io
{

/** Whether two images share one grid: the same size, and the same voxels at the same places along the three spatial
 * axes (within 1e-3 mm and 1e-4 in direction). The volumes of a 4D series, and a magnitude and its phase, must. */
template <unsigned int VDimension>
bool
SameDicomGrid(const itk::ImageBase<VDimension> & a, const itk::ImageBase<VDimension> & b)
{
  if (a.GetLargestPossibleRegion().GetSize() != b.GetLargestPossibleRegion().GetSize())
    return false;
  for (unsigned int i = 0; i < 3; ++i)
  {
    if (std::abs(a.GetOrigin()[i] - b.GetOrigin()[i]) > 1e-3 || std::abs(a.GetSpacing()[i] - b.GetSpacing()[i]) > 1e-3)
      return false;
    for (unsigned int j = 0; j < 3; ++j)
    {
      if (std::abs(a.GetDirection()[i][j] - b.GetDirection()[i][j]) > 1e-4)
        return false;
    }
  }
  return true;
}

struct DicomSeries4D
{
  itk::Image<float, 4>::Pointer image; // spacing 1 along the fourth axis
  std::vector<std::string>      names; // what each volume is: "echo 2 (TE 20 ms)", ...
  std::string                   by;    // what the volumes differ by
};

/** The series' volumes stacked along a fourth axis, in ReadDicomImages' order. A DicomError when the series is
 * one volume, or images that form no volumes, or volumes on different grids (naming the first that differs). */
DicomSeries4D
ReadDicomSeries4D(const DicomSeriesSummary & series);

} // namespace svdlr_io

#endif
