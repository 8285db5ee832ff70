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
#ifndef svdlr_LocalDenoiseResources_h
#define svdlr_LocalDenoiseResources_h

// What the local denoiser keeps between runs on one device: creating streams, handles and pinned staging and
// allocating device memory costs milliseconds (docs/performance.md), so, like the slice pipeline's
// (svdlrCudaResourceCache.h), one set per device lives in a DeviceResourceCache (svdlrDeviceResourceCache.h) between
// runs; only a run that succeeded gives its set back.

#include "svdlrCudaHandles.h"
#include "svdlrDeviceBuffer.h"
#include "svdlrDeviceResourceCache.h"
#include "svdlrStagingRing.h"
#include "svdlrLocalDenoiseKernels.cuh"
#include "svdlrLocalDenoisePlan.h" // AlignedBytes
#include "shared/svdlrParallel.h"
#include "svdlr/LocalDenoise.h"

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

namespace svdlr
{
namespace detail
{

struct LocalDenoiseResources
{
  int                              deviceId{ -1 };
  StreamOwner                      compute;
  StreamOwner                      upload;
  StreamOwner                      download;
  EventOwner                       uploaded[2];
  EventOwner                       computed[2];
  std::unique_ptr<StagingRing>     ring;
  std::size_t                      ringLanes{ 0 };
  std::size_t                      ringChunkBytes{ 0 };
  DeviceBuffer<unsigned char>      slots[2];
  DeviceBuffer<unsigned char>      batch;
  DeviceBuffer<unsigned char>      fixed;     // flags, mask, σ map (FixedBuffers)
  PinnedBuffer<unsigned long long> hostFlags; // (2 slots, 2): first non-finite voxel, solver failures
  std::vector<unsigned char>       cusolverHostWorkspace;

  /** The streams, events and pinned flags of a fresh set, on `device` (current); the buffers and the staging ring
   * come with the first run's plan, the library handles with their first use. */
  explicit LocalDenoiseResources(int device);

  /** cuSOLVER's handle and parameters (XsyevBatched: the reference solver, and n past our own), on the compute
   * stream, and cuBLAS's (the Gram stage's DGEMM from kGemmGramFromSide), each created at its first use: the 65-volume
   * series needs neither, and creating them in a fresh process delays its first result. */
  cusolverDnHandle_t
  Cusolver();
  cusolverDnParams_t
  CusolverParams();
  cublasHandle_t
  Cublas();

  /** Device memory the buffers hold, which a new run may count as available. */
  std::size_t
  DeviceBytes() const;

  /** Waits for everything this set may still be doing (after an error), ignoring failures. */
  void
  Quiesce() noexcept;

private:
  CusolverOwner       m_Cusolver;
  CusolverParamsOwner m_CusolverParams;
  CublasOwner         m_Cublas;
};

using LocalDenoiseResourceCache = DeviceResourceCache<LocalDenoiseResources>;

// The local denoiser's device buffers as typed pieces of a few large allocations:
// one per slab slot, one for a batch of patches, one for the run's fixed inputs. Carving them in the order and with
// the alignment that SlabSlotBytes and BatchBytes (svdlrLocalDenoisePlan.h) count keeps the plan and the buffers
// in step, and lets a cached allocation serve a later run whenever it is large enough.

/** Typed pieces of one device allocation, taken in turn, each on an AlignedBytes boundary. */
class Carver
{
public:
  explicit Carver(unsigned char * base)
    : m_Base(base)
  {}

  template <typename T>
  T *
  Take(std::size_t count)
  {
    T * at = reinterpret_cast<T *>(m_Base + m_Used);
    m_Used += AlignedBytes(count * sizeof(T));
    return at;
  }

  std::size_t
  Used() const
  {
    return m_Used;
  }

private:
  unsigned char * m_Base;
  std::size_t     m_Used{ 0 };
};

/** One slab slot's device buffers, carved from the slot's allocation (SlabSlotBytes). */
struct SlabBuffers
{
  float *         packedIn{ nullptr };
  float *         slab{ nullptr };
  SlabSums        sums;
  float *         packedOut{ nullptr };
  float *         sigmaMap{ nullptr };
  std::uint16_t * rankMap{ nullptr };
  std::int64_t *  centres{ nullptr };
};

/** The slot's buffers for a window of `planes` planes of `planeVoxels` voxels and `volumes` volumes. */
SlabBuffers
CarveSlab(unsigned char * base, std::int64_t planes, std::int64_t planeVoxels, std::int64_t volumes);

/** The buffers of one batch, carved from the batch allocation (BatchBytes, in the same order). */
struct BatchBuffers
{
  double *        gram{ nullptr };
  double *        vectors{ nullptr };
  double *        eigenvalues{ nullptr };
  double *        weights{ nullptr };
  double *        sigmas{ nullptr };
  int *           ranks{ nullptr };
  int *           info{ nullptr };
  unsigned char * solver{ nullptr };
  std::size_t     solverBytes{ 0 };
};

/** The batch's buffers for `batch` patches with Gram matrices of side n, at most `maxVectors` eigenvectors kept and
 * `solverBytes` of eigen-solver workspace. */
BatchBuffers
CarveBatch(unsigned char * base, std::int64_t batch, std::int64_t n, std::int64_t maxVectors, std::size_t solverBytes);

/** The run's fixed device inputs: the status flags (2 slots, 2: first non-finite voxel, solver failures), and the
 * mask, σ map and a sphere's offset table (svdlrSpherePatch.h) when the run has them (null otherwise). */
struct FixedBuffers
{
  unsigned long long * flags{ nullptr };
  std::uint8_t *       mask{ nullptr };
  float *              sigma{ nullptr };
  PatchOffset *        sphereOrder{ nullptr };
};

/** Device bytes of the fixed buffers for a series of `voxels` voxels and a sphere table of `sphereOffsets` entries
 * (0 for cuboids). */
std::size_t
FixedBytes(std::size_t voxels, bool mask, bool sigma, std::size_t sphereOffsets);

FixedBuffers
CarveFixed(unsigned char * base, std::size_t voxels, bool mask, bool sigma, std::size_t sphereOffsets);

// The local denoiser's host side of a slab: planes of the caller's input view to a slab slot's packed input buffer,
// and the slot's packed output and maps back to the caller's output view and maps, through the pinned staging ring
// (svdlrStagingRing.h; the caller's memory is never pinned). A view whose slab is one block per volume
// (VolumesOuter, an itk::Image<T, 4>) or one block (VolumesInner, an itk::VectorImage) moves as it is; any other
// strides are gathered into, or scattered from, a packed host copy first.

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
