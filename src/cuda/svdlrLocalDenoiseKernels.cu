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
#include "svdlrLocalDenoiseKernels.cuh"

#include "svdlrCudaCheck.h"
#include "svdlrChooseRank.h"
#include "svdlrPatchGeometry.h"
#include "svdlr/Engine.h"

#include <algorithm>
#include <cfloat>
#include <string>

namespace svdlr
{
namespace detail
{
namespace
{

constexpr int kTransposeTile = 32; // voxels x volumes per tile of the layout changes
constexpr int kTransposeRows = 8;  // threads along the tile's second axis
constexpr int kGramThreads = 256;
constexpr int kGramTile = 4;                                  // each thread: a kGramTile x kGramTile block of G
constexpr std::size_t kGramSharedBytes = 72 * 1024;           // the staged rows: 3 blocks per H100 SM
constexpr int kScalarThreads = 128;                           // one thread per patch
constexpr int kApproximationThreads = 128;                    // one block per patch
constexpr std::size_t kApproximationSharedBytes = 96 * 1024;  // the factor F, when it fits

/** Where a patch lies: its start and its centre's row. */
struct PatchPlace
{
  std::int64_t sx, sy, sz;
  std::int64_t centreRow;
};

__device__ inline PatchPlace
PlacePatch(const DenoiseGeometry & g, std::int64_t centre)
{
  const std::int64_t plane = g.PlaneVoxels();
  const std::int64_t cz = centre / plane;
  const std::int64_t cy = (centre - cz * plane) / g.nx;
  const std::int64_t cx = centre - cz * plane - cy * g.nx;
  PatchPlace         p;
  p.sx = PatchStart(cx, g.ex, g.nx);
  p.sy = PatchStart(cy, g.ey, g.ny);
  p.sz = PatchStart(cz, g.ez, g.nz);
  p.centreRow = PatchRow(cx, cy, cz, p.sx, p.sy, p.sz, g.ex, g.ey);
  return p;
}

/** Index, within the slab window, of row r of the patch that starts at p (its voxel; times volumes for the slab).
 * 32-bit divisions: a patch has far fewer than 2^31 voxels. */
__device__ inline std::int64_t
WindowVoxel(const DenoiseGeometry & g, const SlabWindow & w, const PatchPlace & p, int r)
{
  const int ex = static_cast<int>(g.ex);
  const int ey = static_cast<int>(g.ey);
  const int dx = r % ex;
  const int dy = (r / ex) % ey;
  const int dz = r / (ex * ey);
  return ((p.sz + dz - w.first) * g.ny + (p.sy + dy)) * g.nx + (p.sx + dx);
}

// ---------------------------------------------------------------------------------------------------------------
// UnpackSlab

/** [t][v] -> [v][t] through a (kTransposeTile, kTransposeTile + 1) shared tile: both the reads (along v) and the
 * writes (along t) are coalesced. v is the voxel index within the window. */
__global__ void
__launch_bounds__(kTransposeTile * kTransposeRows)
  UnpackVolumesOuterKernel(const float * __restrict__ packed, float * __restrict__ slab, std::int64_t voxels,
                           std::int64_t volumes, std::int64_t firstVoxel, unsigned long long * firstNonFinite)
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
      tile[row][threadIdx.x] = value;
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
                                                unsigned long long * firstNonFinite)
{
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < elements; e += stride)
  {
    const float value = packed[e];
    slab[e] = value;
    if (!isfinite(value))
    {
      atomicMin(firstNonFinite, static_cast<unsigned long long>(firstVoxel + e / volumes));
    }
  }
}

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
  extern __shared__ double staged[];
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
          const float * series = slab + WindowVoxel(g, w, place, k0 + k) * volumes;
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
          const float * series = r < n ? slab + WindowVoxel(g, w, place, r) * volumes + k0 : nullptr;
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
// ChoosePatchRanks

/** One thread per patch: the rank rule every backend runs (ChooseRank, svdlrChooseRank.h), then the weights of
 * PatchLowRank::Choose (svdlrPatchLowRank.cxx). */
__global__ void
__launch_bounds__(kScalarThreads)
  ChoosePatchRanksKernel(const double * __restrict__ eigenvalues, const float * __restrict__ knownSigma,
                         PatchBatch batch, DenoiseGeometry g, PatchRankRule rule, int maxVectors,
                         const int * __restrict__ info, unsigned long long * failures, int * __restrict__ ranks,
                         double * __restrict__ sigmas, double * __restrict__ weights)
{
  const std::int64_t b = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b >= batch.count)
  {
    return;
  }
  const int      n = static_cast<int>(g.GramSide());
  const int      m = static_cast<int>(g.PatchVoxels());
  const int      volumes = static_cast<int>(g.volumes);
  const double * lambda = eigenvalues + b * n;
  const double   sigmaGiven = knownSigma != nullptr ? static_cast<double>(knownSigma[batch.centres[b]]) : -1.0;
  const NoiseRank decided =
    ChooseRank(rule.policy, GramEigenvaluesAscending{ lambda, n }, m, volumes, sigmaGiven, rule.median);
  int rank = max(0, min(decided.rank, maxVectors));
  if (info != nullptr && info[b] != 0)
  {
    atomicAdd(failures, 1ull);
    rank = 0;
  }
  ranks[b] = rank;
  sigmas[b] = decided.sigma;
  for (int j = 0; j < rank; ++j)
  {
    // Component j belongs to the (j+1)-th largest eigenvalue.
    const double singular = sqrt(fmax(lambda[n - 1 - j], 0.0));
    double       weight = 1.0;
    if (rule.optimalShrinkage)
    {
      weight = singular > 0.0 ? OptimalFrobeniusShrinkage(singular, decided.sigma, m, volumes) / singular : 0.0;
    }
    weights[b * maxVectors + j] = weight;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// PatchApproximation

/** One block per patch. With B the kept eigenvectors (n x rank) and W their weights:
 *   volume side (n = N): F = X B W (rows R x rank, R the rows wanted), approximation row r = F(r, :) Bᵀ;
 *   voxel side  (n = M): F = Xᵀ B W (N x rank),                         approximation row r = B(r, :) Fᵀ.
 * Rows wanted: the centre's (CentreVoxel) or all M (overlap). Shared memory holds each patch row's voxel index in
 * the window, then F when it fits (else F goes to the patch's global scratch). X is read from the slab (L1/L2).
 * Contributions go to the window's sums: plain stores for the centre (each voxel is the centre of one patch),
 * atomics for overlap. */
__global__ void
__launch_bounds__(kApproximationThreads)
  PatchApproximationKernel(const float * __restrict__ slab, DenoiseGeometry g, SlabWindow w, PatchBatch batch,
                           BasisView basis, const int * __restrict__ ranks, const double * __restrict__ sigmas,
                           const double * __restrict__ weights, int maxVectors, bool overlap, double * scratch,
                           std::int64_t scratchStride, SlabSums sums)
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
  double *           factor = scratch != nullptr ? scratch + b * scratchStride : shared + m;
  const int          rowsWanted = overlap ? m : 1;
  const int          centreRow = static_cast<int>(place.centreRow);
  const auto         rowOf = [&](int i) { return overlap ? i : centreRow; };
  const double *     patchBasis = basis.data + b * basis.matrixStride;
  const auto         basisAt = [&](int i, int c) {
    const int column = basis.reversed ? n - 1 - c : c;
    return patchBasis[static_cast<std::int64_t>(column) * n + i];
  };
  const auto x = [&](int r, int t) { return static_cast<double>(slab[voxelOf[r] * volumes + t]); };

  for (int r = threadIdx.x; r < m; r += kApproximationThreads)
  {
    voxelOf[r] = WindowVoxel(g, w, place, r);
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
    double *           target = sums.values + voxel * volumes + t;
    if (overlap)
    {
      atomicAdd(target, value);
    }
    else
    {
      *target = value;
    }
    if (t == 0)
    {
      if (overlap)
      {
        atomicAdd(sums.counts + voxel, 1u);
        atomicAdd(sums.sigma + voxel, sigma);
        atomicAdd(sums.rank + voxel, static_cast<double>(rank));
      }
      else
      {
        sums.counts[voxel] = 1u;
        sums.sigma[voxel] = sigma;
        sums.rank[voxel] = static_cast<double>(rank);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// FinaliseSlab

/** One value of the denoised series: the mean of the rows summed, or the input where nothing was (outside the
 * mask, or never covered). */
__device__ inline float
FinalValue(const float * slab, const SlabSums & sums, const std::uint8_t * mask, std::int64_t localVoxel,
           std::int64_t globalVoxel, std::int64_t volumes, std::int64_t t)
{
  const bool     inside = mask == nullptr || mask[globalVoxel] != 0;
  const unsigned count = sums.counts[localVoxel];
  if (!inside || count == 0)
  {
    return slab[localVoxel * volumes + t];
  }
  return static_cast<float>(sums.values[localVoxel * volumes + t] / count);
}

/** Output planes in VolumesOuter layout: [v][t] sums -> [t][v] packed, through a shared tile as in UnpackSlab.
 * v counts voxels from the first output plane. */
__global__ void
__launch_bounds__(kTransposeTile * kTransposeRows)
  FinaliseVolumesOuterKernel(const float * __restrict__ slab, SlabSums sums, const std::uint8_t * __restrict__ mask,
                             float * __restrict__ packedOut, std::int64_t voxels, std::int64_t volumes,
                             std::int64_t localOffset, std::int64_t globalOffset)
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
      tile[row][threadIdx.x] = FinalValue(slab, sums, mask, localOffset + v, globalOffset + v, volumes, t);
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
                             float * __restrict__ packedOut, std::int64_t elements, std::int64_t volumes,
                             std::int64_t localOffset, std::int64_t globalOffset)
{
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < elements; e += stride)
  {
    const std::int64_t v = e / volumes;
    const std::int64_t t = e - v * volumes;
    packedOut[e] = FinalValue(slab, sums, mask, localOffset + v, globalOffset + v, volumes, t);
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
    const unsigned     count = sums.counts[local];
    const bool         covered = (mask == nullptr || mask[globalOffset + v] != 0) && count > 0;
    if (sigmaMap != nullptr)
    {
      sigmaMap[v] = covered ? static_cast<float>(sums.sigma[local] / count) : 0.0f;
    }
    if (rankMap != nullptr)
    {
      const double rank = covered ? round(sums.rank[local] / count) : 0.0; // half away from 0, as std::round
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

/** Shared memory for the window voxel of each patch row. */
std::size_t
OffsetBytes(const DenoiseGeometry & geometry)
{
  return static_cast<std::size_t>(geometry.PatchVoxels()) * sizeof(std::int64_t);
}

std::size_t
FactorBytes(const DenoiseGeometry & geometry, bool overlap, int maxVectors)
{
  const std::int64_t rows = geometry.VolumeSide() ? (overlap ? geometry.PatchVoxels() : 1) : geometry.volumes;
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(std::max(maxVectors, 1)) * sizeof(double);
}

} // namespace

void
LaunchUnpackSlab(const float * packed, PackedLayout layout, float * slab, const DenoiseGeometry & geometry,
                 const SlabWindow & window, unsigned long long * firstNonFinite, cudaStream_t stream)
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
      packed, slab, voxels, geometry.volumes, firstVoxel, firstNonFinite);
    SVDLR_CUDA_CHECK_LAUNCH("UnpackVolumesOuterKernel");
  }
  else
  {
    const std::int64_t elements = voxels * geometry.volumes;
    UnpackVolumesInnerKernel<<<GridStrideBlocks(elements, 256), 256, 0, stream>>>(
      packed, slab, elements, geometry.volumes, firstVoxel, firstNonFinite);
    SVDLR_CUDA_CHECK_LAUNCH("UnpackVolumesInnerKernel");
  }
}

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
  const std::size_t  bytes = static_cast<std::size_t>(chunk) * static_cast<std::size_t>(ldY) * sizeof(double);
  SVDLR_CUDA_CHECK(
    cudaFuncSetAttribute(PatchGramKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  PatchGramKernel<<<static_cast<unsigned>(batch.count), kGramThreads, bytes, stream>>>(
    slab, geometry, window, batch, gram, chunk);
  SVDLR_CUDA_CHECK_LAUNCH("PatchGramKernel");
}

void
LaunchChoosePatchRanks(const double * eigenvalues, const float * knownSigma, const PatchBatch & batch,
                       const DenoiseGeometry & geometry, const PatchRankRule & rule, int maxVectors, const int * info,
                       unsigned long long * failures, int * ranks, double * sigmas, double * weights,
                       cudaStream_t stream)
{
  if (batch.count == 0)
  {
    return;
  }
  const unsigned blocks = static_cast<unsigned>((batch.count + kScalarThreads - 1) / kScalarThreads);
  ChoosePatchRanksKernel<<<blocks, kScalarThreads, 0, stream>>>(
    eigenvalues, knownSigma, batch, geometry, rule, maxVectors, info, failures, ranks, sigmas, weights);
  SVDLR_CUDA_CHECK_LAUNCH("ChoosePatchRanksKernel");
}

std::size_t
PatchApproximationScratchBytes(const DenoiseGeometry & geometry, bool overlap, int maxVectors)
{
  const std::size_t bytes = FactorBytes(geometry, overlap, maxVectors);
  return OffsetBytes(geometry) + bytes <= kApproximationSharedBytes ? 0 : bytes;
}

void
LaunchPatchApproximation(const float * slab, const DenoiseGeometry & geometry, const SlabWindow & window,
                         const PatchBatch & batch, const BasisView & basis, const int * ranks, const double * sigmas,
                         const double * weights, int maxVectors, bool overlap, void * scratch, const SlabSums & sums,
                         cudaStream_t stream)
{
  if (batch.count == 0)
  {
    return;
  }
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
                  std::to_string(kApproximationSharedBytes / sizeof(std::int64_t)) + " voxels, got " +
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
    overlap,
    inShared ? nullptr : static_cast<double *>(scratch),
    static_cast<std::int64_t>(factorBytes / sizeof(double)),
    sums);
  SVDLR_CUDA_CHECK_LAUNCH("PatchApproximationKernel");
}

void
LaunchFinaliseSlab(const float * slab, const SlabSums & sums, const DenoiseGeometry & geometry,
                   const SlabWindow & window, std::int64_t outFirst, std::int64_t outPlanes, const std::uint8_t * mask,
                   PackedLayout layout, float * packedOut, float * sigmaMap, std::uint16_t * rankMap,
                   cudaStream_t stream)
{
  const std::int64_t voxels = outPlanes * geometry.PlaneVoxels();
  if (voxels == 0)
  {
    return;
  }
  const std::int64_t localOffset = (outFirst - window.first) * geometry.PlaneVoxels();
  const std::int64_t globalOffset = outFirst * geometry.PlaneVoxels();
  if (layout == PackedLayout::VolumesOuter)
  {
    const dim3 grid(static_cast<unsigned>((voxels + kTransposeTile - 1) / kTransposeTile),
                    static_cast<unsigned>((geometry.volumes + kTransposeTile - 1) / kTransposeTile));
    FinaliseVolumesOuterKernel<<<grid, dim3(kTransposeTile, kTransposeRows), 0, stream>>>(
      slab, sums, mask, packedOut, voxels, geometry.volumes, localOffset, globalOffset);
    SVDLR_CUDA_CHECK_LAUNCH("FinaliseVolumesOuterKernel");
  }
  else
  {
    const std::int64_t elements = voxels * geometry.volumes;
    FinaliseVolumesInnerKernel<<<GridStrideBlocks(elements, 256), 256, 0, stream>>>(
      slab, sums, mask, packedOut, elements, geometry.volumes, localOffset, globalOffset);
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
