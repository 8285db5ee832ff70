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
#ifndef svdlr_GramKernels_cuh
#define svdlr_GramKernels_cuh

// First stage of the CUDA backend: bring a batch of row-major matrices to float64, flag the ones that hold
// NaN or Inf, and form each matrix's Gram matrix on its smaller side.
//
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

} // namespace detail
} // namespace svdlr

#endif
