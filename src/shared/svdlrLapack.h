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
#ifndef svdlr_Lapack_h
#define svdlr_Lapack_h

// Typed C++ wrappers over the Fortran LAPACK/BLAS routines the CPU backend needs. We declare the
// symbols ourselves so any LAPACK works (OpenBLAS, reference, MKL) without LAPACKE. gfortran-built
// libraries take the lengths of character arguments as trailing hidden size_t parameters.

#include <cstddef>
#include <type_traits>

extern "C"
{
  void
  sgesdd_(const char * jobz, const int * m, const int * n, float * a, const int * lda, float * s, float * u,
          const int * ldu, float * vt, const int * ldvt, float * work, const int * lwork, int * iwork, int * info,
          std::size_t jobzLength);
  void
  dgesdd_(const char * jobz, const int * m, const int * n, double * a, const int * lda, double * s, double * u,
          const int * ldu, double * vt, const int * ldvt, double * work, const int * lwork, int * iwork, int * info,
          std::size_t jobzLength);
  void
  sgesvd_(const char * jobu, const char * jobvt, const int * m, const int * n, float * a, const int * lda, float * s,
          float * u, const int * ldu, float * vt, const int * ldvt, float * work, const int * lwork, int * info,
          std::size_t jobuLength, std::size_t jobvtLength);
  void
  dgesvd_(const char * jobu, const char * jobvt, const int * m, const int * n, double * a, const int * lda,
          double * s, double * u, const int * ldu, double * vt, const int * ldvt, double * work, const int * lwork,
          int * info, std::size_t jobuLength, std::size_t jobvtLength);
  void
  sgemm_(const char * transa, const char * transb, const int * m, const int * n, const int * k, const float * alpha,
         const float * a, const int * lda, const float * b, const int * ldb, const float * beta, float * c,
         const int * ldc, std::size_t transaLength, std::size_t transbLength);
  void
  dgemm_(const char * transa, const char * transb, const int * m, const int * n, const int * k, const double * alpha,
         const double * a, const int * lda, const double * b, const int * ldb, const double * beta, double * c,
         const int * ldc, std::size_t transaLength, std::size_t transbLength);
  void
  dsyrk_(const char * uplo, const char * trans, const int * n, const int * k, const double * alpha, const double * a,
         const int * lda, const double * beta, double * c, const int * ldc, std::size_t uploLength,
         std::size_t transLength);
  void
  dsyevd_(const char * jobz, const char * uplo, const int * n, double * a, const int * lda, double * w, double * work,
          const int * lwork, int * iwork, const int * liwork, int * info, std::size_t jobzLength,
          std::size_t uploLength);
  void
  dsytrd_(const char * uplo, const int * n, double * a, const int * lda, double * d, double * e, double * tau,
          double * work, const int * lwork, int * info, std::size_t uploLength);
  void
  dsterf_(const int * n, double * d, double * e, int * info);
  void
  dstein_(const int * n, const double * d, const double * e, const int * m, const double * w, const int * iblock,
          const int * isplit, double * z, const int * ldz, double * work, int * iwork, int * ifail, int * info);
}

namespace svdlr
{
namespace detail
{
namespace lapack
{

// The single-precision routine for float, the double-precision one for double.
template <typename T, typename TSingle, typename TDouble>
constexpr auto
ForType(TSingle single, TDouble doublePrecision)
{
  if constexpr (std::is_same_v<T, float>)
  {
    return single;
  }
  else
  {
    return doublePrecision;
  }
}

// Column-major SVD of the m x n matrix a (destroyed): s (min(m,n)), u (m x min), vt (min x n).
// lwork == -1 is a workspace query (the optimal size is returned in work[0]). Returns LAPACK's info.
template <typename T>
int
gesdd(int m, int n, T * a, T * s, T * u, T * vt, T * work, int lwork, int * iwork)
{
  int       info = 0;
  const int p = m < n ? m : n;
  ForType<T>(sgesdd_, dgesdd_)("S", &m, &n, a, &m, s, u, &m, vt, &p, work, &lwork, iwork, &info, 1);
  return info;
}

// The QR-iteration SVD: slower than gesdd's divide and conquer, but it converges in cases where gesdd does not.
template <typename T>
int
gesvd(int m, int n, T * a, T * s, T * u, T * vt, T * work, int lwork)
{
  int       info = 0;
  const int p = m < n ? m : n;
  ForType<T>(sgesvd_, dgesvd_)("S", "S", &m, &n, a, &m, s, u, &m, vt, &p, work, &lwork, &info, 1, 1);
  return info;
}

// c (m x n, ld m) = a (m x k, ld lda) * b (k x n, ld ldb), all column-major.
template <typename T>
void
gemm(int m, int n, int k, const T * a, int lda, const T * b, int ldb, T * c)
{
  const T one = 1, zero = 0;
  ForType<T>(sgemm_, dgemm_)("N", "N", &m, &n, &k, &one, a, &lda, b, &ldb, &zero, c, &m, 1, 1);
}

// c (m x n, ld ldc) = op(a) * op(b), op(x) = x ('N') or xᵀ ('T'); op(a) is m x k, op(b) is k x n.
inline void
gemm(char transa, char transb, int m, int n, int k, const double * a, int lda, const double * b, int ldb, double * c,
     int ldc)
{
  const double one = 1.0, zero = 0.0;
  dgemm_(&transa, &transb, &m, &n, &k, &one, a, &lda, b, &ldb, &zero, c, &ldc, 1, 1);
}

// The lower triangle of c (n x n, ld n) = aᵀa for a k x n ('T'), or a aᵀ for a n x k ('N'); a has ld lda.
inline void
syrkLower(char trans, int n, int k, const double * a, int lda, double * c)
{
  const double one = 1.0, zero = 0.0;
  dsyrk_("L", &trans, &n, &k, &one, a, &lda, &zero, c, &n, 1, 1);
}

// The lower triangle of c (n x n, ld n) += alpha aᵀa for a k x n ('T'), or alpha a aᵀ for a n x k ('N').
inline void
syrkLowerUpdate(char trans, int n, int k, double alpha, const double * a, int lda, double * c)
{
  const double one = 1.0;
  dsyrk_("L", &trans, &n, &k, &alpha, a, &lda, &one, c, &n, 1, 1);
}

// Divide-and-conquer eigen-decomposition of the symmetric n x n matrix a (ld n, lower triangle read):
// eigenvalues w ascending, orthonormal eigenvectors overwrite a's columns. lwork == liwork == -1 is a
// workspace query (sizes returned in work[0] and iwork[0]). Returns LAPACK's info.
inline int
syevd(int n, double * a, double * w, double * work, int lwork, int * iwork, int liwork)
{
  int info = 0;
  dsyevd_("V", "L", &n, a, &n, w, work, &lwork, iwork, &liwork, &info, 1, 1);
  return info;
}

// The pieces of an eigen-decomposition, for callers that need every eigenvalue but only a few eigenvectors (the
// local denoiser): reduce to tridiagonal form, take the eigenvalues of that, then the wanted eigenvectors of the
// tridiagonal matrix by inverse iteration, then back to the original basis.

// Householder reduction of the symmetric n x n matrix a (ld n, lower triangle) to T = Qᵀ a Q: diagonal d (n),
// subdiagonal e (n - 1); a's lower triangle and tau (n - 1) keep Q. lwork == -1 is a workspace query.
inline int
sytrdLower(int n, double * a, double * d, double * e, double * tau, double * work, int lwork)
{
  int info = 0;
  dsytrd_("L", &n, a, &n, d, e, tau, work, &lwork, &info, 1);
  return info;
}

// Every eigenvalue of the tridiagonal (d, e), ascending, into d (e is destroyed); no eigenvectors.
inline int
sterf(int n, double * d, double * e)
{
  int info = 0;
  dsterf_(&n, d, e, &info);
  return info;
}

// Eigenvectors z (n x m, ld n) of the unsplit tridiagonal (d, e) for its m eigenvalues w (ascending), by inverse
// iteration with reorthogonalisation inside clusters. work: 5n doubles, iwork: n + m ints (the last m: ifail).
inline int
steinUnsplit(int n, const double * d, const double * e, int m, const double * w, double * z, double * work,
             int * iwork, int * iblock, int * isplit)
{
  // One block: every eigenvalue belongs to block 1, which ends at row n.
  for (int i = 0; i < m; ++i)
  {
    iblock[i] = 1;
  }
  isplit[0] = n;
  int info = 0;
  dstein_(&n, d, e, &m, w, iblock, isplit, z, &n, work, iwork, iwork + n, &info);
  return info;
}

} // namespace lapack
} // namespace detail
} // namespace svdlr

#endif
