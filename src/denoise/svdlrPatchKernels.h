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
#ifndef svdlr_PatchKernels_h
#define svdlr_PatchKernels_h

// The dense steps of the CPU denoiser's work on one patch (PatchLowRank), written here instead of called from
// BLAS and LAPACK. The matrices are small (65 x 65 for a 5x5x5 patch of 65 volumes) and every worker thread runs
// them thousands of times a second. OpenBLAS 0.3 takes one process-wide mutex for a scratch buffer in each call
// of dsymv, dsyr2, dtrmv and every level-3 routine: dsytrd, dormtr and dsyrk made about 137 such calls per patch,
// and with more than two threads the workers queued on that lock (1 -> 16 threads gave 1.2x
// with LAPACK). These kernels allocate nothing and take no lock. Each is the textbook algorithm that its
// LAPACK counterpart also implements, so results agree with LAPACK's to rounding.
//
// Matrices are column-major with the leading dimension given (or the order, where none is).

#include <cstddef>

namespace svdlr
{
namespace detail
{

/** G += sum over r < count of weights[r] v_r v_rᵀ, lower triangle of G (order n, leading dimension n) only, where
 * v_r is the n contiguous values at vectors + r * stride. With v_r the rows of X and weights 1 this is G += XᵀX (the
 * Gram matrix of the volumes; weights -1 for rows that leave the patch and 1 for those that enter update it); with
 * v_r the columns of X, G += XXᵀ. */
void
AddOuterProductsLower(int n, int count, const double * weights, const double * vectors, std::ptrdiff_t stride,
                      double * g);

/** Reduces the symmetric matrix A (order n, both triangles stored) to tridiagonal form T = Qᵀ A Q, as LAPACK's
 * dsytd2 with uplo = 'L': reflector i (i < n - 1) is H_i = I - tau[i] v vᵀ with v zero above row i + 1, 1 there and
 * A's column i below it; Q = H_0 H_1 ... H_(n-2). On return d (n) holds T's diagonal and e (n - 1) its
 * subdiagonal. `work` holds 2 n values. Returns false, leaving A unusable, when a reflector's norm over- or
 * underflows (the caller then decomposes the matrix some other way). */
bool
TridiagonalizeSymmetric(int n, double * a, double * d, double * e, double * tau, double * work);

/** C = Q C for the Q of TridiagonalizeSymmetric (a and tau as it left them), C of n rows and `columns` columns with
 * leading dimension ldc: eigenvectors of T become eigenvectors of A. */
void
ApplyTridiagonalQ(int n, int columns, const double * a, const double * tau, double * c, int ldc);

/** C (m x n, leading dimension m) = A (m x k, leading dimension lda) B where B is k x n with element (l, t) at
 * b[l * rowStride + t * columnStride]: a sum of k column updates, which is how the approximation X V W Vᵀ (or
 * U W Uᵀ X) of a patch of rank k is formed. */
void
MultiplyByColumns(int m, int n, int k, const double * a, int lda, const double * b, std::ptrdiff_t rowStride,
                  std::ptrdiff_t columnStride, double * c);

/** The sum of a[i] b[i] over i < n. */
double
Dot(int n, const double * a, const double * b);

// The Gram matrix of a patch (AddOuterProductsLower's sum of weighted outer products) in register tiles, where the
// CPU has AVX2 and FMA. The column-by-column loop of svdlrPatchKernels.cxx loads and stores each element of G once
// per four vectors; a tile of 8 x 4 elements stays in registers over all of them, so that the loop runs on the
// multiply-add units instead of the loads: a 65 x 65 Gram matrix of 125 vectors took 15.8 us against 23 us on an
// EPYC core (microbenchmark).

/** G += sum over r < count of weights[r] v_r v_rᵀ for the columns of G in whole tiles of four (the lower triangle
 * only; G of order n, leading dimension n; v_r the n values at vectors + r * stride). Returns how many leading
 * columns it added (a multiple of 4, or 0 where the CPU lacks AVX2 or FMA): the caller adds the rest. The sums run
 * over r in order with fused multiply-adds, so they round differently from AddOuterProductsLower's. */
int
AddOuterProductsLowerInTiles(int n, int count, const double * weights, const double * vectors, std::ptrdiff_t stride,
                             double * g);

/** The most tridiagonal matrices TridiagonalEigenvalues takes at once: two vectors of four lanes. */
constexpr int kTridiagonalBatch = 8;

/** How many patches the CPU denoiser decomposes together when their Gram matrices are of order `order`: a full batch
 * up to order 128, four past it, where eight patches' buffers per worker would double a long series' host memory for
 * a step that takes a small share of its time (the reduction grows as order³, the sweeps as order²). */
constexpr int
TridiagonalBatchFor(std::size_t order)
{
  return order <= 128 ? kTridiagonalBatch : 4;
}

/** Every eigenvalue of `count` (<= kTridiagonalBatch) symmetric tridiagonal matrices of order n, by the implicit QL
 * algorithm with Wilkinson shifts, interleaved. Matrix k has diagonal d[k] (n) and subdiagonal e[k] (n - 1 values,
 * room for n); on success d[k] holds its eigenvalues in ascending order (e[k] is destroyed) and the result is true.
 * False (some matrix needed more than 60 sweeps for one eigenvalue, which round-off can cause only in pathological
 * cases) leaves d and e undefined: decompose those matrices another way.
 *
 * Why: the QL sweep is a chain of dependent divisions and square roots, so one matrix leaves the core idle most of
 * the time (LAPACK's dsterf takes about 60 us for order 65, as long as the reduction to tridiagonal form). The
 * sweeps of independent matrices run side by side: on a CPU with AVX, one matrix per lane of one or two 4 x double
 * vectors, whose chains the core overlaps. At order 65 on an EPYC core a matrix takes 23 us four at a time and 16.6
 * us eight at a time, against 30 us for four interleaved in scalar code (27 us for eight). The vector lanes do the
 * scalar code's operations in its order (no fused multiply-add), so the eigenvalues are the same to the bit with or
 * without AVX; their accuracy is dsterf's: each within a few ulps of the largest. */
bool
TridiagonalEigenvalues(int n, double * const * d, double * const * e, int count);

} // namespace detail
} // namespace svdlr

#endif
