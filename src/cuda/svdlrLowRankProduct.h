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
#ifndef svdlr_LowRankProduct_h
#define svdlr_LowRankProduct_h

// The last stage of the CUDA backend, host side: R = P Q^T for a batch of matrices, each with its own rank,
// written straight into the row-major output layout. Host-only header (plain types and device pointers);
// the kernels are in svdlrReconstructionKernels.cu.

#include "svdlrCudaExport.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace svdlr
{
namespace detail
{

/** Sizes and device pointers for one batched product.
 * p:      (count, rows, components) column-major per matrix: component l of matrix m starts at
 *         p + m * rows * components + l * rows.
 * q:      (count, cols, components) column-major, likewise.
 * ranks:  (count); matrix m uses components [0, ranks[m]) and ignores the rest; 0 gives a zero matrix.
 * output: (count, rows, cols) row-major, matrix m at output + m * rows * cols.
 * The factors are stored in float64 whatever TOut is. The arithmetic follows TOut: for double output the
 * product is computed in double; for float output the tiled kernel rounds the factors to float and
 * accumulates in float, an error of at most about rank * FLT_EPSILON * sum_l |p_l q_l| per pixel, in practice
 * of the order of the float output's own rounding (see svdlrReconstructionKernels.cu). */
template <typename TOut>
struct LowRankProductArguments
{
  std::int64_t   rows{ 0 };
  std::int64_t   cols{ 0 };
  std::int64_t   count{ 0 };
  std::int64_t   components{ 0 };
  const double * p{ nullptr };
  const double * q{ nullptr };
  const int *    ranks{ nullptr };
  TOut *         output{ nullptr };
};

/** Whether the launchers below accept `arguments` (grid limits: count <= 65535 because blockIdx.z is the
 * matrix index); otherwise false with the reason in `why`. */
template <typename TOut>
SVDLR_CUDA_EXPORT bool
CanImplementLowRankProduct(const LowRankProductArguments<TOut> & arguments, std::string & why);

/** The fast path: shared-memory tiles of P and Q, a register tile of R per thread, arithmetic in TOut's
 * precision. Returns the launch status (cudaGetLastError() after the launch). */
template <typename TOut>
SVDLR_CUDA_EXPORT cudaError_t
LaunchTiledLowRankProduct(const LowRankProductArguments<TOut> & arguments, cudaStream_t stream);

} // namespace detail
} // namespace svdlr

#endif
