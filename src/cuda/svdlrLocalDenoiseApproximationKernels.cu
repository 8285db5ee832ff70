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

#include "svdlrAggregationWeight.h"
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

constexpr int         kApproximationThreads = 128;                   // one block per patch
constexpr std::size_t kApproximationSharedBytes = 96 * 1024;       // the factor F, when it fits

// ---------------------------------------------------------------------------------------------------------------
// PatchApproximation

/** One block per patch. With B the kept eigenvectors (n x rank) and W their weights:
 *   volume side (n = N): F = X B W (rows R x rank, R the rows wanted), approximation row r = F(r, :) Bᵀ;
 *   voxel side  (n = M): F = Xᵀ B W (N x rank),                         approximation row r = B(r, :) Fᵀ.
 * Rows wanted: the centre's (CentreVoxel) or all M (overlap). Shared memory holds each patch row's voxel index in
 * the window and its aggregation weight (svdlrAggregationWeight.h), then F when it fits (else F goes to the patch's
 * global scratch). X is read from the slab (L1/L2). Contributions go to the window's sums: plain stores for the
 * centre (each voxel is the centre of one patch), weighted atomics for overlap. */
__global__ void
__launch_bounds__(kApproximationThreads)
  PatchApproximationKernel(const float * __restrict__ slab, DenoiseGeometry g, SlabWindow w, PatchBatch batch,
                           BasisView basis, const int * __restrict__ ranks, const double * __restrict__ sigmas,
                           const double * __restrict__ weights, int maxVectors, PatchAggregation aggregation,
                           bool overlap, double * scratch, std::int64_t scratchStride, SlabSums sums)
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
  double *           factor = scratch != nullptr ? scratch + b * scratchStride : shared + 2 * m;
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
  for (int r = threadIdx.x; r < m; r += kApproximationThreads)
  {
    rowWeight[r] = overlap ? AggregationWeight(aggregation, rank, DistanceFromCentre2(g, w, place, voxelOf[r])) : 1.0;
  }
  __syncthreads();

  // F, row-major (rows, rank).
  const int factorRows = volumeSide ? rowsWanted : volumes;
  for (int e = threadIdx.x; e < factorRows * rank; e += kApproximationThreads)
  {
    const int i = e / rank;
    const int c = e - i * rank;
    double    sum = 0.0;
    if (volumeSide)
    {
      const int r = rowOf(i);
      for (int t = 0; t < volumes; ++t)
      {
        sum += x(r, t) * basisAt(t, c);
      }
    }
    else
    {
      for (int r = 0; r < m; ++r)
      {
        sum += x(r, i) * basisAt(r, c);
      }
    }
    factor[e] = sum * w8[c];
  }
  __syncthreads();

  const double sigma = sigmas[b];
  for (int e = threadIdx.x; e < rowsWanted * volumes; e += kApproximationThreads)
  {
    const int i = e / volumes;
    const int t = e - i * volumes;
    const int r = rowOf(i);
    double    value = 0.0;
    for (int c = 0; c < rank; ++c)
    {
      value += volumeSide ? factor[i * rank + c] * basisAt(t, c) : basisAt(r, c) * factor[t * rank + c];
    }
    const std::int64_t voxel = voxelOf[r];
    const double       weight = rowWeight[r];
    double *           target = sums.values + voxel * volumes + t;
    if (overlap)
    {
      atomicAdd(target, weight * value);
    }
    else
    {
      *target = value;
    }
    if (t == 0)
    {
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
  }
}

/** Shared memory for the window voxel and the weight of each patch row. */
std::size_t
OffsetBytes(const DenoiseGeometry & geometry)
{
  return static_cast<std::size_t>(geometry.PatchVoxels()) * (sizeof(std::int64_t) + sizeof(double));
}

std::size_t
FactorBytes(const DenoiseGeometry & geometry, bool overlap, int maxVectors)
{
  const std::int64_t rows = geometry.VolumeSide() ? (overlap ? geometry.PatchVoxels() : 1) : geometry.volumes;
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(std::max(maxVectors, 1)) * sizeof(double);
}

} // namespace

std::size_t
PatchApproximationScratchBytes(const DenoiseGeometry & geometry, PatchAggregation aggregation, int maxVectors)
{
  const std::size_t bytes = FactorBytes(geometry, IsOverlapAggregation(aggregation), maxVectors);
  return OffsetBytes(geometry) + bytes <= kApproximationSharedBytes ? 0 : bytes;
}

void
LaunchPatchApproximation(const float * slab, const DenoiseGeometry & geometry, const SlabWindow & window,
                         const PatchBatch & batch, const BasisView & basis, const int * ranks, const double * sigmas,
                         const double * weights, int maxVectors, PatchAggregation aggregation, void * scratch,
                         const SlabSums & sums, cudaStream_t stream)
{
  if (batch.count == 0)
  {
    return;
  }
  const bool overlap = IsOverlapAggregation(aggregation);
  const std::size_t factorBytes = FactorBytes(geometry, overlap, maxVectors);
  const std::size_t offsetBytes = OffsetBytes(geometry);
  const bool        inShared = offsetBytes + factorBytes <= kApproximationSharedBytes;
  if (!inShared && scratch == nullptr)
  {
    throw Error(ErrorCode::InvalidArgument, "svdlr: PatchApproximation needs its scratch for this patch shape");
  }
  if (offsetBytes > kApproximationSharedBytes)
  {
    throw Error(ErrorCode::InvalidArgument,
                "svdlr: the CUDA local denoiser takes patches of at most " +
                  std::to_string(kApproximationSharedBytes / (sizeof(std::int64_t) + sizeof(double))) +
                  " voxels, got " +
                  std::to_string(geometry.PatchVoxels()));
  }
  const std::size_t sharedBytes = offsetBytes + (inShared ? factorBytes : 0);
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
    overlap,
    inShared ? nullptr : static_cast<double *>(scratch),
    static_cast<std::int64_t>(factorBytes / sizeof(double)),
    sums);
  SVDLR_CUDA_CHECK_LAUNCH("PatchApproximationKernel");
}

} // namespace detail
} // namespace svdlr
