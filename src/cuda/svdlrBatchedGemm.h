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
#ifndef svdlr_BatchedGemm_h
#define svdlr_BatchedGemm_h

// C = alpha op(A) op(B) + beta C for a batch of column-major float64 matrices at fixed strides: the one cuBLAS
// call that the Gram matrices, the factors, the subspace iteration and its check all make (64-bit sizes;
// alpha 1 and beta 0 unless told).

#include "svdlrCudaCheck.h"

#include <cublas_v2.h>

#include <cstdint>

namespace svdlr
{
namespace detail
{

/** On the handle's stream; matrix i of A starts at a + i * strideA, and likewise for B and C. */
inline void
MultiplyBatched(cublasHandle_t handle, cublasOperation_t opA, cublasOperation_t opB, std::int64_t m, std::int64_t n,
                std::int64_t k, const double * a, std::int64_t lda, std::int64_t strideA, const double * b,
                std::int64_t ldb, std::int64_t strideB, double * c, std::int64_t ldc, std::int64_t strideC,
                std::int64_t count, double alpha = 1.0, double beta = 0.0)
{
  SVDLR_CUBLAS_CHECK(cublasDgemmStridedBatched_64(
    handle, opA, opB, m, n, k, &alpha, a, lda, strideA, b, ldb, strideB, &beta, c, ldc, strideC, count));
}

} // namespace detail
} // namespace svdlr

#endif
