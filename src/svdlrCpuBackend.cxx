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
// The CPU backend: an exact SVD per matrix through LAPACK, matrices spread over worker threads.
#include "svdlrBackends.h"
#include "svdlrBlasThreads.h"
#include "svdlrLapack.h"
#include "svdlrParallel.h"
#include "svdlrProgress.h"
#include "svdlrRankSelection.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>

namespace svdlr
{
namespace detail
{
namespace
{

// One worker's workspace. A row-major rows x cols buffer is, read column-major, the cols x rows
// matrix B = Aᵀ. Reconstructing B in place of A needs no transpose: (B_k)ᵀ = A_k, and writing B_k
// column-major is writing A_k row-major.
template <typename T>
class MatrixReconstructor
{
public:
  MatrixReconstructor(std::size_t rows, std::size_t cols)
    : m_M(CheckedInt(cols))
    , m_N(CheckedInt(rows))
    , m_P(std::min(m_M, m_N))
    , m_A(static_cast<std::size_t>(m_M) * m_N)
    , m_S(m_P)
    , m_U(static_cast<std::size_t>(m_M) * m_P)
    , m_VT(static_cast<std::size_t>(m_P) * m_N)
    , m_IWork(8 * static_cast<std::size_t>(m_P))
  {
    T   query{};
    int info = lapack::gesdd(m_M, m_N, m_A.data(), m_S.data(), m_U.data(), m_VT.data(), &query, -1, m_IWork.data());
    std::size_t size = info == 0 ? static_cast<std::size_t>(query) : 0;
    info = lapack::gesvd(m_M, m_N, m_A.data(), m_S.data(), m_U.data(), m_VT.data(), &query, -1);
    size = std::max(size, info == 0 ? static_cast<std::size_t>(query) : 0);
    m_Work.resize(std::max<std::size_t>(size, 1));
  }

  /** Writes the reconstruction of `input` to `output` (which may alias it). Returns false, writing
   * nothing, when `input` holds NaN or Inf. */
  bool
  Reconstruct(const T * input, T * output, const RankPolicy & policy, std::size_t & rank,
              std::vector<double> & singularValues)
  {
    const std::size_t size = m_A.size();
    if (!std::all_of(input, input + size, [](T value) { return std::isfinite(value); }))
    {
      return false;
    }
    Decompose(input);
    singularValues.assign(m_S.begin(), m_S.end());
    rank = SelectRank(policy, singularValues.data(), singularValues.size());

    if (rank == 0)
    {
      std::fill(output, output + size, T(0));
      return true;
    }
    // U_k S_k: scale the first `rank` columns of U, then one GEMM with the first `rank` rows of Vᵀ.
    for (std::size_t l = 0; l < rank; ++l)
    {
      T * column = m_U.data() + l * m_M;
      std::transform(column, column + m_M, column, [s = m_S[l]](T u) { return u * s; });
    }
    lapack::gemm(m_M, m_N, static_cast<int>(rank), m_U.data(), m_M, m_VT.data(), m_P, output);
    return true;
  }

private:
  static int
  CheckedInt(std::size_t value)
  {
    if (value > static_cast<std::size_t>(std::numeric_limits<int>::max() / 8))
    {
      throw Error(ErrorCode::InvalidArgument, "svdlr: matrix dimension " + std::to_string(value) +
                                                " is too large for the LAPACK backend");
    }
    return static_cast<int>(value);
  }

  void
  Decompose(const T * input)
  {
    std::memcpy(m_A.data(), input, m_A.size() * sizeof(T));
    const int lwork = static_cast<int>(m_Work.size());
    if (lapack::gesdd(m_M, m_N, m_A.data(), m_S.data(), m_U.data(), m_VT.data(), m_Work.data(), lwork,
                      m_IWork.data()) == 0)
    {
      return;
    }
    // Divide and conquer failed to converge (rare): QR iteration on a fresh copy.
    std::memcpy(m_A.data(), input, m_A.size() * sizeof(T));
    const int info = lapack::gesvd(m_M, m_N, m_A.data(), m_S.data(), m_U.data(), m_VT.data(), m_Work.data(), lwork);
    if (info != 0)
    {
      throw Error(ErrorCode::NumericalFailure,
                  "svdlr: LAPACK gesdd and gesvd both failed to converge (info " + std::to_string(info) + ")");
    }
  }

  int               m_M;
  int               m_N;
  int               m_P;
  std::vector<T>    m_A;
  std::vector<T>    m_S;
  std::vector<T>    m_U;
  std::vector<T>    m_VT;
  std::vector<T>    m_Work;
  std::vector<int>  m_IWork;
};

// Collects what worker threads found, so the calling thread can throw one clear error.
class WorkerFailures
{
public:
  void
  NonFinite(std::size_t matrix)
  {
    const std::lock_guard<std::mutex> lock(m_Mutex);
    m_FirstNonFinite = std::min(m_FirstNonFinite.value_or(matrix), matrix);
  }
  void
  Exception(std::exception_ptr error)
  {
    const std::lock_guard<std::mutex> lock(m_Mutex);
    if (!m_Error)
    {
      m_Error = error;
    }
  }
  void
  ThrowIfAny() const
  {
    if (m_Error)
    {
      std::rethrow_exception(m_Error);
    }
    if (m_FirstNonFinite)
    {
      const std::size_t matrix = *m_FirstNonFinite;
      throw Error(ErrorCode::NonFiniteInput,
                  "svdlr: matrix " + std::to_string(matrix) + " contains NaN or Inf values",
                  static_cast<std::ptrdiff_t>(matrix));
    }
  }

private:
  std::mutex                 m_Mutex;
  std::optional<std::size_t> m_FirstNonFinite;
  std::exception_ptr         m_Error;
};

} // namespace

template <typename T>
void
RunCpu(const MatrixBatch<const T> & input, const MatrixBatch<T> & output, const Options & options, Report & report)
{
  const unsigned    workers = WorkerCount(options);
  const std::size_t count = input.count;
  // Batches only set how often progress is reported and abort is checked: a few matrices per worker.
  const std::size_t perBatch =
    options.maxMatricesPerBatch > 0 ? options.maxMatricesPerBatch : 4 * static_cast<std::size_t>(workers);
  const ParallelFor parallelFor =
    options.parallelFor ? options.parallelFor
                        : ParallelFor([workers](std::size_t n, const std::function<void(std::size_t)> & body) {
                            StdThreadParallelFor(workers, n, body);
                          });

  const SingleThreadedBlasScope                        singleThreadedBlas;
  std::vector<std::unique_ptr<MatrixReconstructor<T>>> reconstructors(workers);

  for (std::size_t begin = 0; begin < count; begin += perBatch)
  {
    const std::size_t end = std::min(count, begin + perBatch);
    const std::size_t lanes = std::min<std::size_t>(workers, end - begin);
    WorkerFailures    failures;

    // Lane l owns reconstructors[l] and handles matrices begin + l, begin + l + lanes, ...
    parallelFor(lanes, [&](std::size_t lane) {
      try
      {
        auto & reconstructor = reconstructors[lane];
        if (!reconstructor)
        {
          reconstructor = std::make_unique<MatrixReconstructor<T>>(input.rows, input.cols);
        }
        for (std::size_t i = begin + lane; i < end; i += lanes)
        {
          if (!reconstructor->Reconstruct(input.data + i * input.matrixStride, output.data + i * output.matrixStride,
                                          options.policy, report.ranks[i], report.singularValues[i]))
          {
            failures.NonFinite(i);
          }
        }
      }
      catch (...)
      {
        failures.Exception(std::current_exception());
      }
    });
    failures.ThrowIfAny();
    ReportProgress(options, end, count);
  }
}

template void
RunCpu<float>(const MatrixBatch<const float> &, const MatrixBatch<float> &, const Options &, Report &);
template void
RunCpu<double>(const MatrixBatch<const double> &, const MatrixBatch<double> &, const Options &, Report &);

} // namespace detail
} // namespace svdlr
