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
#ifndef svdlr_FactorKernels_cuh
#define svdlr_FactorKernels_cuh

// Layout convention used throughout src/cuda: a row-major rows x cols matrix A is, read column-major, the
// cols x rows matrix X = A^T with leading dimension cols. cuBLAS and cuSOLVER are column-major, so all
// library calls are written in terms of X.

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace svdlr
{
namespace detail
{

// First stage of the CUDA backend: bring a batch of row-major matrices to float64, flag the ones that hold
// NaN or Inf, and form each matrix's Gram matrix on its smaller side.

/** Copies `count` contiguous matrices of `matrixSize` elements from `input` (T) to `output` (double).
 * Non-finite elements are written as 0 so that the solvers downstream never see them, and
 * `nonFiniteFlags[i]` is set to 1 for every matrix i that held one; the flags must be zeroed beforehand.
 * input, output: (count, matrixSize), may be the same buffer (in place, double input); nonFiniteFlags: (count). */
template <typename T>
void
LaunchConvertAndFlagNonFinite(const T * input, double * output, int * nonFiniteFlags, std::size_t count,
                              std::size_t matrixSize, cudaStream_t stream);

/** Gram matrices on the smaller side, in float64, for `count` row-major rows x cols matrices.
 * a:    (count, rows, cols) row-major, i.e. per matrix X = A^T column-major (cols, rows), ld = cols.
 * gram: (count, n, n) column-major, n = min(rows, cols); G = A^T A when cols <= rows, else G = A A^T.
 * Both triangles are written. Runs on the handle's stream. */
void
ComputeGramBatched(cublasHandle_t handle, const double * a, double * gram, std::int64_t rows, std::int64_t cols,
                   std::int64_t count);

// Second stage of the CUDA backend: from the eigenvectors of the Gram matrix to the two factors P and Q of
// the rank-k reconstruction R = P Q^T (see svdlrReconstructionKernels.cu).
//
// With n = min(rows, cols) and kmax the largest rank in the batch:
//  - cols <= rows ("tall"): Q = V_k, the leading eigenvectors of A^T A, and P = A V_k, so R = A V_k V_k^T;
//  - rows < cols ("wide"):  P = U_k, the leading eigenvectors of A A^T, and Q = A^T U_k, so R = U_k U_k^T A.
// Either way R is the projection of A on its leading singular subspace: a zero matrix gives exactly zero,
// and no singular value is ever divided by.
// P is stored column-major (rows, kmax) and Q column-major (cols, kmax): component l of every factor is a
// contiguous vector, components in descending order of eigenvalue.

/** leading (count, n, kmax) column-major <- the last kmax columns of eigenvectors (count, n, n) column-major,
 * reversed, so that component 0 is the eigenvector of the largest eigenvalue. */
void
LaunchExtractLeadingEigenvectors(const double * eigenvectors, double * leading, std::int64_t n, std::int64_t kmax,
                                 std::int64_t count, cudaStream_t stream);

/** The factor on the larger side, on the handle's stream.
 * a:     (count, rows, cols) row-major in float64 (per matrix X = A^T, column-major (cols, rows)).
 * small: (count, n, kmax) column-major, the leading eigenvectors from LaunchExtractLeadingEigenvectors.
 * large: tall: P = A Q, (count, rows, kmax); wide: Q = A^T P, (count, cols, kmax); column-major. */
void
ComputeLargeSideFactor(cublasHandle_t handle, const double * a, const double * small, double * large, std::int64_t rows,
                       std::int64_t cols, std::int64_t kmax, std::int64_t count);

} // namespace detail
} // namespace svdlr

#endif
