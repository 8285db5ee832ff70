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
#ifndef svdlr_ExactRedo_h
#define svdlr_ExactRedo_h

// The fallback of the subspace solver: the matrices of a batch that failed the a-posteriori check
// (svdlrSubspaceCheck.h) are gathered into sub-batches and redone with the exact solver (XsyevBatched on the
// full n x n Gram matrices, which the subspace solver left intact), on the batch's own stream and handles,
// and their reconstructions, singular values and ranks replace the subspace solver's. A rare path: it
// allocates its buffers when it runs, in chunks that fit, and waits for its stream.
//
// Two steps around the batch's own reconstruction: Solve before it (double input is converted in place, so
// the batch's float64 copy is gone once the reconstruction has overwritten it), Scatter after it (so that
// the exact reconstructions overwrite the subspace solver's).

#include "svdlr/Engine.h"
#include "svdlrDeviceBuffer.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace svdlr
{
namespace detail
{

template <typename T>
struct ExactRedoArguments
{
  cublasHandle_t     cublas{ nullptr }; // all three bound to `stream`
  cusolverDnHandle_t cusolver{ nullptr };
  cusolverDnParams_t cusolverParams{ nullptr };
  cudaStream_t       stream{ nullptr };
  const double *     gram{ nullptr }; // (batch, n, n) the batch's Gram matrices
  const double *     a{ nullptr };    // (batch, rows, cols) the batch in float64
  T *                output{ nullptr }; // (batch, rows, cols) the batch's reconstructions, overwritten where redone
  std::int64_t       rows{ 0 };
  std::int64_t       cols{ 0 };
  std::size_t        first{ 0 }; // the batch's first matrix in the run, for the report
};

/** The exact solver's redo of some matrices of one batch. */
template <typename T>
class ExactRedo
{
public:
  explicit ExactRedo(const ExactRedoArguments<T> & arguments)
    : m_Arguments(arguments)
  {}

  /** Reconstructs `matrices` (indices within the batch, ascending) into buffers of its own, after the work
   * already queued on the stream; fills report.singularValues (all n values), ranks and noiseSigmas of each,
   * and appends them (indices in the run) to report.redoneMatrices. Throws svdlr::Error as the exact path
   * does. */
  void
  Solve(const std::vector<std::size_t> & matrices, const RankPolicy & policy, Report & report);

  /** Copies the reconstructions over the batch's output, on the stream, and waits for them. */
  void
  Scatter();

private:
  ExactRedoArguments<T>    m_Arguments;
  std::vector<std::size_t> m_Matrices;
  DeviceBuffer<T>          m_Output; // (matrices, rows, cols)
};

} // namespace detail
} // namespace svdlr

#endif
