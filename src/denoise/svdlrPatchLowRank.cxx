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
#include "denoise/svdlrPatchLowRank.h"

#include "shared/svdlrLapack.h"
#include "noise/svdlrChooseRank.h"
#include "denoise/svdlrLocalDenoiseBackends.h" // ShrinksOptimally
#include "denoise/svdlrPatchKernels.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace svdlr
{
namespace detail
{

namespace
{

int
WorkspaceQuery(double query)
{
  return std::max(1, static_cast<int>(query));
}

// Gram orders from which the dense steps call BLAS and LAPACK instead of the kernels of svdlrPatchKernels.h, which
// stream X and G through L2 once per column: the Gram matrix and its sliding updates (dsyrk) and the approximation
// (dgemm) from kBlasFromOrder, the tridiagonal reduction (dsytrd, blocked) from kLapackTridiagonalFromOrder. Measured
// with svdlrDenoiseBenchmark, CPU, 2 threads, synthetic magnitude series: ours / level-3 BLAS / and dsytrd took
// 0.287 / 0.309 s at n = 65 (ours stays below 128), 0.671 / 0.645 s at 100, 1.69 / 1.33 / 1.24 s at 200, and
// 4.31 / 3.13 / 2.48 s at 500. dsyrk and dgemm are a few calls a patch; dsytrd makes about n calls of dsymv, each
// taking OpenBLAS's process-wide buffer lock (svdlrPatchKernels.h), so it waits for larger patches, where each call
// carries more work.
constexpr int kBlasFromOrder = 128;
constexpr int kLapackTridiagonalFromOrder = 320;

} // namespace

PatchLowRank::PatchLowRank(std::size_t voxels, std::size_t volumes, const LocalDenoiseOptions & options,
                           double marchenkoPasturMedian)
  : m_Options(options)
  , m_OptimalShrinkage(ShrinksOptimally(options))
  , m_Median(marchenkoPasturMedian)
  , m_M(static_cast<int>(voxels))
  , m_N(static_cast<int>(volumes))
  , m_P(std::min(m_M, m_N))
  , m_VolumeSide(m_N <= m_M)
  , m_UsesBlas(m_P >= kBlasFromOrder)
  , m_UsesLapackTridiagonal(m_P >= kLapackTridiagonalFromOrder)
  , m_X(voxels * volumes)
  , m_Running(static_cast<std::size_t>(m_P) * m_P)
  , m_Gram(static_cast<std::size_t>(m_P) * m_P)
  , m_Diagonal(m_P)
  , m_Offdiag(m_P)
  , m_Tau(m_P)
  , m_Eigen(m_P)
  , m_Scratch(m_P)
  , m_Approx(voxels * volumes)
{
  // One workspace for every step of a patch: the largest that any of them asks for (dstein: 5p; the reduction to
  // tridiagonal form: 2p; the dsyevd fallback: what it says).
  double syevdQuery = 0.0;
  int    syevdIQuery = 0;
  lapack::syevd(m_P, m_Gram.data(), m_Eigen.data(), &syevdQuery, -1, &syevdIQuery, -1);
  const int work = std::max(WorkspaceQuery(syevdQuery), 5 * m_P);
  m_Work.resize(static_cast<std::size_t>(work));
  if (m_VolumeSide)
  {
    m_Rows.resize(2 * voxels * volumes); // room for the rows that leave and those that enter
  }
  m_OuterWeights.assign(std::max(2 * voxels, volumes), 1.0);
  // dstein: iwork (p), ifail (p), iblock (p), isplit (p).
  m_IWork.resize(static_cast<std::size_t>(std::max(syevdIQuery, 4 * m_P)));
}

void
PatchLowRank::FormGram()
{
  std::fill(m_Running.begin(), m_Running.end(), 0.0);
  if (m_UsesBlas) // X is m x n with leading dimension m: XᵀX on the volume side, XXᵀ on the voxel side
  {
    lapack::syrkLower(m_VolumeSide ? 'T' : 'N', m_P, m_VolumeSide ? m_M : m_N, m_X.data(), m_M, m_Running.data());
  }
  else if (m_VolumeSide)
  {
    AddOuterProductsLower(m_P, m_M, m_OuterWeights.data(), RowsOfX(0, m_M, 0), m_N, m_Running.data()); // XᵀX
  }
  else
  {
    AddOuterProductsLower(m_P, m_N, m_OuterWeights.data(), m_X.data(), m_M, m_Running.data()); // XXᵀ: (m, m)
  }
  m_Replacements = 0;
}

void
PatchLowRank::Decompose()
{
  FormGram();
  Tridiagonalize();
  PatchLowRank * self = this;
  FinishEigenvalues(&self, 1);
}

const double *
PatchLowRank::RowsOfX(int first, int count, int destination)
{
  const std::size_t m = static_cast<std::size_t>(m_M), n = static_cast<std::size_t>(m_N);
  double *          rows = m_Rows.data() + static_cast<std::size_t>(destination) * n;
  for (std::size_t t = 0; t < n; ++t)
  {
    const double * column = m_X.data() + t * m + first;
    for (std::size_t r = 0; r < static_cast<std::size_t>(count); ++r)
    {
      rows[r * n + t] = column[r];
    }
  }
  return rows;
}

void
PatchLowRank::RemoveRows(int first, int count)
{
  RowsOfX(first, count, 0); // kept until AddRows, which updates G for both in one pass
  m_RowsLeaving = count;
}

void
PatchLowRank::AddRows(int first, int count)
{
  RowsOfX(first, count, m_RowsLeaving);
  if (m_UsesBlas) // the rows, n values each, are the columns of an n x rows matrix with leading dimension n
  {
    lapack::syrkLowerUpdate('N', m_P, m_RowsLeaving, -1.0, m_Rows.data(), m_N, m_Running.data());
    lapack::syrkLowerUpdate('N', m_P, count, 1.0, m_Rows.data() + static_cast<std::size_t>(m_RowsLeaving) * m_N, m_N,
                            m_Running.data());
  }
  else
  {
    double * weights = m_OuterWeights.data();
    std::fill(weights, weights + m_RowsLeaving, -1.0);
    AddOuterProductsLower(m_P, m_RowsLeaving + count, weights, m_Rows.data(), m_N, m_Running.data());
    std::fill(weights, weights + m_RowsLeaving, 1.0);
  }
  m_RowsLeaving = 0;
  ++m_Replacements;
}

void
PatchLowRank::CopyGramFrom(const PatchLowRank & other)
{
  std::copy(other.m_X.begin(), other.m_X.end(), m_X.begin());
  std::copy(other.m_Running.begin(), other.m_Running.end(), m_Running.begin());
  m_Replacements = other.m_Replacements;
}

void
PatchLowRank::Tridiagonalize()
{
  m_Chosen = false;
  m_FullyDecomposed = false;
  m_EigenvaluesPending = false;
  // G's lower triangle, mirrored: the reduction works on both triangles.
  const std::size_t p = static_cast<std::size_t>(m_P);
  for (std::size_t j = 0; j < p; ++j)
  {
    for (std::size_t i = j; i < p; ++i)
    {
      m_Gram[i + j * p] = m_Running[i + j * p];
      m_Gram[j + i * p] = m_Running[i + j * p];
    }
  }
  const bool reduced =
    m_UsesLapackTridiagonal
      ? TridiagonalizeByLapack()
      : TridiagonalizeSymmetric(m_P, m_Gram.data(), m_Diagonal.data(), m_Offdiag.data(), m_Tau.data(), m_Work.data());
  if (!reduced)
  {
    DecomposeFully();
    return;
  }
  std::copy(m_Diagonal.begin(), m_Diagonal.end(), m_Eigen.begin());
  std::copy(m_Offdiag.begin(), m_Offdiag.end(), m_Scratch.begin());
  m_EigenvaluesPending = true;
}

bool
PatchLowRank::TridiagonalizeByLapack()
{
  // dsytrd keeps Q as TridiagonalizeSymmetric does (dsytd2's reflectors), for ApplyTridiagonalQ; blocked, half of
  // its work is dsyr2k. It signals no overflow: a non-finite T sends the patch to DecomposeFully as ours does.
  if (lapack::sytrdLower(m_P, m_Gram.data(), m_Diagonal.data(), m_Offdiag.data(), m_Tau.data(), m_Work.data(),
                         static_cast<int>(m_Work.size())) != 0)
  {
    return false;
  }
  for (int i = 0; i < m_P; ++i)
  {
    if (!std::isfinite(m_Diagonal[i]) || (i + 1 < m_P && !std::isfinite(m_Offdiag[i])))
    {
      return false;
    }
  }
  return true;
}

void
PatchLowRank::EigenvaluesBySterf()
{
  std::copy(m_Diagonal.begin(), m_Diagonal.end(), m_Eigen.begin());
  std::copy(m_Offdiag.begin(), m_Offdiag.end(), m_Scratch.begin());
  m_EigenvaluesPending = false;
  if (lapack::sterf(m_P, m_Eigen.data(), m_Scratch.data()) != 0)
  {
    DecomposeFully();
  }
}

void
PatchLowRank::FinishEigenvalues(PatchLowRank * const * patches, int count)
{
  PatchLowRank * pending[kTridiagonalBatch];
  double *       diagonals[kTridiagonalBatch];
  double *       offdiagonals[kTridiagonalBatch];
  int            found = 0;
  for (int k = 0; k < count; ++k)
  {
    if (patches[k]->m_EigenvaluesPending)
    {
      pending[found] = patches[k];
      diagonals[found] = patches[k]->m_Eigen.data();
      offdiagonals[found] = patches[k]->m_Scratch.data();
      ++found;
    }
    if (found == kTridiagonalBatch || (k + 1 == count && found > 0))
    {
      // One matrix alone goes to dsterf, which is faster than the QL sweep without a partner.
      const bool interleaved = found > 1 && TridiagonalEigenvalues(pending[0]->m_P, diagonals, offdiagonals, found);
      for (int j = 0; j < found; ++j)
      {
        if (interleaved)
        {
          pending[j]->m_EigenvaluesPending = false;
        }
        else
        {
          pending[j]->EigenvaluesBySterf();
        }
      }
      found = 0;
    }
  }
}

void
PatchLowRank::DecomposeFully()
{
  std::copy(m_Running.begin(), m_Running.end(), m_Gram.begin());
  if (lapack::syevd(m_P,
                    m_Gram.data(),
                    m_Eigen.data(),
                    m_Work.data(),
                    static_cast<int>(m_Work.size()),
                    m_IWork.data(),
                    static_cast<int>(m_IWork.size())) != 0)
  {
    throw Error(ErrorCode::NumericalFailure,
                "svdlr: LAPACK dsyevd failed to converge on a patch's Gram matrix of order " + std::to_string(m_P));
  }
  m_FullyDecomposed = true;
  m_EigenvaluesPending = false;
}

void
PatchLowRank::Choose(double knownSigma)
{
  if (m_Chosen && knownSigma == m_ChosenFor)
  {
    return;
  }
  const std::size_t previousRank = m_Chosen ? m_Rank : static_cast<std::size_t>(-1);
  ChooseRankOnly(knownSigma);
  const PatchNoiseShape shape = NoiseShapeOf(m_M, m_N, static_cast<int>(m_Options.removedVolumeDimensions));
  if (m_Rank != previousRank)
  {
    KeptComponents();
  }

  m_Weights.resize(m_Rank);
  for (std::size_t j = 0; j < m_Rank; ++j)
  {
    const double eigenvalue = m_Eigen[m_P - m_Rank + j];
    const double singular = std::sqrt(std::max(eigenvalue, 0.0));
    double       weight = 1.0;
    if (m_OptimalShrinkage)
    {
      weight = singular > 0.0 ? OptimalFrobeniusShrinkage(singular, m_Sigma, shape.rows, shape.cols) / singular : 0.0;
    }
    m_Weights[j] = weight;
  }
  m_Chosen = true;
  m_ChosenFor = knownSigma;
}

void
PatchLowRank::ChooseRankOnly(double knownSigma)
{
  const PatchNoiseShape shape = NoiseShapeOf(m_M, m_N, static_cast<int>(m_Options.removedVolumeDimensions));
  const NoiseRank       decided =
    ChoosePatchRank(m_Options.policy, m_Options.noiseEstimator, m_Eigen.data(), m_P, shape, knownSigma, m_Median);
  m_Rank = static_cast<std::size_t>(decided.rank);
  m_Sigma = decided.sigma;
  m_Chosen = false; // the components are not prepared
}

void
PatchLowRank::KeptComponents()
{
  const int rank = static_cast<int>(m_Rank);
  m_Basis.resize(static_cast<std::size_t>(m_P) * m_Rank);
  if (rank == 0)
  {
    return;
  }
  if (!m_FullyDecomposed)
  {
    const std::size_t p = static_cast<std::size_t>(m_P);
    int *             iwork = m_IWork.data();
    const int         info = lapack::steinUnsplit(m_P,
                                          m_Diagonal.data(),
                                          m_Offdiag.data(),
                                          rank,
                                          m_Eigen.data() + (m_P - rank),
                                          m_Basis.data(),
                                          m_Work.data(),
                                          iwork,
                                          iwork + 2 * p,
                                          iwork + 3 * p);
    if (info == 0)
    {
      ApplyTridiagonalQ(m_P, rank, m_Gram.data(), m_Tau.data(), m_Basis.data(), m_P);
      return;
    }
    // Inverse iteration did not converge for some eigenvector (tight clusters): the full decomposition instead.
    // Its eigenvalues agree with dsterf's to rounding; keep dsterf's, from which the rank was chosen.
    std::vector<double> chosenEigenvalues = m_Eigen;
    DecomposeFully();
    m_Eigen = chosenEigenvalues;
  }
  const double * leading = m_Gram.data() + static_cast<std::size_t>(m_P - rank) * m_P;
  std::copy(leading, leading + m_Basis.size(), m_Basis.begin());
}

void
PatchLowRank::ApproximateRow(int voxel, double * out)
{
  const std::size_t m = static_cast<std::size_t>(m_M), n = static_cast<std::size_t>(m_N);
  const std::size_t p = static_cast<std::size_t>(m_P), rank = m_Rank;
  std::fill(out, out + n, 0.0);
  if (m_VolumeSide)
  {
    // x V W Vᵀ with x the voxel's row of X.
    for (std::size_t j = 0; j < rank; ++j)
    {
      const double * v = m_Basis.data() + j * p;
      double         projection = 0.0;
      for (std::size_t t = 0; t < n; ++t)
      {
        projection += m_X[voxel + t * m] * v[t];
      }
      projection *= m_Weights[j];
      for (std::size_t t = 0; t < n; ++t)
      {
        out[t] += projection * v[t];
      }
    }
    return;
  }
  // (U W Uᵀ)_{voxel,:} X: first the voxel's row of U W Uᵀ, then its combination of X's rows.
  std::vector<double> & coefficients = m_Scratch; // (m = p)
  std::fill(coefficients.begin(), coefficients.end(), 0.0);
  for (std::size_t j = 0; j < rank; ++j)
  {
    const double * u = m_Basis.data() + j * p;
    const double   scale = u[voxel] * m_Weights[j];
    for (std::size_t i = 0; i < m; ++i)
    {
      coefficients[i] += scale * u[i];
    }
  }
  for (std::size_t t = 0; t < n; ++t)
  {
    const double * column = m_X.data() + t * m;
    double         sum = 0.0;
    for (std::size_t i = 0; i < m; ++i)
    {
      sum += coefficients[i] * column[i];
    }
    out[t] = sum;
  }
}

const double *
PatchLowRank::ApproximateAll()
{
  const int rank = static_cast<int>(m_Rank);
  if (rank == 0)
  {
    std::fill(m_Approx.begin(), m_Approx.end(), 0.0);
    return m_Approx.data();
  }
  m_Product.resize(static_cast<std::size_t>(std::max(m_M, m_N)) * m_Rank);
  double *          product = m_Product.data();
  const std::size_t m = static_cast<std::size_t>(m_M), p = static_cast<std::size_t>(m_P);
  if (m_VolumeSide)
  {
    if (m_UsesBlas)
    {
      lapack::gemm('N', 'N', m_M, rank, m_N, m_X.data(), m_M, m_Basis.data(), m_P, product, m_M);
    }
    else
    {
      MultiplyByColumns(m_M, rank, m_N, m_X.data(), m_M, m_Basis.data(), 1, m_P, product); // X V: (m, rank)
    }
    for (int j = 0; j < rank; ++j)
    {
      double * column = product + static_cast<std::size_t>(j) * m;
      std::transform(column, column + m, column, [w = m_Weights[j]](double value) { return value * w; });
    }
    if (m_UsesBlas)
    {
      lapack::gemm('N', 'T', m_M, m_N, rank, product, m_M, m_Basis.data(), m_P, m_Approx.data(), m_M);
    }
    else
    {
      MultiplyByColumns(m_M, m_N, rank, product, m_M, m_Basis.data(), m_P, 1, m_Approx.data()); // (X V W) Vᵀ: (m, n)
    }
  }
  else
  {
    for (int t = 0; t < m_N; ++t) // W Uᵀ X: (rank, n)
    {
      for (int j = 0; j < rank; ++j)
      {
        product[j + static_cast<std::size_t>(t) * rank] =
          m_Weights[j] * Dot(m_M, m_Basis.data() + j * p, m_X.data() + t * m);
      }
    }
    MultiplyByColumns(m_M, m_N, rank, m_Basis.data(), m_P, product, 1, rank, m_Approx.data()); // U (W Uᵀ X): (m, n)
  }
  return m_Approx.data();
}

} // namespace detail
} // namespace svdlr
