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
#include "svdlrLocalDenoiseResources.h"

#include <array>
#include <cstdlib>

namespace svdlr
{
namespace detail
{
namespace
{

template <typename T>
HostLayout
LayoutOf(const SeriesView<T> & view)
{
  const auto &         s = view.strides;
  const std::ptrdiff_t nx = static_cast<std::ptrdiff_t>(view.size[0]);
  const std::ptrdiff_t ny = static_cast<std::ptrdiff_t>(view.size[1]);
  const std::ptrdiff_t nz = static_cast<std::ptrdiff_t>(view.size[2]);
  const std::ptrdiff_t nv = static_cast<std::ptrdiff_t>(view.volumes);
  if (s[0] == 1 && s[1] == nx && s[2] == nx * ny && s[3] >= nx * ny * nz)
  {
    return { PackedLayout::VolumesOuter, true };
  }
  if (s[3] == 1 && s[0] == nv && s[1] == nv * nx && s[2] == nv * nx * ny)
  {
    return { PackedLayout::VolumesInner, true };
  }
  return { std::abs(s[3]) >= std::abs(s[0]) ? PackedLayout::VolumesOuter : PackedLayout::VolumesInner, false };
}

} // namespace

SlabTransfers::SlabTransfers(const SeriesView<const float> & input, const SeriesView<float> & output,
                             const DenoiseGeometry & geometry, const ParallelFor & parallelFor)
  : m_Input(input)
  , m_Output(output)
  , m_Geometry(geometry)
  , m_ParallelFor(parallelFor)
  , m_InLayout(LayoutOf(input))
  , m_OutLayout(LayoutOf(output))
{}

/** Every element of planes [first, first + planes) of a view with `strides`, in the packed order of `layout`:
 * body(at, offset), with `at` the element's index in the packed copy and `offset` its offset in the view. Rows of
 * the packed copy run in parallel. */
template <typename TBody>
void
SlabTransfers::ForEachElement(PackedLayout layout, const std::array<std::ptrdiff_t, 4> & strides, std::int64_t first,
                              std::int64_t planes, TBody && body)
{
  const auto &       s = strides;
  const std::int64_t nx = m_Geometry.nx;
  const std::int64_t ny = m_Geometry.ny;
  const std::int64_t nv = m_Geometry.volumes;
  if (layout == PackedLayout::VolumesOuter)
  {
    m_ParallelFor(static_cast<std::size_t>(nv * planes), [&](std::size_t unit) {
      const std::int64_t t = static_cast<std::int64_t>(unit) / planes;
      const std::int64_t z = static_cast<std::int64_t>(unit) % planes;
      for (std::int64_t y = 0; y < ny; ++y)
      {
        const std::int64_t at = ((t * planes + z) * ny + y) * nx;
        const std::int64_t row = (first + z) * s[2] + y * s[1] + t * s[3];
        for (std::int64_t x = 0; x < nx; ++x)
        {
          body(at + x, row + x * s[0]);
        }
      }
    });
    return;
  }
  m_ParallelFor(static_cast<std::size_t>(planes), [&](std::size_t unit) {
    const std::int64_t z = static_cast<std::int64_t>(unit);
    for (std::int64_t y = 0; y < ny; ++y)
    {
      const std::int64_t at = ((z * ny + y) * nx) * nv;
      const std::int64_t row = (first + z) * s[2] + y * s[1];
      for (std::int64_t x = 0; x < nx; ++x)
      {
        for (std::int64_t v = 0; v < nv; ++v)
        {
          body(at + x * nv + v, row + x * s[0] + v * s[3]);
        }
      }
    }
  });
}

/** Planes [first, first + planes) of a view that moves as it is (HostLayout::direct): one block per volume
 * (VolumesOuter) or one block (VolumesInner). */
template <typename TByte, typename T>
HostMatrices<TByte>
SlabTransfers::DirectBlocks(T * data, const HostLayout & layout, const std::array<std::ptrdiff_t, 4> & strides,
                            std::int64_t first, std::int64_t planes) const
{
  HostMatrices<TByte> blocks;
  blocks.data = reinterpret_cast<TByte *>(data + first * strides[2]);
  if (layout.packed == PackedLayout::VolumesOuter)
  {
    blocks.count = static_cast<std::size_t>(m_Geometry.volumes);
    blocks.matrixBytes = static_cast<std::size_t>(planes * m_Geometry.PlaneVoxels()) * sizeof(float);
    blocks.strideBytes = static_cast<std::size_t>(strides[3]) * sizeof(float);
  }
  else
  {
    blocks.count = 1;
    blocks.matrixBytes = Elements(planes) * sizeof(float);
    blocks.strideBytes = blocks.matrixBytes;
  }
  return blocks;
}

void
SlabTransfers::UploadInput(std::int64_t first, std::int64_t planes, float * packedIn, StagingRing & ring,
                           cudaStream_t stream)
{
  const auto & st = m_Input.strides;
  if (m_InLayout.direct)
  {
    ring.Upload(DirectBlocks<const unsigned char>(m_Input.data, m_InLayout, st, first, planes), packedIn, stream,
                m_ParallelFor);
    return;
  }
  // Any other strides: gather into a packed host copy first.
  const std::size_t elements = Elements(planes);
  m_HostScratch.resize(elements);
  float *       packed = m_HostScratch.data();
  const float * view = m_Input.data;
  ForEachElement(m_InLayout.packed, st, first, planes, [&](std::int64_t at, std::int64_t offset) {
    packed[at] = view[offset];
  });
  ring.Upload(OneHostBlock(static_cast<const float *>(packed), elements), packedIn, stream, m_ParallelFor);
}

void
SlabTransfers::DownloadOutput(std::int64_t first, std::int64_t planes, const float * packedOut, StagingRing & ring,
                              cudaStream_t stream)
{
  const auto & so = m_Output.strides;
  if (m_OutLayout.direct)
  {
    ring.Download(packedOut, DirectBlocks<unsigned char>(m_Output.data, m_OutLayout, so, first, planes), stream,
                  m_ParallelFor);
    return;
  }
  // Any other strides: through a packed host copy, then scattered.
  const std::size_t elements = Elements(planes);
  m_HostScratch.resize(elements);
  float * packed = m_HostScratch.data();
  ring.Download(packedOut, OneHostBlock(packed, elements), stream, m_ParallelFor);
  float * view = m_Output.data;
  ForEachElement(m_OutLayout.packed, so, first, planes, [&](std::int64_t at, std::int64_t offset) {
    view[offset] = packed[at];
  });
}

void
SlabTransfers::DownloadMaps(std::int64_t first, std::int64_t planes, const float * sigmaMap,
                            const std::uint16_t * rankMap, const LocalDenoiseMaps & maps, StagingRing & ring,
                            cudaStream_t stream)
{
  const std::size_t voxels = static_cast<std::size_t>(planes * m_Geometry.PlaneVoxels());
  const std::size_t offset = static_cast<std::size_t>(first * m_Geometry.PlaneVoxels());
  if (maps.noiseSigma != nullptr)
  {
    ring.Download(sigmaMap, OneHostBlock(maps.noiseSigma + offset, voxels), stream, m_ParallelFor);
  }
  if (maps.rank != nullptr)
  {
    ring.Download(rankMap, OneHostBlock(maps.rank + offset, voxels), stream, m_ParallelFor);
  }
}

} // namespace detail
} // namespace svdlr
