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
#ifndef svdlr_LocalDenoiseKernels_cuh
#define svdlr_LocalDenoiseKernels_cuh

// The local denoiser's own kernels (svdlrCudaLocalDenoiser.cxx runs them; docs/denoising-cuda.md), one .cu file per
// stage. A slab is a range of z planes of the series held on the device; within it:
//   packed slab (as copied from the host)  --UnpackSlab-->  slab in compute layout (float, volume fastest)
//                                                                          (slab I/O: svdlrLocalDenoiseSlabKernels.cu)
//   slab + patch centres  --PatchGram-->  Gram matrices of the patches' Casorati matrices (float64; from n = 128
//                                         gathered and multiplied by cuBLAS)   (svdlrLocalDenoiseGramKernels.cu)
//   Gram matrices  --eigen-solver-->  eigenvalues and eigenvectors   (svdlrSmallEigenSolver.h, or cuSOLVER's:
//                                                                     svdlrEigenSolver.h)
//   eigenvalues  --ChoosePatchRanks-->  rank, σ and shrinkage weight per patch (svdlrChooseRank.h)
//                                                                              (svdlrLocalDenoiseRankKernels.cu)
//   slab + eigenvectors  --PatchApproximation-->  rows of the low-rank approximations, into the slab's sums
//                                                                     (svdlrLocalDenoiseApproximationKernels.cu)
//   sums  --FinaliseSlab-->  denoised planes (packed for the host) and the σ and rank maps
//                                                                          (slab I/O: svdlrLocalDenoiseSlabKernels.cu)
// Every launcher checks its launch. All sizes and offsets are 64-bit. No ITK header.

#include "noise/svdlrMagnitudeTransform.h"
#include "denoise/svdlrPatchGeometry.h" // SVDLR_HOST_DEVICE
#include "denoise/svdlrSpherePatch.h"   // PatchOffset

#include "svdlr/RankPolicy.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace svdlr
{
namespace detail
{

/** The series and the patch, as the kernels see them. The Casorati matrix X of a patch is M x N (patch voxels x
 * volumes), its rows numbered x fastest (PatchRow); the Gram matrix is of the smaller side, n = min(M, N):
 * XᵀX (n = N, "volume side") when N <= M, else XXᵀ (n = M), as the CPU backend chooses. */
struct DenoiseGeometry
{
  std::int64_t nx{ 0 }, ny{ 0 }, nz{ 0 };
  std::int64_t volumes{ 0 };
  std::int64_t ex{ 0 }, ey{ 0 }, ez{ 0 }; // patch extent (a sphere's box)
  /** Spheres (svdlrSpherePatch.h): their voxel count, and the device table of offsets they walk; 0 and null for
   * cuboids, whose rows are their whole box. */
  std::int64_t        sphereVoxels{ 0 };
  const PatchOffset * sphereOrder{ nullptr };
  std::int64_t        sphereOrderSize{ 0 };

  SVDLR_HOST_DEVICE std::int64_t
  PlaneVoxels() const
  {
    return nx * ny;
  }
  SVDLR_HOST_DEVICE std::int64_t
  PatchVoxels() const
  {
    return sphereVoxels > 0 ? sphereVoxels : ex * ey * ez;
  }
  SVDLR_HOST_DEVICE bool
  VolumeSide() const
  {
    return volumes <= PatchVoxels();
  }
  SVDLR_HOST_DEVICE std::int64_t
  GramSide() const
  {
    return VolumeSide() ? volumes : PatchVoxels();
  }
};

/** The planes [first, first + planes) that a slab's device buffers hold. The compute-layout slab holds voxel
 * (x, y, z) in volume t at ((z - first) * ny + y) * nx + x) * volumes + t: a voxel's series is contiguous, which is
 * one row of a Casorati matrix. */
struct SlabWindow
{
  std::int64_t first{ 0 };
  std::int64_t planes{ 0 };
};

/** How a slab travels between host and device. VolumesOuter: [t][z][y][x] (an itk::Image<T, 4>: runs along x are
 * contiguous on the host). VolumesInner: [z][y][x][t] (an itk::VectorImage: each voxel's series is contiguous),
 * which is the compute layout itself. */
enum class PackedLayout
{
  VolumesOuter,
  VolumesInner
};

/** The patches of one batch: their centres' linear voxel indices (x fastest, whole series), on the device. */
struct PatchBatch
{
  const std::int64_t * centres{ nullptr };
  std::int64_t         count{ 0 };
};

/** The per-voxel accumulators of a slab window, as the CPU backend's PlaneSums: the weighted sum of the
 * approximations' rows (voxel-major, volumes fastest), the sum of the weights (svdlrPatchGeometry.h; 1 per patch
 * for CentreVoxel and OverlapAverage), and the weighted sums of their σ and rank. */
struct SlabSums
{
  double * values{ nullptr };  // (planes * nx * ny, volumes)
  double * weights{ nullptr }; // (planes * nx * ny)
  double * sigma{ nullptr };
  double * rank{ nullptr };
};

/** What ChoosePatchRanks needs of LocalDenoiseOptions (plain values, for the device). */
struct PatchRankRule
{
  RankPolicy     policy{};  // read on the device by ChoosePatchRank (svdlrChooseRank.h)
  NoiseEstimator noiseEstimator{ kDefaultNoiseEstimator };
  double     median{ 0.0 }; // MarchenkoPasturMedian(β), where NeedsMarchenkoPasturMedian
  bool       optimalShrinkage{ false };
  int        removed{ 0 }; // LocalDenoiseOptions::removedVolumeDimensions (NoiseShapeOf)
};

/** Where a patch's eigenvectors are: column c (eigenvector of the (c+1)-th largest eigenvalue) of patch b starts at
 * data + b * matrixStride + (reversed ? n - 1 - c : c) * n. Our solver writes them in that order (reversed = false);
 * cuSOLVER leaves them ascending (reversed = true). */
struct BasisView
{
  const double * data{ nullptr };
  std::int64_t   matrixStride{ 0 };
  bool           reversed{ false };
};

/** packed (the slab as uploaded, `layout`) -> slab (compute layout), stabilised by `transform` where its (device)
 * sigma is not null. The lowest linear voxel index (whole series) whose series holds NaN or Inf is atomicMin'ed into
 * *firstNonFinite. */
void
LaunchUnpackSlab(const float * packed, PackedLayout layout, float * slab, const DenoiseGeometry & geometry,
                 const SlabWindow & window, const MagnitudeTransform & transform, unsigned long long * firstNonFinite,
                 cudaStream_t stream);

/** Gram matrices of the batch's patches: gram (count, n, n) column-major, both triangles, float64, from the slab. */
void
LaunchPatchGram(const float * slab, const DenoiseGeometry & geometry, const SlabWindow & window,
                const PatchBatch & batch, double * gram, cudaStream_t stream);

/** The Gram stage by cuBLAS's batched DGEMM, which runs on the FP64 tensor cores: the patches' Casorati matrices
 * are gathered from the slab into `staging` in float64, as many at a time as it holds (GemmGramStagingBytesPerPatch
 * each), and multiplied. The same matrices as LaunchPatchGram up to rounding; far faster at large n (the stage
 * benchmark: docs/denoising-cuda.md), slower at small n, where the launches and the staging cost more than the
 * products. */
void
LaunchPatchGramByGemm(const float * slab, const DenoiseGeometry & geometry, const SlabWindow & window,
                      const PatchBatch & batch, double * gram, unsigned char * staging, std::size_t stagingBytes,
                      cublasHandle_t cublas, cudaStream_t stream);

/** Staging bytes one patch takes in LaunchPatchGramByGemm: its Casorati matrix in float64. */
std::size_t
GemmGramStagingBytesPerPatch(const DenoiseGeometry & geometry);

/** Per patch, from its eigenvalues (count, n) ascending: the rank (clamped to maxVectors), σ, and the weights
 * (count, maxVectors) of the kept components, exactly as the CPU backend's PatchLowRank::Choose. knownSigma: the
 * σ map (whole series) or null. A patch whose eigen-solve failed (info[b] != 0) gets rank 0 and is counted in
 * *failures, for the host to fall back. */
void
LaunchChoosePatchRanks(const double * eigenvalues, const float * knownSigma, const PatchBatch & batch,
                       const DenoiseGeometry & geometry, const PatchRankRule & rule, int maxVectors, const int * info,
                       unsigned long long * failures, int * ranks, double * sigmas, double * weights,
                       cudaStream_t stream);

/** The low-rank approximation of each patch, X B W Bᵀ (volume side) or B W Bᵀ X (voxel side) with B the kept
 * eigenvectors and W the weights, into the sums: its centre's row only (CentreVoxel, plain stores: each voxel is
 * the centre of one patch), or every row times its aggregation weight (the overlap modes: atomic additions). The
 * maps' sums (weights, σ, rank) always; the values' only where sums.values is not null (a σ pass needs no basis). */
void
LaunchPatchApproximation(const float * slab, const DenoiseGeometry & geometry, const SlabWindow & window,
                         const PatchBatch & batch, const BasisView & basis, const int * ranks, const double * sigmas,
                         const double * weights, int maxVectors, PatchAggregation aggregation, const SlabSums & sums,
                         cudaStream_t stream);

/** Planes [outFirst, outFirst + outPlanes) of the window, final: the weighted mean of the rows summed (voxels
 * inside the mask that patches covered), else the input, inverted by `transform` where its sigma is not null (the
 * inverse of UnpackSlab's stabilisation), into packedOut (`layout`, those planes only; null: none, a σ pass);
 * and the maps for those planes (null to skip): σ the weighted mean of the patches' σ, rank the rounded weighted
 * mean of their ranks, 0 where not covered. */
void
LaunchFinaliseSlab(const float * slab, const SlabSums & sums, const DenoiseGeometry & geometry,
                   const SlabWindow & window, std::int64_t outFirst, std::int64_t outPlanes, const std::uint8_t * mask,
                   const MagnitudeTransform & transform, PackedLayout layout, float * packedOut, float * sigmaMap,
                   std::uint16_t * rankMap, cudaStream_t stream);

} // namespace detail
} // namespace svdlr

#endif
