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
// Spherical patches: the default radius, the sphere used on an image, and the offset table both backends walk.
#include "denoise/svdlrSpherePatch.h"

#include "svdlr/LocalDenoise.h"
#include "svdlr/PatchFit.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace svdlr
{
namespace
{

/** A radius given as a double is compared with squared integer lengths with this slack, so that √k given back as
 * the double the report holds takes the shell |d|² = k. */
constexpr double kRadiusSlack = 1e-9;

/** Offsets d with |d|² <= radius² and |d_axis| <= half[axis]. */
std::size_t
OffsetsWithin(double radius, const std::array<std::int64_t, 3> & half)
{
  const double limit = radius * radius + kRadiusSlack;
  std::size_t  count = 0;
  for (std::int64_t z = -half[2]; z <= half[2]; ++z)
  {
    for (std::int64_t y = -half[1]; y <= half[1]; ++y)
    {
      for (std::int64_t x = -half[0]; x <= half[0]; ++x)
      {
        count += static_cast<double>(x * x + y * y + z * z) <= limit ? 1 : 0;
      }
    }
  }
  return count;
}

/** floor(radius) as the sphere's offsets reach it, saturated far beyond any image (and any int64 conversion). */
std::int64_t
SphereReach(double radius)
{
  constexpr double farBeyondAnyImage = 1e15;
  return static_cast<std::int64_t>(std::min(std::floor(radius + kRadiusSlack), farBeyondAnyImage));
}

/** Whether `voxels` is at least the default voxels per volume for `volumes`. */
bool
EnoughVoxels(std::size_t voxels, std::size_t volumes)
{
  return voxels * kSphereVoxelsPerVolumeDenominator >= volumes * kSphereVoxelsPerVolumeNumerator;
}

/** The sphere of `radius` on an image whose axes hold at most `limit` (odd) voxels of a patch. */
SpherePatch
SphereOn(const std::array<std::size_t, 3> & limit, double radius)
{
  const auto                  reach = SphereReach(radius);
  SpherePatch                 sphere;
  std::array<std::int64_t, 3> half{};
  for (int axis = 0; axis < 3; ++axis)
  {
    sphere.extent[axis] = std::min<std::size_t>(static_cast<std::size_t>(2 * reach + 1), limit[axis]);
    half[axis] = static_cast<std::int64_t>(sphere.extent[axis] / 2);
  }
  sphere.radius = radius;
  sphere.voxels = OffsetsWithin(radius, half);
  return sphere;
}

} // namespace

double
DefaultSphereRadius(std::size_t volumes)
{
  const std::array<std::size_t, 3> unlimited{ ~std::size_t{ 0 }, ~std::size_t{ 0 }, ~std::size_t{ 0 } };
  for (std::size_t k = 1;; ++k)
  {
    const double radius = std::sqrt(static_cast<double>(k));
    if (EnoughVoxels(SphereOn(unlimited, radius).voxels, volumes))
    {
      return radius;
    }
  }
}

std::array<std::size_t, 3>
RequestedPatchBox(PatchShape shape, const std::array<std::size_t, 3> & patchSize, double radius)
{
  if (shape != PatchShape::Sphere)
  {
    return patchSize;
  }
  const auto extent = radius > 0.0 ? static_cast<std::size_t>(2 * SphereReach(radius) + 1) : 0;
  return { extent, extent, extent };
}

unsigned int
PatchAxisBeyondImage(const std::array<std::size_t, 3> & size, const std::array<std::size_t, 3> & box)
{
  for (unsigned int axis = 0; axis < 3; ++axis)
  {
    if (box[axis] > size[axis])
    {
      return axis;
    }
  }
  return 3;
}

SpherePatch
SpherePatchUsed(const std::array<std::size_t, 3> & size, std::size_t volumes, double requestedRadius)
{
  std::array<std::size_t, 3> limit{};
  for (int axis = 0; axis < 3; ++axis)
  {
    limit[axis] = size[axis] % 2 == 1 ? size[axis] : size[axis] - 1; // the largest odd extent the axis holds
  }
  if (requestedRadius > 0.0)
  {
    return SphereOn(limit, requestedRadius);
  }
  // From the default radius on, grow while the image's short axes leave too few voxels, up to the whole box.
  const std::size_t whole = limit[0] * limit[1] * limit[2];
  const double      first = DefaultSphereRadius(volumes);
  for (auto k = static_cast<std::size_t>(std::llround(first * first));; ++k)
  {
    const SpherePatch sphere = SphereOn(limit, std::sqrt(static_cast<double>(k)));
    if (EnoughVoxels(sphere.voxels, volumes) || sphere.voxels >= whole)
    {
      return sphere;
    }
  }
}

namespace detail
{

std::vector<PatchOffset>
SphereOffsetOrder(const std::array<std::size_t, 3> & extent)
{
  std::vector<PatchOffset> order;
  const auto               ex = static_cast<std::int32_t>(extent[0]), ey = static_cast<std::int32_t>(extent[1]),
             ez = static_cast<std::int32_t>(extent[2]);
  order.reserve(static_cast<std::size_t>(2 * ex - 1) * static_cast<std::size_t>(2 * ey - 1) *
                static_cast<std::size_t>(2 * ez - 1));
  for (std::int32_t z = 1 - ez; z < ez; ++z)
  {
    for (std::int32_t y = 1 - ey; y < ey; ++y)
    {
      for (std::int32_t x = 1 - ex; x < ex; ++x)
      {
        order.push_back({ x, y, z, x * x + y * y + z * z });
      }
    }
  }
  std::sort(order.begin(), order.end(), [](const PatchOffset & a, const PatchOffset & b) {
    return std::tie(a.distance2, a.dz, a.dy, a.dx) < std::tie(b.distance2, b.dz, b.dy, b.dx);
  });
  return order;
}

} // namespace detail
} // namespace svdlr
