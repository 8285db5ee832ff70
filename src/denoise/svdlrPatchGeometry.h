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
#ifndef svdlr_PatchGeometry_h
#define svdlr_PatchGeometry_h

// Where the patch of a voxel lies, and the weight of its contributions, for both backends of DenoiseLocalLowRank (host
// and device code, so no exceptions and no std:: containers). Along each axis a patch of odd extent e is centred on its
// voxel c and shifted inward at the borders so that it always lies inside [0, n), as dwidenoise does: a voxel near a
// border is then not at the centre of its own patch, and its row in the Casorati matrix is c - PatchStart(...).

#include "shared/svdlrHostDevice.h"
#include "svdlr/Defaults.h"

#include <cmath>
#include <cstdint>

namespace svdlr
{
namespace detail
{

/** First voxel of the patch of extent `extent` (odd, <= n) around voxel `centre` along an axis of n voxels. */
SVDLR_HOST_DEVICE inline std::int64_t
PatchStart(std::int64_t centre, std::int64_t extent, std::int64_t n)
{
  const std::int64_t start = centre - extent / 2;
  const std::int64_t last = n - extent;
  return start < 0 ? 0 : (start > last ? last : start);
}

/** Row of voxel (x, y, z) in the Casorati matrix of the patch that starts at (sx, sy, sz) with extent
 * (ex, ey, ez): patch voxels are numbered x fastest, then y, then z. */
SVDLR_HOST_DEVICE inline std::int64_t
PatchRow(std::int64_t x, std::int64_t y, std::int64_t z, std::int64_t sx, std::int64_t sy, std::int64_t sz,
         std::int64_t ex, std::int64_t ey)
{
  return (x - sx) + ex * ((y - sy) + ey * (z - sz));
}

// The weight of one patch's contribution to one voxel under an overlap aggregation (DenoiseChoices.h): the one rule
// of both backends of DenoiseLocalLowRank (host and device code). A voxel's signal, σ and rank are the sums of
// weight × contribution over the patches that hold it, divided by the sum of the weights. OverlapAverage's weight is
// exactly 1, so its sums are those of the plain mean, bit for bit.

/** The Gaussian weight's 1 / (2 s²) for a full width at half maximum f: s = f / (2 √(2 ln 2)), so 4 ln 2 / f². */
SVDLR_HOST_DEVICE constexpr double
GaussianWeightRate(double fwhm)
{
  return 4.0 * 0.69314718055994530942 / (fwhm * fwhm);
}

/** The weight of a contribution from a patch of rank `rank` to a voxel at squared distance `distance2` (voxels²)
 * from the voxel the patch was centred on. CentreVoxel has no weights (each voxel takes one row): 1. */
SVDLR_HOST_DEVICE inline double
AggregationWeight(PatchAggregation aggregation, int rank, double distance2)
{
  switch (aggregation)
  {
    case PatchAggregation::OverlapRankWeighted:
      return 1.0 / (1.0 + static_cast<double>(rank));
    case PatchAggregation::OverlapGaussianWeighted:
      return exp(-GaussianWeightRate(kGaussianAggregationFwhm) * distance2);
    default:
      return 1.0;
  }
}

/** A voxel's rank under an overlap aggregation: the weighted mean of its patches' ranks, rounded half up (ranks are
 * not negative). A mean can be a half exactly (ranks 1 and 2, equal weights), and the backends add in different
 * orders (the GPU's float64 atomics in any), so one backend may compute such a tie a rounding below the half and the
 * other a rounding above, and round them apart: the H100 showed it at 1-2 voxels of the rank-weighted tests. The
 * mean is moved up by 1e-9 first: far more than the sums' rounding, far less than any mean that is not a tie comes to
 * a half (a plain mean of c patches comes no closer than 1/(2c)), so a plain mean's ranks are those of std::round. */
SVDLR_HOST_DEVICE inline double
AggregatedRank(double weightedRankSum, double weightSum)
{
  return floor(weightedRankSum / weightSum + 0.5 + 1e-9);
}

} // namespace detail
} // namespace svdlr

#endif
