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
#ifndef svdlr_WindowSums_h
#define svdlr_WindowSums_h

// Sums over a window around every voxel of a 3D grid, one axis at a time (a separable box), for the host-side maps
// that pool a neighbourhood: the noise scan's σ map, the g-factor estimate's smoothed σ and the σ floor
// correction's patch windows. The windows differ only at the borders, so the caller says where a voxel's window
// lies along a line; the summing is written once.

#include "denoise/svdlrPatchGeometry.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace svdlr
{
namespace detail
{

/** A window of voxels [first, last] along a line. */
struct LineWindow
{
  std::size_t first;
  std::size_t last;
};

/** values[v] <- the sum of values over v's window along `axis`, in place, for every line of the x-fastest grid
 * `size` along that axis; window(i, n) gives the window of position i on a line of n voxels. Each sum runs over
 * its window in rising order from 0. */
template <typename TWindow>
void
SumOverWindowsAlongAxis(std::vector<double> & values, const std::array<std::size_t, 3> & size, unsigned axis,
                        const TWindow & window)
{
  const std::size_t   n = size[axis];
  const std::size_t   stride = axis == 0 ? 1 : axis == 1 ? size[0] : size[0] * size[1];
  const std::size_t   lines = values.size() / n;
  std::vector<double> line(n);
  for (std::size_t l = 0; l < lines; ++l)
  {
    // The first voxel of line l: lines run over the voxels whose coordinate along `axis` is 0.
    const std::size_t first = (l / stride) * stride * n + l % stride;
    for (std::size_t i = 0; i < n; ++i)
    {
      const LineWindow w = window(i, n);
      double           sum = 0.0;
      for (std::size_t p = w.first; p <= w.last; ++p)
      {
        sum += values[first + p * stride];
      }
      line[i] = sum;
    }
    for (std::size_t i = 0; i < n; ++i)
    {
      values[first + i * stride] = line[i];
    }
  }
}

/** The window of the voxels within `half` of i, cut at the line's ends. */
inline auto
ClippedWindow(std::size_t half)
{
  return [half](std::size_t i, std::size_t n) {
    return LineWindow{ i >= half ? i - half : 0, std::min(i + half, n - 1) };
  };
}

/** The window of i's patch of odd extent `extent`: centred on i, shifted inward at the line's ends (PatchStart). */
inline auto
PatchWindow(std::size_t extent)
{
  return [extent](std::size_t i, std::size_t n) {
    const auto start = static_cast<std::size_t>(PatchStart(static_cast<std::int64_t>(i),
                                                           static_cast<std::int64_t>(extent),
                                                           static_cast<std::int64_t>(n)));
    return LineWindow{ start, start + extent - 1 };
  };
}

} // namespace detail
} // namespace svdlr

#endif
