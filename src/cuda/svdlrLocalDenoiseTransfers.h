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
#ifndef svdlr_LocalDenoiseTransfers_h
#define svdlr_LocalDenoiseTransfers_h

// The local denoiser's host side of a slab: planes of the caller's input view to a slab slot's packed input buffer,
// and the slot's packed output and maps back to the caller's output view and maps, through the pinned staging ring
// (svdlrStagingRing.h; the caller's memory is never pinned). A view whose slab is one block per volume
// (VolumesOuter, an itk::Image<T, 4>) or one block (VolumesInner, an itk::VectorImage) moves as it is; any other
// strides are gathered into, or scattered from, a packed host copy first.

#include "svdlrLocalDenoiseKernels.cuh"
#include "shared/svdlrParallel.h"
#include "svdlrStagingRing.h"
#include "svdlr/LocalDenoise.h"

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace svdlr
{
namespace detail
{

/** How a view's elements lie in host memory, and whether a slab of it is one block per volume (VolumesOuter) or
 * one block (VolumesInner) that the staging ring can copy as it is. */
struct HostLayout
{
  PackedLayout packed{ PackedLayout::VolumesOuter };
  bool         direct{ false };
};

/** `count` packed host elements at `data`, as one block for the staging ring. */
template <typename T>
HostMatrices<std::conditional_t<std::is_const_v<T>, const unsigned char, unsigned char>>
OneHostBlock(T * data, std::size_t count)
{
  using Byte = std::conditional_t<std::is_const_v<T>, const unsigned char, unsigned char>;
  const std::size_t bytes = count * sizeof(T);
  return { reinterpret_cast<Byte *>(data), 1, bytes, bytes };
}

class SlabTransfers
{
public:
  SlabTransfers(const SeriesView<const float> & input, const SeriesView<float> & output,
                const DenoiseGeometry & geometry, const ParallelFor & parallelFor);

  /** The layouts of the slab buffers: the host views' own where they move as they are. */
  PackedLayout
  InputLayout() const
  {
    return m_InLayout.packed;
  }
  PackedLayout
  OutputLayout() const
  {
    return m_OutLayout.packed;
  }

  /** Input planes [first, first + planes) -> packedIn (device, InputLayout()), enqueued on `stream`. */
  void
  UploadInput(std::int64_t first, std::int64_t planes, float * packedIn, StagingRing & ring, cudaStream_t stream);

  /** packedOut (device, OutputLayout(): planes [first, first + planes)) -> those planes of the output view, after
   * the work already enqueued on `stream`; returns once they are there. */
  void
  DownloadOutput(std::int64_t first, std::int64_t planes, const float * packedOut, StagingRing & ring,
                 cudaStream_t stream);

  /** The σ and rank maps of planes [first, first + planes) -> the maps asked for (non-null in `maps`), likewise. */
  void
  DownloadMaps(std::int64_t first, std::int64_t planes, const float * sigmaMap, const std::uint16_t * rankMap,
               const LocalDenoiseMaps & maps, StagingRing & ring, cudaStream_t stream);

private:
  template <typename TBody>
  void
  ForEachElement(PackedLayout layout, const std::array<std::ptrdiff_t, 4> & strides, std::int64_t first,
                 std::int64_t planes, TBody && body);

  template <typename TByte, typename T>
  HostMatrices<TByte>
  DirectBlocks(T * data, const HostLayout & layout, const std::array<std::ptrdiff_t, 4> & strides,
               std::int64_t first, std::int64_t planes) const;

  std::size_t
  Elements(std::int64_t planes) const
  {
    return static_cast<std::size_t>(planes * m_Geometry.PlaneVoxels() * m_Geometry.volumes);
  }

  const SeriesView<const float> & m_Input;
  const SeriesView<float> &       m_Output;
  const DenoiseGeometry &         m_Geometry;
  const ParallelFor &             m_ParallelFor;
  const HostLayout                m_InLayout;
  const HostLayout                m_OutLayout;
  std::vector<float>              m_HostScratch; // the packed copy of a view with other strides
};

} // namespace detail
} // namespace svdlr

#endif
