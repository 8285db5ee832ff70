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
#ifndef svdlr_ComplexSeriesDetail_h
#define svdlr_ComplexSeriesDetail_h

// What the complex-series functions (phase demodulation, noise scans) share: their checks of a series' shape, and
// the element offset of (voxel, volume) in a view.

#include "svdlr/LocalDenoise.h"

#include <string>

namespace svdlr
{
namespace detail
{

/** The offset of (linear voxel v, x fastest; volume t) in `view`, in elements. */
template <typename T>
std::size_t
ElementOffset(const SeriesView<T> & view, std::size_t v, std::size_t t)
{
  const std::size_t x = v % view.size[0], y = v / view.size[0] % view.size[1], z = v / (view.size[0] * view.size[1]);
  return static_cast<std::size_t>(static_cast<std::ptrdiff_t>(x) * view.strides[0] +
                                  static_cast<std::ptrdiff_t>(y) * view.strides[1] +
                                  static_cast<std::ptrdiff_t>(z) * view.strides[2] +
                                  static_cast<std::ptrdiff_t>(t) * view.strides[3]);
}

/** A series with data, at least one voxel and one volume; else InvalidArgument naming `what`. */
void
RequireSeries(const SeriesView<const float> & series, const char * what);

/** `other` has data and the size and volume count of `reference`; else InvalidArgument naming `what`. */
void
RequireSameShape(const SeriesView<const float> & reference, const SeriesView<const float> & other, const char * what);

} // namespace detail
} // namespace svdlr

#endif
