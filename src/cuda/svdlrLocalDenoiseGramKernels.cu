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
// The local denoiser's Gram stage on the device (svdlrLocalDenoiseKernels.cuh): the Gram matrix of each patch's
// Casorati matrix, from the slab, in float64: by our tiled kernel, or gathered and multiplied by cuBLAS.
#include "svdlrLocalDenoiseKernels.cuh"

#include "svdlrBatchedGemm.h"
#include "svdlrCudaCheck.h"
#include "svdlrLocalDenoisePatchPlace.cuh"

#include <algorithm>

namespace svdlr
{
namespace detail
{
namespace
{

constexpr int         kGramThreads = 256;
constexpr int         kGramTile = 4;              // each thread: a kGramTile x kGramTile block of G
constexpr std::size_t kGramSharedBytes = 72 * 1024; // the staged rows: 3 blocks per H100 SM

// ---------------------------------------------------------------------------------------------------------------
// PatchGram

/** One block per patch. G(g1, g2) = sum_k Y(k, g1) Y(k, g2), with Y = X (volume side: k a patch voxel, g a volume)
 * or Y = Xᵀ (voxel side). Y is staged in shared memory in float64 (converted once, not per product), kChunk rows at
 * a time, as (kChunk, ldY) with ldY = n rounded up to kGramTile (the padding is zero). Each thread accumulates one
 * kGramTile x kGramTile block of the lower triangle of G in registers and writes it, mirrored, at the end; blocks
 * are numbered along the rows of the lower triangle. More blocks than threads: several rounds (n > 88). */
__global__ void
__launch_bounds__(kGramThreads)
  PatchGramKernel(const float * __restrict__ slab, DenoiseGeometry g, SlabWindow w, PatchBatch batch,
                  double * __restrict__ gram, int kChunk)
{
  extern __shared__ double staged[]; // (kChunk, ldY), then the window voxel of each patch row
  const std::int64_t      b = blockIdx.x;
  const PatchPlace        place = PlacePatch(g, batch.centres[b]);
  const bool              volumeSide = g.VolumeSide();
  const int               n = static_cast<int>(g.GramSide());
  const int               depth = static_cast<int>(volumeSide ? g.PatchVoxels() : g.volumes); // the k range
  const int               tilesPerSide = (n + kGramTile - 1) / kGramTile;
  const int               ldY = tilesPerSide * kGramTile;
  const int               tiles = tilesPerSide * (tilesPerSide + 1) / 2;
  const std::int64_t      volumes = g.volumes;
  double *                out = gram + b * static_cast<std::int64_t>(n) * n;
  auto *                  voxelOf = reinterpret_cast<std::int64_t *>(staged + static_cast<std::int64_t>(kChunk) * ldY);
  FillPatchVoxels(g, w, place, voxelOf); // read after the first chunk's barrier

  for (int round = 0; round * kGramThreads < tiles; ++round)
  {
    const int tile = round * kGramThreads + static_cast<int>(threadIdx.x);
    // Row ti of the lower triangle of blocks holds blocks ti * (ti + 1) / 2 .. + ti.
    int ti = static_cast<int>((sqrt(8.0 * tile + 1.0) - 1.0) * 0.5);
    while (ti * (ti + 1) / 2 > tile)
    {
      --ti;
    }
    while ((ti + 1) * (ti + 2) / 2 <= tile)
    {
      ++ti;
    }
    const int tj = tile - ti * (ti + 1) / 2;
    double    acc[kGramTile][kGramTile] = {};

    for (int k0 = 0; k0 < depth; k0 += kChunk)
    {
      const int rows = min(kChunk, depth - k0);
      __syncthreads(); // the previous chunk is consumed
      // One warp per staged row or column, so that the patch voxel's place is worked out once, not per element.
      constexpr int kWarps = kGramThreads / 32;
      const int     lane = threadIdx.x % 32;
      const int     warp = threadIdx.x / 32;
      if (volumeSide)
      {
        // Y(k, t) = X(k0 + k, t): along t, a voxel's series is contiguous in the slab.
        for (int k = warp; k < rows; k += kWarps)
        {
          const float * series = slab + voxelOf[k0 + k] * volumes;
          for (int t = lane; t < ldY; t += 32)
          {
            staged[k * ldY + t] = t < n ? static_cast<double>(series[t]) : 0.0;
          }
        }
      }
      else
      {
        // Y(k, r) = X(r, k0 + k): read along k (contiguous), write along the staged column.
        for (int r = warp; r < ldY; r += kWarps)
        {
          const float * series = r < n ? slab + voxelOf[r] * volumes + k0 : nullptr;
          for (int k = lane; k < rows; k += 32)
          {
            staged[k * ldY + r] = r < n ? static_cast<double>(series[k]) : 0.0;
          }
        }
      }
      __syncthreads();
      if (tile < tiles)
      {
        const double * rowsI = staged + ti * kGramTile;
        const double * rowsJ = staged + tj * kGramTile;
        for (int k = 0; k < rows; ++k)
        {
          double yi[kGramTile];
          double yj[kGramTile];
#pragma unroll
          for (int q = 0; q < kGramTile; ++q)
          {
            yi[q] = rowsI[k * ldY + q];
            yj[q] = rowsJ[k * ldY + q];
          }
#pragma unroll
          for (int p = 0; p < kGramTile; ++p)
          {
#pragma unroll
            for (int q = 0; q < kGramTile; ++q)
            {
              acc[p][q] += yi[p] * yj[q];
            }
          }
        }
      }
    }
    if (tile < tiles)
    {
#pragma unroll
      for (int p = 0; p < kGramTile; ++p)
      {
#pragma unroll
        for (int q = 0; q < kGramTile; ++q)
        {
          const int gi = ti * kGramTile + p;
          const int gj = tj * kGramTile + q;
          if (gi < n && gj < n && gj <= gi)
          {
            out[gi + static_cast<std::int64_t>(n) * gj] = acc[p][q];
            out[gj + static_cast<std::int64_t>(n) * gi] = acc[p][q];
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// GatherPatches

constexpr int kGatherThreads = 256;

/** One block per patch: row r of its Casorati matrix (voxel r's series) to staging + (patch, r, volume) in float64,
 * a warp per row, so that both the slab's series and the staged row are read and written contiguously. */
__global__ void
__launch_bounds__(kGatherThreads)
  GatherPatchesKernel(const float * __restrict__ slab, DenoiseGeometry g, SlabWindow w, PatchBatch batch,
                      double * __restrict__ staging)
{
  extern __shared__ std::int64_t voxelOf[];
  const std::int64_t b = blockIdx.x;
  const int          m = static_cast<int>(g.PatchVoxels());
  const std::int64_t volumes = g.volumes;
  FillPatchVoxels(g, w, PlacePatch(g, batch.centres[b]), voxelOf);
  __syncthreads();
  double *      patch = staging + b * m * volumes;
  constexpr int kWarps = kGatherThreads / 32;
  for (int r = static_cast<int>(threadIdx.x) / 32; r < m; r += kWarps)
  {
    const float * series = slab + voxelOf[r] * volumes;
    for (std::int64_t t = threadIdx.x % 32; t < volumes; t += 32)
    {
      patch[r * volumes + t] = static_cast<double>(series[t]);
    }
  }
}

} // namespace

void
LaunchPatchGram(const float * slab, const DenoiseGeometry & geometry, const SlabWindow & window,
                const PatchBatch & batch, double * gram, cudaStream_t stream)
{
  if (batch.count == 0)
  {
    return;
  }
  const std::int64_t n = geometry.GramSide();
  const std::int64_t depth = geometry.VolumeSide() ? geometry.PatchVoxels() : geometry.volumes;
  const std::int64_t ldY = (n + kGramTile - 1) / kGramTile * kGramTile;
  const std::int64_t fit = std::max<std::int64_t>(1, static_cast<std::int64_t>(kGramSharedBytes / sizeof(double)) / ldY);
  const int          chunk = static_cast<int>(std::min(depth, fit));
  const std::size_t  bytes = static_cast<std::size_t>(chunk) * static_cast<std::size_t>(ldY) * sizeof(double) +
                       static_cast<std::size_t>(geometry.PatchVoxels()) * sizeof(std::int64_t);
  SVDLR_CUDA_CHECK(
    cudaFuncSetAttribute(PatchGramKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  PatchGramKernel<<<static_cast<unsigned>(batch.count), kGramThreads, bytes, stream>>>(
    slab, geometry, window, batch, gram, chunk);
  SVDLR_CUDA_CHECK_LAUNCH("PatchGramKernel");
}

std::size_t
GemmGramStagingBytesPerPatch(const DenoiseGeometry & geometry)
{
  return static_cast<std::size_t>(geometry.PatchVoxels() * geometry.volumes) * sizeof(double);
}

void
LaunchPatchGramByGemm(const float * slab, const DenoiseGeometry & geometry, const SlabWindow & window,
                      const PatchBatch & batch, double * gram, unsigned char * staging, std::size_t stagingBytes,
                      cublasHandle_t cublas, cudaStream_t stream)
{
  const std::size_t  perPatch = GemmGramStagingBytesPerPatch(geometry);
  const std::int64_t fit = static_cast<std::int64_t>(stagingBytes / perPatch);
  if (batch.count > 0 && fit == 0)
  {
    throw Error(ErrorCode::OutOfMemory, "svdlr CUDA backend: the Gram stage's staging holds no patch");
  }
  const std::int64_t m = geometry.PatchVoxels();
  const std::int64_t volumes = geometry.volumes;
  const std::int64_t n = geometry.GramSide();
  auto *             rows = reinterpret_cast<double *>(staging); // (patch, row, volume)
  for (std::int64_t first = 0; first < batch.count; first += fit)
  {
    const PatchBatch part{ batch.centres + first, std::min(fit, batch.count - first) };
    GatherPatchesKernel<<<static_cast<unsigned>(part.count), kGatherThreads,
                          static_cast<std::size_t>(m) * sizeof(std::int64_t), stream>>>(slab, geometry, window, part, rows);
    SVDLR_CUDA_CHECK_LAUNCH("GatherPatchesKernel");
    double * out = gram + first * n * n;
    // Each staged patch, column-major, is Xᵀ (volumes x m, leading dimension volumes): G = XᵀX is Xᵀ (Xᵀ)ᵀ on the
    // volume side (n = volumes), and XXᵀ = (Xᵀ)ᵀ Xᵀ on the voxel side (n = m).
    if (geometry.VolumeSide())
    {
      MultiplyBatched(cublas, CUBLAS_OP_N, CUBLAS_OP_T, n, n, m, rows, volumes, m * volumes, rows, volumes,
                      m * volumes, out, n, n * n, part.count);
    }
    else
    {
      MultiplyBatched(cublas, CUBLAS_OP_T, CUBLAS_OP_N, n, n, volumes, rows, volumes, m * volumes, rows, volumes,
                      m * volumes, out, n, n * n, part.count);
    }
  }
}

} // namespace detail
} // namespace svdlr
