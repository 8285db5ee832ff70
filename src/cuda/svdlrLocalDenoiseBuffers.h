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
#ifndef svdlr_LocalDenoiseBuffers_h
#define svdlr_LocalDenoiseBuffers_h

// The local denoiser's device buffers as typed pieces of a few large allocations (svdlrLocalDenoiseResources.h):
// one per slab slot, one for a batch of patches, one for the run's fixed inputs. Carving them in the order and with
// the alignment that SlabSlotBytes and BatchBytes (svdlrLocalDenoisePlan.h) count keeps the plan and the buffers
// in step, and lets a cached allocation serve a later run whenever it is large enough.

#include "svdlrLocalDenoiseKernels.cuh"
#include "svdlrLocalDenoisePlan.h" // AlignedBytes

#include <cstddef>
#include <cstdint>

namespace svdlr
{
namespace detail
{

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

} // namespace detail
} // namespace svdlr

#endif
