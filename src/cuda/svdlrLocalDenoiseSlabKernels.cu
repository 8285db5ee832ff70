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
// The local denoiser's slab I/O on the device (svdlrLocalDenoiseKernels.cuh): UnpackSlab, from the layout the slab
// travels in to the compute layout, with the non-finite check and a magnitude's stabilisation; FinaliseSlab, from the
// slab's sums to the denoised planes in the layout they travel back in, inverted, and the σ and rank maps.
#include "svdlrLocalDenoiseKernels.cuh"

#include "denoise/svdlrPatchGeometry.h"

#include "svdlrCudaCheck.h"

#include <algorithm>

namespace svdlr
{
namespace detail
{
namespace
{

constexpr int kTransposeTile = 32; // voxels x volumes per tile of the layout changes
constexpr int kTransposeRows = 8;  // threads along the tile's second axis

// ---------------------------------------------------------------------------------------------------------------
// UnpackSlab

/** A value of the series at a voxel (whole series' index), stabilised when the transform has a σ map. Non-finite
 * values pass as they are, for the check beside. */
__device__ inline float
Stabilised(const MagnitudeTransform & transform, std::int64_t voxel, float value)
{
  return transform.sigma == nullptr || !isfinite(value) ? value
                                                        : StabilisedValue(transform, transform.sigma[voxel], value);
}

/** [t][v] -> [v][t] through a (kTransposeTile, kTransposeTile + 1) shared tile: both the reads (along v) and the
 * writes (along t) are coalesced. v is the voxel index within the window. */
__global__ void
__launch_bounds__(kTransposeTile * kTransposeRows)
  UnpackVolumesOuterKernel(const float * __restrict__ packed, float * __restrict__ slab, std::int64_t voxels,
                           std::int64_t volumes, std::int64_t firstVoxel, MagnitudeTransform transform,
                           unsigned long long * firstNonFinite)
{
  __shared__ float   tile[kTransposeTile][kTransposeTile + 1];
  const std::int64_t v0 = static_cast<std::int64_t>(blockIdx.x) * kTransposeTile;
  const std::int64_t t0 = static_cast<std::int64_t>(blockIdx.y) * kTransposeTile;
  for (int row = threadIdx.y; row < kTransposeTile; row += kTransposeRows)
  {
    const std::int64_t t = t0 + row;
    const std::int64_t v = v0 + threadIdx.x;
    if (t < volumes && v < voxels)
    {
      const float value = packed[t * voxels + v];
      tile[row][threadIdx.x] = Stabilised(transform, firstVoxel + v, value);
      if (!isfinite(value))
      {
        atomicMin(firstNonFinite, static_cast<unsigned long long>(firstVoxel + v));
      }
    }
  }
  __syncthreads();
  for (int row = threadIdx.y; row < kTransposeTile; row += kTransposeRows)
  {
    const std::int64_t v = v0 + row;
    const std::int64_t t = t0 + threadIdx.x;
    if (t < volumes && v < voxels)
    {
      slab[v * volumes + t] = tile[threadIdx.x][row];
    }
  }
}

/** The packed slab is already in compute layout: copy, and look for non-finite values. */
__global__ void
__launch_bounds__(256) UnpackVolumesInnerKernel(const float * __restrict__ packed, float * __restrict__ slab,
                                                std::int64_t elements, std::int64_t volumes, std::int64_t firstVoxel,
                                                MagnitudeTransform transform, unsigned long long * firstNonFinite)
{
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < elements; e += stride)
  {
    const float value = packed[e];
    slab[e] = Stabilised(transform, firstVoxel + e / volumes, value);
    if (!isfinite(value))
    {
      atomicMin(firstNonFinite, static_cast<unsigned long long>(firstVoxel + e / volumes));
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// FinaliseSlab

/** One value of the denoised series: the weighted mean of the rows summed, or the input where nothing was (outside
 * the mask, or never covered). */
__device__ inline float
FinalValue(const float * slab, const SlabSums & sums, const std::uint8_t * mask, const MagnitudeTransform & transform,
           std::int64_t localVoxel, std::int64_t globalVoxel, std::int64_t volumes, std::int64_t t)
{
  const bool   inside = mask == nullptr || mask[globalVoxel] != 0;
  const double weight = sums.weights[localVoxel];
  const float  value = !inside || weight == 0.0 ? slab[localVoxel * volumes + t]
                                                : static_cast<float>(sums.values[localVoxel * volumes + t] / weight);
  return transform.sigma == nullptr ? value : UnstabilisedValue(transform, transform.sigma[globalVoxel], value);
}

/** Output planes in VolumesOuter layout: [v][t] sums -> [t][v] packed, through a shared tile as in UnpackSlab.
 * v counts voxels from the first output plane. */
__global__ void
__launch_bounds__(kTransposeTile * kTransposeRows)
  FinaliseVolumesOuterKernel(const float * __restrict__ slab, SlabSums sums, const std::uint8_t * __restrict__ mask,
                             MagnitudeTransform transform, float * __restrict__ packedOut, std::int64_t voxels,
                             std::int64_t volumes, std::int64_t localOffset, std::int64_t globalOffset)
{
  __shared__ float   tile[kTransposeTile][kTransposeTile + 1];
  const std::int64_t v0 = static_cast<std::int64_t>(blockIdx.x) * kTransposeTile;
  const std::int64_t t0 = static_cast<std::int64_t>(blockIdx.y) * kTransposeTile;
  for (int row = threadIdx.y; row < kTransposeTile; row += kTransposeRows)
  {
    const std::int64_t v = v0 + row;
    const std::int64_t t = t0 + threadIdx.x;
    if (t < volumes && v < voxels)
    {
      tile[row][threadIdx.x] =
        FinalValue(slab, sums, mask, transform, localOffset + v, globalOffset + v, volumes, t);
    }
  }
  __syncthreads();
  for (int row = threadIdx.y; row < kTransposeTile; row += kTransposeRows)
  {
    const std::int64_t t = t0 + row;
    const std::int64_t v = v0 + threadIdx.x;
    if (t < volumes && v < voxels)
    {
      packedOut[t * voxels + v] = tile[threadIdx.x][row];
    }
  }
}

__global__ void
__launch_bounds__(256)
  FinaliseVolumesInnerKernel(const float * __restrict__ slab, SlabSums sums, const std::uint8_t * __restrict__ mask,
                             MagnitudeTransform transform, float * __restrict__ packedOut, std::int64_t elements,
                             std::int64_t volumes, std::int64_t localOffset, std::int64_t globalOffset)
{
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < elements; e += stride)
  {
    const std::int64_t v = e / volumes;
    const std::int64_t t = e - v * volumes;
    packedOut[e] = FinalValue(slab, sums, mask, transform, localOffset + v, globalOffset + v, volumes, t);
  }
}

/** The maps for the output planes, one thread per voxel, as the CPU backend's Flush. */
__global__ void
__launch_bounds__(256)
  FinaliseMapsKernel(SlabSums sums, const std::uint8_t * __restrict__ mask, float * __restrict__ sigmaMap,
                     std::uint16_t * __restrict__ rankMap, std::int64_t voxels, std::int64_t localOffset,
                     std::int64_t globalOffset)
{
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t v = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; v < voxels; v += stride)
  {
    const std::int64_t local = localOffset + v;
    const double       weight = sums.weights[local];
    const bool         covered = (mask == nullptr || mask[globalOffset + v] != 0) && weight > 0.0;
    if (sigmaMap != nullptr)
    {
      sigmaMap[v] = covered ? static_cast<float>(sums.sigma[local] / weight) : 0.0f;
    }
    if (rankMap != nullptr)
    {
      const double rank = covered ? AggregatedRank(sums.rank[local], weight) : 0.0;
      rankMap[v] = static_cast<std::uint16_t>(fmin(rank, 65535.0));
    }
  }
}

unsigned
GridStrideBlocks(std::int64_t elements, int threads)
{
  const std::int64_t blocks = (elements + threads - 1) / threads;
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(blocks, 65536)));
}

} // namespace

void
LaunchUnpackSlab(const float * packed, PackedLayout layout, float * slab, const DenoiseGeometry & geometry,
                 const SlabWindow & window, const MagnitudeTransform & transform, unsigned long long * firstNonFinite,
                 cudaStream_t stream)
{
  const std::int64_t voxels = window.planes * geometry.PlaneVoxels();
  const std::int64_t firstVoxel = window.first * geometry.PlaneVoxels();
  if (voxels == 0)
  {
    return;
  }
  if (layout == PackedLayout::VolumesOuter)
  {
    const dim3 grid(static_cast<unsigned>((voxels + kTransposeTile - 1) / kTransposeTile),
                    static_cast<unsigned>((geometry.volumes + kTransposeTile - 1) / kTransposeTile));
    UnpackVolumesOuterKernel<<<grid, dim3(kTransposeTile, kTransposeRows), 0, stream>>>(
      packed, slab, voxels, geometry.volumes, firstVoxel, transform, firstNonFinite);
    SVDLR_CUDA_CHECK_LAUNCH("UnpackVolumesOuterKernel");
  }
  else
  {
    const std::int64_t elements = voxels * geometry.volumes;
    UnpackVolumesInnerKernel<<<GridStrideBlocks(elements, 256), 256, 0, stream>>>(
      packed, slab, elements, geometry.volumes, firstVoxel, transform, firstNonFinite);
    SVDLR_CUDA_CHECK_LAUNCH("UnpackVolumesInnerKernel");
  }
}

void
LaunchFinaliseSlab(const float * slab, const SlabSums & sums, const DenoiseGeometry & geometry,
                   const SlabWindow & window, std::int64_t outFirst, std::int64_t outPlanes, const std::uint8_t * mask,
                   const MagnitudeTransform & transform, PackedLayout layout, float * packedOut, float * sigmaMap,
                   std::uint16_t * rankMap, cudaStream_t stream)
{
  const std::int64_t voxels = outPlanes * geometry.PlaneVoxels();
  if (voxels == 0)
  {
    return;
  }
  const std::int64_t localOffset = (outFirst - window.first) * geometry.PlaneVoxels();
  const std::int64_t globalOffset = outFirst * geometry.PlaneVoxels();
  if (packedOut == nullptr)
  {
    // A σ pass: the maps alone.
  }
  else if (layout == PackedLayout::VolumesOuter)
  {
    const dim3 grid(static_cast<unsigned>((voxels + kTransposeTile - 1) / kTransposeTile),
                    static_cast<unsigned>((geometry.volumes + kTransposeTile - 1) / kTransposeTile));
    FinaliseVolumesOuterKernel<<<grid, dim3(kTransposeTile, kTransposeRows), 0, stream>>>(
      slab, sums, mask, transform, packedOut, voxels, geometry.volumes, localOffset, globalOffset);
    SVDLR_CUDA_CHECK_LAUNCH("FinaliseVolumesOuterKernel");
  }
  else
  {
    const std::int64_t elements = voxels * geometry.volumes;
    FinaliseVolumesInnerKernel<<<GridStrideBlocks(elements, 256), 256, 0, stream>>>(
      slab, sums, mask, transform, packedOut, elements, geometry.volumes, localOffset, globalOffset);
    SVDLR_CUDA_CHECK_LAUNCH("FinaliseVolumesInnerKernel");
  }
  if (sigmaMap != nullptr || rankMap != nullptr)
  {
    FinaliseMapsKernel<<<GridStrideBlocks(voxels, 256), 256, 0, stream>>>(
      sums, mask, sigmaMap, rankMap, voxels, localOffset, globalOffset);
    SVDLR_CUDA_CHECK_LAUNCH("FinaliseMapsKernel");
  }
}

} // namespace detail
} // namespace svdlr
