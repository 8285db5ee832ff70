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
// The local denoiser's approximation stage on the device (svdlrLocalDenoiseKernels.cuh): each patch's low-rank
// approximation from its kept eigenvectors and weights, into the slab's sums.
#include "svdlrLocalDenoiseKernels.cuh"

#include "denoise/svdlrPatchGeometry.h"
#include "svdlrCudaCheck.h"
#include "svdlrLocalDenoisePatchPlace.cuh"
#include "svdlr/Engine.h"

#include <algorithm>
#include <string>

namespace svdlr
{
namespace detail
{
namespace
{

constexpr int         kApproximationThreads = 128; // one block per patch
// Shared memory for a chunk of the factor F (more when one row of it needs more). Small, so that 16 blocks fit an SM
// beside their row tables: on 176x176x120x200 (7x7x7 patches) 96 KiB for the table and F had left two blocks an SM,
// and the stage took 283 ms against the 117 ms it had taken with F in global memory.
constexpr std::size_t kFactorSharedBytes = 8 * 1024;

// ---------------------------------------------------------------------------------------------------------------
// PatchApproximation

/** One block per patch. With B the kept eigenvectors (n x rank) and W their weights:
 *   volume side (n = N): F = X B W (rows R x rank, R the rows wanted), approximation row r = F(r, :) Bᵀ;
 *   voxel side  (n = M): F = Xᵀ B W (N x rank),                         approximation row r = B(r, :) Fᵀ.
 * Rows wanted: the centre's (CentreVoxel) or all M (overlap). Shared memory holds each patch row's voxel index in
 * the window and its aggregation weight (svdlrPatchGeometry.h), then F a chunk at a time: the rows of F that fit
 * (volume side) and the output rows they give, or the volumes of F that fit (voxel side) and those volumes of every
 * output row. F in chunks needs no global scratch, whose m x n doubles a patch had cost the batch planner more
 * than its Gram matrix. X is read from the slab (L1/L2). Contributions go to the window's sums: plain stores for
 * the centre (each voxel is the centre of one patch), weighted atomics for overlap. sums.values null: the maps'
 * sums only (a σ pass). */
__global__ void
__launch_bounds__(kApproximationThreads)
  PatchApproximationKernel(const float * __restrict__ slab, DenoiseGeometry g, SlabWindow w, PatchBatch batch,
                           BasisView basis, const int * __restrict__ ranks, const double * __restrict__ sigmas,
                           const double * __restrict__ weights, int maxVectors, PatchAggregation aggregation,
                           bool overlap, int factorCapacity, SlabSums sums)
{
  extern __shared__ double shared[];
  const std::int64_t b = blockIdx.x;
  const PatchPlace   place = PlacePatch(g, batch.centres[b]);
  const bool         volumeSide = g.VolumeSide();
  const int          n = static_cast<int>(g.GramSide());
  const int          m = static_cast<int>(g.PatchVoxels());
  const int          volumes = static_cast<int>(g.volumes);
  const int          rank = ranks[b];
  const double *     w8 = weights + b * maxVectors;
  auto *             voxelOf = reinterpret_cast<std::int64_t *>(shared); // (m): window voxel of each patch row
  double *           rowWeight = shared + m;                             // (m): its aggregation weight
  double *           factor = shared + 2 * m;                            // (factorCapacity): a chunk of F
  const int          rowsWanted = overlap ? m : 1;
  const int          centreRow = static_cast<int>(place.centreRow);
  const auto         rowOf = [&](int i) { return overlap ? i : centreRow; };
  const double *     patchBasis = basis.data + b * basis.matrixStride;
  const auto         basisAt = [&](int i, int c) {
    const int column = basis.reversed ? n - 1 - c : c;
    return patchBasis[static_cast<std::int64_t>(column) * n + i];
  };
  const auto x = [&](int r, int t) { return static_cast<double>(slab[voxelOf[r] * volumes + t]); };

  FillPatchVoxels(g, w, place, voxelOf);
  __syncthreads();
  const double sigma = sigmas[b];
  for (int i = threadIdx.x; i < rowsWanted; i += kApproximationThreads)
  {
    const int          r = rowOf(i);
    const std::int64_t voxel = voxelOf[r];
    const double       weight = overlap ? AggregationWeight(aggregation, rank, DistanceFromCentre2(g, w, place, voxel)) : 1.0;
    rowWeight[r] = weight;
    if (overlap)
    {
      atomicAdd(sums.weights + voxel, weight);
      atomicAdd(sums.sigma + voxel, weight * sigma);
      atomicAdd(sums.rank + voxel, weight * static_cast<double>(rank));
    }
    else
    {
      sums.weights[voxel] = 1.0;
      sums.sigma[voxel] = sigma;
      sums.rank[voxel] = static_cast<double>(rank);
    }
  }
  if (sums.values == nullptr || rank == 0)
  {
    return; // a rank of 0 adds zeros to the values, which the sums hold already
  }
  __syncthreads();

  // The chunk: output rows [first, first + rows) of the wanted ones and volumes [t0, t0 + span) of every row.
  const int chunk = max(1, factorCapacity / rank);
  const int chunks = volumeSide ? (rowsWanted + chunk - 1) / chunk : (volumes + chunk - 1) / chunk;
  for (int k = 0; k < chunks; ++k)
  {
    const int first = volumeSide ? k * chunk : 0;
    const int rows = volumeSide ? min(chunk, rowsWanted - first) : rowsWanted;
    const int t0 = volumeSide ? 0 : k * chunk;
    const int span = volumeSide ? volumes : min(chunk, volumes - t0);

    // F's chunk, row-major (rows or volumes of the chunk, rank).
    for (int e = threadIdx.x; e < (volumeSide ? rows : span) * rank; e += kApproximationThreads)
    {
      const int i = e / rank;
      const int c = e - i * rank;
      double    sum = 0.0;
      if (volumeSide)
      {
        const int r = rowOf(first + i);
        for (int t = 0; t < volumes; ++t)
        {
          sum += x(r, t) * basisAt(t, c);
        }
      }
      else
      {
        for (int r = 0; r < m; ++r)
        {
          sum += x(r, t0 + i) * basisAt(r, c);
        }
      }
      factor[e] = sum * w8[c];
    }
    __syncthreads();

    for (int e = threadIdx.x; e < rows * span; e += kApproximationThreads)
    {
      const int i = e / span;
      const int j = e - i * span;
      const int r = rowOf(first + i);
      const int t = t0 + j;
      double    value = 0.0;
      for (int c = 0; c < rank; ++c)
      {
        value += volumeSide ? factor[i * rank + c] * basisAt(t, c) : basisAt(r, c) * factor[j * rank + c];
      }
      double * target = sums.values + voxelOf[r] * volumes + t;
      if (overlap)
      {
        atomicAdd(target, rowWeight[r] * value);
      }
      else
      {
        *target = value;
      }
    }
    __syncthreads(); // the next chunk overwrites F
  }
}

/** Shared memory for the window voxel and the weight of each patch row. */
std::size_t
OffsetBytes(const DenoiseGeometry & geometry)
{
  return static_cast<std::size_t>(geometry.PatchVoxels()) * (sizeof(std::int64_t) + sizeof(double));
}

} // namespace

void
LaunchPatchApproximation(const float * slab, const DenoiseGeometry & geometry, const SlabWindow & window,
                         const PatchBatch & batch, const BasisView & basis, const int * ranks, const double * sigmas,
                         const double * weights, int maxVectors, PatchAggregation aggregation, const SlabSums & sums,
                         cudaStream_t stream)
{
  if (batch.count == 0)
  {
    return;
  }
  // The row table, then F's chunk: at least one row of F.
  const std::size_t offsetBytes = OffsetBytes(geometry);
  const std::size_t sharedBytes =
    offsetBytes + std::max(kFactorSharedBytes, static_cast<std::size_t>(std::max(maxVectors, 1)) * sizeof(double));
  const int factorCapacity = static_cast<int>((sharedBytes - offsetBytes) / sizeof(double));
  int       device = 0;
  int       sharedLimit = 0;
  SVDLR_CUDA_CHECK(cudaGetDevice(&device));
  SVDLR_CUDA_CHECK(cudaDeviceGetAttribute(&sharedLimit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (sharedBytes > static_cast<std::size_t>(sharedLimit))
  {
    throw Error(ErrorCode::InvalidArgument,
                "svdlr: the CUDA local denoiser's approximation needs " + std::to_string(sharedBytes) +
                  " bytes of shared memory for a patch of " + std::to_string(geometry.PatchVoxels()) + " voxels and " +
                  std::to_string(maxVectors) + " eigenvectors; this GPU offers " + std::to_string(sharedLimit));
  }
  SVDLR_CUDA_CHECK(cudaFuncSetAttribute(
    PatchApproximationKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(sharedBytes)));
  PatchApproximationKernel<<<static_cast<unsigned>(batch.count), kApproximationThreads, sharedBytes, stream>>>(
    slab,
    geometry,
    window,
    batch,
    basis,
    ranks,
    sigmas,
    weights,
    maxVectors,
    aggregation,
    IsOverlapAggregation(aggregation),
    factorCapacity,
    sums);
  SVDLR_CUDA_CHECK_LAUNCH("PatchApproximationKernel");
}

} // namespace detail
} // namespace svdlr
