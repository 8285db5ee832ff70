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
// The CPU backend: an exact decomposition per matrix through LAPACK, matrices spread over worker threads
// (float32: eigen-decomposition of the float64 Gram matrix; float64: the SVD).
#include "shared/svdlrBackends.h"
#include "shared/svdlrBlasThreads.h"
#include "shared/svdlrLapack.h"
#include "shared/svdlrParallel.h"
#include "noise/svdlrRankSelection.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>

namespace svdlr
{
namespace detail
{
namespace
{

int
CheckedInt(std::size_t value)
{
  if (value > static_cast<std::size_t>(std::numeric_limits<int>::max() / 8))
  {
    throw Error(ErrorCode::InvalidArgument,
                "svdlr: matrix dimension " + std::to_string(value) + " is too large for the LAPACK backend");
  }
  return static_cast<int>(value);
}

// One worker's workspace for one matrix shape. A row-major rows x cols buffer is, read column-major, the
// cols x rows matrix B = Aᵀ. Reconstructing B in place of A needs no transpose: (B_k)ᵀ = A_k, and writing
// B_k column-major is writing A_k row-major.
template <typename T>
class Reconstructor
{
public:
  Reconstructor(std::size_t rows, std::size_t cols)
    : m_M(CheckedInt(cols))
    , m_N(CheckedInt(rows))
    , m_P(std::min(m_M, m_N))
  {}
  virtual ~Reconstructor() = default;
  Reconstructor(const Reconstructor &) = delete;
  Reconstructor &
  operator=(const Reconstructor &) = delete;

  /** Writes the reconstruction of `input` to `output` (which may alias it). Returns false, writing
   * nothing, when `input` holds NaN or Inf. */
  bool
  Reconstruct(const T * input, T * output, const RankPolicy & policy, std::size_t & rank, double & noiseSigma,
              std::vector<double> & singularValues)
  {
    const std::size_t size = static_cast<std::size_t>(m_M) * m_N;
    if (!std::all_of(input, input + size, [](T value) { return std::isfinite(value); }))
    {
      return false;
    }
    Decompose(input, singularValues);
    // B is the cols x rows transpose of the matrix: the noise thresholds are symmetric in the two sides.
    const RankChoice choice = SelectRank(policy, singularValues.data(), singularValues.size(), m_N, m_M);
    rank = choice.rank;
    noiseSigma = choice.noiseSigma;
    if (rank == 0)
    {
      std::fill(output, output + size, T(0));
      return true;
    }
    Product(static_cast<int>(rank), output);
    return true;
  }

  /** Factorises the m x n matrix B: all p = min(m, n) singular values, descending. */
  virtual void
  Decompose(const T * input, std::vector<double> & singularValues) = 0;
  /** Writes B_k, 1 <= k <= p, from the last Decompose. */
  virtual void
  Product(int k, T * output) = 0;

protected:
  int m_M;
  int m_N;
  int m_P;
};

// The exact SVD of B in the working precision: LAPACK gesdd, gesvd where gesdd fails to converge.
template <typename T>
class SvdReconstructor : public Reconstructor<T>
{
public:
  SvdReconstructor(std::size_t rows, std::size_t cols)
    : Reconstructor<T>(rows, cols)
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

  void
  Decompose(const T * input, std::vector<double> & singularValues) override
  {
    std::memcpy(m_A.data(), input, m_A.size() * sizeof(T));
    const int lwork = static_cast<int>(m_Work.size());
    if (lapack::gesdd(
          m_M, m_N, m_A.data(), m_S.data(), m_U.data(), m_VT.data(), m_Work.data(), lwork, m_IWork.data()) != 0)
    {
      // Divide and conquer failed to converge (rare): QR iteration on a fresh copy.
      std::memcpy(m_A.data(), input, m_A.size() * sizeof(T));
      const int info = lapack::gesvd(m_M, m_N, m_A.data(), m_S.data(), m_U.data(), m_VT.data(), m_Work.data(), lwork);
      if (info != 0)
      {
        throw Error(ErrorCode::NumericalFailure,
                    "svdlr: LAPACK gesdd and gesvd both failed to converge (info " + std::to_string(info) + ")");
      }
    }
    singularValues.assign(m_S.begin(), m_S.end());
  }

  void
  Product(int k, T * output) override
  {
    // U_k S_k: scale the first k columns of U, then one GEMM with the first k rows of Vᵀ.
    for (int l = 0; l < k; ++l)
    {
      T * column = m_U.data() + static_cast<std::size_t>(l) * m_M;
      std::transform(column, column + m_M, column, [s = m_S[l]](T u) { return u * s; });
    }
    lapack::gemm(m_M, m_N, k, m_U.data(), m_M, m_VT.data(), m_P, output);
  }

private:
  using Reconstructor<T>::m_M;
  using Reconstructor<T>::m_N;
  using Reconstructor<T>::m_P;

  std::vector<T>   m_A;
  std::vector<T>   m_S;
  std::vector<T>   m_U;
  std::vector<T>   m_VT;
  std::vector<T>   m_Work;
  std::vector<int> m_IWork;
};

// float32 input through the float64 Gram matrix of B's smaller side, as the CUDA backend does: G = BᵀB
// (n <= m) or BBᵀ, whose eigenvalues are the squared singular values and whose leading eigenvectors
// span the leading right (or left) singular subspace W_k. Then B_k = B W_k W_kᵀ (or W_k W_kᵀ B), all in
// float64. Squaring costs float64 about half its digits, which still leaves every singular value and the
// reconstruction more accurate than a float32 SVD; a rank-deficient B loses nothing representable in float32.
class GramReconstructor : public Reconstructor<float>
{
public:
  GramReconstructor(std::size_t rows, std::size_t cols)
    : Reconstructor<float>(rows, cols)
    , m_B(static_cast<std::size_t>(m_M) * m_N)
    , m_Gram(static_cast<std::size_t>(m_P) * m_P)
    , m_Eigenvalues(m_P)
    , m_Projected(static_cast<std::size_t>(m_M) * m_N)
  {
    double work = 0.0;
    int    iwork = 0;
    if (lapack::syevd(m_P, m_Gram.data(), m_Eigenvalues.data(), &work, -1, &iwork, -1) != 0)
    {
      throw Error(ErrorCode::NumericalFailure, "svdlr: LAPACK dsyevd workspace query failed");
    }
    m_Work.resize(std::max<std::size_t>(static_cast<std::size_t>(work), 1));
    m_IWork.resize(std::max(iwork, 1));
  }

  void
  Decompose(const float * input, std::vector<double> & singularValues) override
  {
    m_Fallback = false;
    std::copy(input, input + m_B.size(), m_B.begin());
    const bool rightSide = m_N <= m_M; // G = BᵀB (n x n), else BBᵀ (m x m)
    lapack::syrkLower(rightSide ? 'T' : 'N', m_P, rightSide ? m_M : m_N, m_B.data(), m_M, m_Gram.data());
    if (lapack::syevd(m_P,
                      m_Gram.data(),
                      m_Eigenvalues.data(),
                      m_Work.data(),
                      static_cast<int>(m_Work.size()),
                      m_IWork.data(),
                      static_cast<int>(m_IWork.size())) != 0)
    {
      // The eigen-solver failed to converge (rare): the float32 SVD instead.
      if (!m_Svd)
      {
        m_Svd = std::make_unique<SvdReconstructor<float>>(static_cast<std::size_t>(m_N), static_cast<std::size_t>(m_M));
      }
      m_Svd->Decompose(input, singularValues);
      m_Fallback = true;
      return;
    }
    SingularValuesFromGramEigenvalues(m_Eigenvalues.data(), m_Eigenvalues.size(), singularValues);
  }

  void
  Product(int k, float * output) override
  {
    if (m_Fallback)
    {
      m_Svd->Product(k, output);
      return;
    }
    const double * w = m_Gram.data() + static_cast<std::size_t>(m_P - k) * m_P; // (p, k): the k largest
    if (m_N <= m_M)
    {
      lapack::gemm('N', 'N', m_M, k, m_N, m_B.data(), m_M, w, m_P, m_Projected.data(), m_M); // B W: (m, k)
      lapack::gemm('N', 'T', m_M, m_N, k, m_Projected.data(), m_M, w, m_P, m_B.data(), m_M); // B W Wᵀ: (m, n)
    }
    else
    {
      lapack::gemm('T', 'N', k, m_N, m_M, w, m_P, m_B.data(), m_M, m_Projected.data(), k); // Wᵀ B: (k, n)
      lapack::gemm('N', 'N', m_M, m_N, k, w, m_P, m_Projected.data(), k, m_B.data(), m_M); // W Wᵀ B: (m, n)
    }
    std::transform(m_B.begin(), m_B.end(), output, [](double value) { return static_cast<float>(value); });
  }

private:
  std::vector<double>                      m_B;    // B, then B_k
  std::vector<double>                      m_Gram; // the Gram matrix, then its eigenvectors (p, p)
  std::vector<double>                      m_Eigenvalues;
  std::vector<double>                      m_Projected;
  std::vector<double>                      m_Work;
  std::vector<int>                         m_IWork;
  std::unique_ptr<SvdReconstructor<float>> m_Svd;
  bool                                     m_Fallback{ false };
};

// float32 goes through the float64 Gram matrix: faster than sgesdd and as accurate as float32 output can be.
// float64 keeps the SVD, since squaring would cost it digits that its output can show.
template <typename T>
std::unique_ptr<Reconstructor<T>>
MakeReconstructor(std::size_t rows, std::size_t cols)
{
  if constexpr (std::is_same_v<T, float>)
  {
    return std::make_unique<GramReconstructor>(rows, cols);
  }
  else
  {
    return std::make_unique<SvdReconstructor<T>>(rows, cols);
  }
}

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
  const unsigned    workers = WorkerCount(options.threads);
  const std::size_t count = input.count;
  // Batches only set how often progress is reported and abort is checked: a few matrices per worker.
  const std::size_t perBatch =
    options.maxMatricesPerBatch > 0 ? options.maxMatricesPerBatch : 4 * static_cast<std::size_t>(workers);
  const ParallelFor parallelFor =
    ParallelForOrThreads(options.parallelFor, workers);

  std::vector<std::unique_ptr<Reconstructor<T>>> reconstructors(workers);

  for (std::size_t begin = 0; begin < count; begin += perBatch)
  {
    const std::size_t end = std::min(count, begin + perBatch);
    const std::size_t lanes = std::min<std::size_t>(workers, end - begin);
    WorkerFailures    failures;
    // The workers no lane needs lend their cores to the lanes' BLAS calls: one matrix gets them all, while
    // a batch with a lane per worker keeps every call on one thread.
    const BlasThreadsScope blasThreads(static_cast<int>(workers / lanes));

    // Lane l owns reconstructors[l] and handles matrices begin + l, begin + l + lanes, ...
    parallelFor(lanes, [&](std::size_t lane) {
      try
      {
        auto & reconstructor = reconstructors[lane];
        if (!reconstructor)
        {
          reconstructor = MakeReconstructor<T>(input.rows, input.cols);
        }
        for (std::size_t i = begin + lane; i < end; i += lanes)
        {
          if (!reconstructor->Reconstruct(input.data + i * input.matrixStride,
                                          output.data + i * output.matrixStride,
                                          options.policy,
                                          report.ranks[i],
                                          report.noiseSigmas[i],
                                          report.singularValues[i]))
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
    ReportProgress(options.progress, end, count, "matrices");
  }
}

template void
RunCpu<float>(const MatrixBatch<const float> &, const MatrixBatch<float> &, const Options &, Report &);
template void
RunCpu<double>(const MatrixBatch<const double> &, const MatrixBatch<double> &, const Options &, Report &);

} // namespace detail
} // namespace svdlr
