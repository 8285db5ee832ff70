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
#include "svdlrLocalDenoiseTransfers.h"

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

/** Host rows of a view for planes [first, first + planes) in `layout` order, for element-wise packing: body(t, z, y,
 * at) for each row, with t the volume (VolumesOuter) or -1 (VolumesInner: the row holds every volume) and `at` the
 * row's start in the packed copy. */
template <typename TBody>
void
SlabTransfers::ForEachRow(PackedLayout layout, std::int64_t first, std::int64_t planes, TBody && body)
{
  const std::int64_t ny = m_Geometry.ny;
  const std::int64_t nv = m_Geometry.volumes;
  if (layout == PackedLayout::VolumesOuter)
  {
    m_ParallelFor(static_cast<std::size_t>(nv * planes), [&](std::size_t unit) {
      const std::int64_t t = static_cast<std::int64_t>(unit) / planes;
      const std::int64_t z = static_cast<std::int64_t>(unit) % planes;
      for (std::int64_t y = 0; y < ny; ++y)
      {
        body(t, first + z, y, ((t * planes + z) * ny + y) * m_Geometry.nx);
      }
    });
  }
  else
  {
    m_ParallelFor(static_cast<std::size_t>(planes), [&](std::size_t z) {
      for (std::int64_t y = 0; y < ny; ++y)
      {
        body(-1, first + static_cast<std::int64_t>(z), y, ((static_cast<std::int64_t>(z) * ny + y) * m_Geometry.nx) * nv);
      }
    });
  }
}

void
SlabTransfers::UploadInput(std::int64_t first, std::int64_t planes, float * packedIn, StagingRing & ring,
                           cudaStream_t stream)
{
  const std::int64_t planeVoxels = m_Geometry.PlaneVoxels();
  const std::int64_t nv = m_Geometry.volumes;
  const std::size_t  elements = Elements(planes);
  const auto &       st = m_Input.strides;

  if (m_InLayout.direct)
  {
    const auto * base = reinterpret_cast<const unsigned char *>(m_Input.data + first * st[2]);
    HostMatrices<const unsigned char> source;
    source.data = base;
    if (m_InLayout.packed == PackedLayout::VolumesOuter)
    {
      source.count = static_cast<std::size_t>(nv);
      source.matrixBytes = static_cast<std::size_t>(planes * planeVoxels) * sizeof(float);
      source.strideBytes = static_cast<std::size_t>(st[3]) * sizeof(float);
    }
    else
    {
      source.count = 1;
      source.matrixBytes = elements * sizeof(float);
      source.strideBytes = source.matrixBytes;
    }
    ring.Upload(source, packedIn, stream, m_ParallelFor);
    return;
  }
  // Any other strides: gather into a packed host copy first.
  m_HostScratch.resize(elements);
  float * packed = m_HostScratch.data();
  ForEachRow(m_InLayout.packed, first, planes, [&](std::int64_t t, std::int64_t z, std::int64_t y, std::int64_t at) {
    const float * row = m_Input.data + z * st[2] + y * st[1];
    for (std::int64_t x = 0; x < m_Geometry.nx; ++x)
    {
      if (t >= 0)
      {
        packed[at + x] = row[x * st[0] + t * st[3]];
      }
      else
      {
        for (std::int64_t v = 0; v < nv; ++v)
        {
          packed[at + x * nv + v] = row[x * st[0] + v * st[3]];
        }
      }
    }
  });
  HostMatrices<const unsigned char> source{ reinterpret_cast<const unsigned char *>(packed), 1,
                                            elements * sizeof(float), elements * sizeof(float) };
  ring.Upload(source, packedIn, stream, m_ParallelFor);
}

void
SlabTransfers::DownloadOutput(std::int64_t first, std::int64_t planes, const float * packedOut, StagingRing & ring,
                              cudaStream_t stream)
{
  const std::int64_t planeVoxels = m_Geometry.PlaneVoxels();
  const std::int64_t nv = m_Geometry.volumes;
  const std::size_t  elements = Elements(planes);
  const auto &       so = m_Output.strides;
  if (m_OutLayout.direct)
  {
    HostMatrices<unsigned char> target;
    target.data = reinterpret_cast<unsigned char *>(m_Output.data + first * so[2]);
    if (m_OutLayout.packed == PackedLayout::VolumesOuter)
    {
      target.count = static_cast<std::size_t>(nv);
      target.matrixBytes = static_cast<std::size_t>(planes * planeVoxels) * sizeof(float);
      target.strideBytes = static_cast<std::size_t>(so[3]) * sizeof(float);
    }
    else
    {
      target.count = 1;
      target.matrixBytes = elements * sizeof(float);
      target.strideBytes = target.matrixBytes;
    }
    ring.Download(packedOut, target, stream, m_ParallelFor);
    return;
  }
  m_HostScratch.resize(elements);
  float *                     packed = m_HostScratch.data();
  HostMatrices<unsigned char> target{ reinterpret_cast<unsigned char *>(packed), 1, elements * sizeof(float),
                                      elements * sizeof(float) };
  ring.Download(packedOut, target, stream, m_ParallelFor);
  ForEachRow(m_OutLayout.packed, first, planes, [&](std::int64_t t, std::int64_t z, std::int64_t y, std::int64_t at) {
    float * row = m_Output.data + z * so[2] + y * so[1];
    for (std::int64_t x = 0; x < m_Geometry.nx; ++x)
    {
      if (t >= 0)
      {
        row[x * so[0] + t * so[3]] = packed[at + x];
      }
      else
      {
        for (std::int64_t v = 0; v < nv; ++v)
        {
          row[x * so[0] + v * so[3]] = packed[at + x * nv + v];
        }
      }
    }
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
    HostMatrices<unsigned char> target{ reinterpret_cast<unsigned char *>(maps.noiseSigma + offset), 1,
                                        voxels * sizeof(float), voxels * sizeof(float) };
    ring.Download(sigmaMap, target, stream, m_ParallelFor);
  }
  if (maps.rank != nullptr)
  {
    HostMatrices<unsigned char> target{ reinterpret_cast<unsigned char *>(maps.rank + offset), 1,
                                        voxels * sizeof(std::uint16_t), voxels * sizeof(std::uint16_t) };
    ring.Download(rankMap, target, stream, m_ParallelFor);
  }
}

} // namespace detail
} // namespace svdlr
