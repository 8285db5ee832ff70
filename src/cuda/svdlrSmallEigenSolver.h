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
#ifndef svdlr_SmallEigenSolver_h
#define svdlr_SmallEigenSolver_h

// Our own batched symmetric eigen-solver for many small float64 matrices (n <= 256; hundreds of thousands at
// once), for the local denoiser's Gram matrices. cuSOLVER's XsyevBatched (svdlrEigenSolver.h) stays beside it as
// the reference and the fallback. Four stages, each with the thread mapping that suits it (docs/denoising-cuda.md):
//   1. Householder tridiagonalisation A = Q T Q^T: one thread block per matrix, the matrix (or its packed lower
//      triangle) in shared memory when it fits (n <= 237 on the H100), else in place in global memory; O(n^3)
//      parallel work, n - 2 steps.
//   2. The eigenvalues of T by bisection: one thread per eigenvalue (O(n) Sturm counts of n dependent steps).
//   --- the caller may decide here, from the eigenvalues, how many eigenvectors each matrix needs ---
//   3. Those eigenvectors of T by inverse iteration (LAPACK dstein's scheme): one thread per matrix.
//   4. Back to A's basis, V = Q Z: one warp per vector, the vector in registers, the reflectors read from the
//      matrix buffer.
// Everything is float64. Only the eigenvectors of the largest eigenvalues are computed: all of them when asked.
//
// The host side is a small operator in the CUTLASS manner: Arguments, CanImplement, WorkspaceBytes, and the two
// halves of Run. No call allocates memory or synchronises; everything runs on the given stream.

#include "svdlrCudaExport.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace svdlr
{
namespace detail
{

class SmallEigenSolver
{
public:
  static constexpr std::int64_t kMaxSide = 256;

  struct Arguments
  {
    std::int64_t n{ 0 };
    std::int64_t count{ 0 };
    /** (count, n, n) column-major, symmetric (both triangles are read); destroyed: on return it holds the
     * Householder reflectors that stage 4 reads. */
    double * matrices{ nullptr };
    /** (count, n) ascending per matrix, or null when only the internal copy is wanted. */
    double * eigenvalues{ nullptr };
    /** (count, n, maxVectors) column-major per matrix: column c is the unit eigenvector of the (c+1)-th largest
     * eigenvalue. Columns at and past vectorCounts[i] are left as they were. May be null when maxVectors is 0. */
    double *     vectors{ nullptr };
    std::int64_t maxVectors{ 0 };
    /** (count) on the device: how many vectors matrix i needs (clamped to [0, maxVectors]); null: maxVectors each. */
    const int * vectorCounts{ nullptr };
    /** (count) on the device: 0, or 1 when T holds NaN or Inf (the matrix's eigenvalues and vectors are then not
     * to be used). */
    int * info{ nullptr };
    void *      workspace{ nullptr }; // at least WorkspaceBytes(n, count, maxVectors), 256-byte aligned
    std::size_t workspaceBytes{ 0 };
  };

  /** Whether the solver takes matrices of this side (1 <= n <= kMaxSide); count must be below 2^31. */
  SVDLR_CUDA_EXPORT static bool
  CanImplement(std::int64_t n, std::int64_t count);

  SVDLR_CUDA_EXPORT static std::size_t
  WorkspaceBytes(std::int64_t n, std::int64_t count, std::int64_t maxVectors);

  /** Stages 1 and 2: tridiagonalisation and eigenvalues (into arguments.eigenvalues when given, and into the
   * workspace's ascending copy that stage 3 reads). */
  SVDLR_CUDA_EXPORT static void
  RunEigenvalues(const Arguments & arguments, cudaStream_t stream);

  /** Stages 3 and 4, after RunEigenvalues with the same arguments: the eigenvectors asked for. */
  SVDLR_CUDA_EXPORT static void
  RunEigenvectors(const Arguments & arguments, cudaStream_t stream);
};

} // namespace detail
} // namespace svdlr

#endif
