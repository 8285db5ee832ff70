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
#ifndef svdlr_PatchLowRank_h
#define svdlr_PatchLowRank_h

// The CPU backend's work on one patch of DenoiseLocalLowRank: the low-rank approximation of its Casorati matrix
// X (voxels x volumes, float64), with the rank and σ chosen by the options' policy.
//
// Every policy needs all the eigenvalues of the Gram matrix G of X's smaller side, but the reconstruction only
// needs the eigenvectors of the few components it keeps. So instead of a full eigen-decomposition (dsyevd), G is
// reduced to tridiagonal form T = Qᵀ G Q, T's eigenvalues are found without vectors, and only the kept
// eigenvectors are computed, by inverse iteration on T (dstein) and Q applied to them. For the 65 x 65 Gram matrix
// of a 5x5x5 patch of 65 volumes this takes about half the time of dsyevd. Where a step fails (rare), the patch
// falls back to dsyevd. The tridiagonal eigenvalues of a group of up to eight patches are found together
// (TridiagonalEigenvalues, in vector lanes), 2.6-3.6x as fast as dsterf one by one. The Gram matrix, the reduction,
// Q and the approximation use svdlrPatchKernels.h, not BLAS: see there why.

#include "svdlr/LocalDenoise.h"
#include "denoise/svdlrPatchGeometry.h"
#include "denoise/svdlrSpherePatch.h"

#include <cstddef>
#include <vector>
#include <array>
#include <cstdint>

namespace svdlr
{
namespace detail
{

class PatchLowRank
{
public:
  /** For patches of `voxels` voxels and `volumes` volumes under `options` (policy and shrinkage).
   * `marchenkoPasturMedian` is MarchenkoPasturMedian(β) of this shape when the policy is GavishDonoho with an
   * unknown σ (it depends only on the shape, and costs thousands of evaluations), else unused. */
  PatchLowRank(std::size_t voxels, std::size_t volumes, const LocalDenoiseOptions & options,
               double marchenkoPasturMedian);

  int
  Voxels() const
  {
    return m_M;
  }
  int
  Volumes() const
  {
    return m_N;
  }

  /** X, column-major with leading dimension Voxels(): element i + t * Voxels() is patch voxel i in volume t.
   * Fill it, then call Decompose(). */
  double *
  Casorati()
  {
    return m_X.data();
  }

  /** Forms X's smaller Gram matrix afresh (XᵀX when volumes <= voxels, else XXᵀ). */
  void
  FormGram();

  /** Whether the Gram matrix may be updated by replacing rows of X (RemoveRows, new rows, AddRows) instead of
   * formed afresh: only XᵀX can be updated so, and after a number of updates it must be formed afresh, so that
   * the rounding of the updates never builds up. */
  bool
  CanReplaceRows() const
  {
    return m_VolumeSide && m_Replacements < kReplacementsBeforeRefresh;
  }
  /** XᵀX -= (rows first .. first + count of X)ᵀ (the same): call before overwriting those rows. The update is made
   * together with AddRows'. */
  void
  RemoveRows(int first, int count);
  /** XᵀX += the overwritten rows' contribution (and the removal of the rows they replaced). */
  void
  AddRows(int first, int count);

  /** X and its Gram matrix (and the count of updates since it was formed) from another patch of the same shape. */
  void
  CopyGramFrom(const PatchLowRank & other);

  /** Eigenvalues of the Gram matrix: the reduction to tridiagonal form, then FinishEigenvalues for a group of
   * patches (interleaved, TridiagonalEigenvalues) or Decompose for one. */
  void
  Tridiagonalize();
  static void
  FinishEigenvalues(PatchLowRank * const * patches, int count);
  /** FormGram, Tridiagonalize and FinishEigenvalues for this patch alone. */
  void
  Decompose();

  /** Chooses the rank and σ from the eigenvalues (`knownSigma` >= 0: σ given for this patch; < 0: none), and
   * prepares the kept components and their shrinkage weights. Cheap when called again with the same σ. */
  void
  Choose(double knownSigma);
  /** Choose's rank and σ alone, without the kept components (a σ pass, which writes no approximation): Rank() and
   * Sigma() only. A later Choose prepares the components. */
  void
  ChooseRankOnly(double knownSigma);

  std::size_t
  Rank() const
  {
    return m_Rank;
  }
  /** σ found or given; 0 when the policy does not model noise (FixedRank, EnergyFraction) and none was given. */
  double
  Sigma() const
  {
    return m_Sigma;
  }

  /** Row `voxel` of the approximation (Volumes() values). */
  void
  ApproximateRow(int voxel, double * out);

  /** The whole approximation, column-major like Casorati(); valid until the next call. */
  const double *
  ApproximateAll();

private:
  static constexpr int kReplacementsBeforeRefresh = 16;

  bool
  TridiagonalizeByLapack(); // dsytrd (m_UsesLapackTridiagonal); false when it fails or T is not finite
  void
  EigenvaluesBySterf();
  void
  DecomposeFully(); // dsyevd: every eigenvalue and eigenvector (the fallback)
  void
  KeptComponents();
  /** Copies rows first .. first + count - 1 of X, row-major (count, n), to m_Rows from its row `destination` on. */
  const double *
  RowsOfX(int first, int count, int destination);

  const LocalDenoiseOptions & m_Options;
  bool                        m_OptimalShrinkage; // ShrinksOptimally(m_Options)
  double                      m_Median;
  int                         m_M; // voxels
  int                         m_N; // volumes
  int                         m_P; // min(m, n): the Gram matrix's order
  bool                        m_VolumeSide; // G = XᵀX (n x n), else XXᵀ (m x m)
  bool                        m_UsesBlas;   // large orders: dsyrk and dgemm (PatchLowRank.cxx says why)
  bool                        m_UsesLapackTridiagonal; // larger still: dsytrd

  std::vector<double> m_X;         // (m, n)
  std::vector<double> m_Rows;      // (2m, n), row-major: rows of X for the Gram matrix's updates (volume side)
  std::vector<double> m_OuterWeights; // 1 for each row or column added to G, -1 for each row removed
  std::vector<double> m_Running;   // (p, p): G, lower triangle, kept up to date through row replacements
  std::vector<double> m_Gram;      // (p, p): a copy of G (both triangles), then Q's reflectors (below the
                                   // subdiagonal) or, after DecomposeFully, the eigenvectors
  std::vector<double> m_Diagonal;  // T's diagonal (p), kept for dstein
  std::vector<double> m_Offdiag;   // T's subdiagonal (p), kept for dstein
  std::vector<double> m_Tau;       // Q's reflectors (p)
  std::vector<double> m_Eigen;     // eigenvalues, ascending (p)
  std::vector<double> m_Scratch;   // (p)
  std::vector<double> m_Basis;     // (p, rank): the kept eigenvectors, column j for eigenvalue p - rank + j
  std::vector<double> m_Weights;   // (rank): shrunk singular value / singular value
  std::vector<double> m_Product;   // (max(m, n), rank) for ApproximateAll
  std::vector<double> m_Approx;    // (m, n)
  std::vector<double> m_Work;
  std::vector<int>    m_IWork;

  int         m_Replacements{ 0 };
  int         m_RowsLeaving{ 0 }; // rows staged by RemoveRows in m_Rows
  bool        m_FullyDecomposed{ false };
  bool        m_EigenvaluesPending{ false }; // Tridiagonalize left T in m_Eigen and m_Scratch
  bool        m_Chosen{ false };
  double      m_ChosenFor{ -2.0 };
  std::size_t m_Rank{ 0 };
  double      m_Sigma{ 0.0 };
};

// The CPU denoiser's gathering of a patch's Casorati matrix X (column-major (voxels, volumes), float64) from the
// series: a cuboid by columns of voxels (rows as the CPU denoiser's CasoratiRow numbers them, so that its sliding Gram
// update can replace one column), a sphere voxel by voxel in the order of its offset table (svdlrSpherePatch.h).

class PatchGather
{
public:
  /** For patches of box `patch` (the sphere's box for PatchShape::Sphere) of `input`. */
  PatchGather(const SeriesView<const float> & input, const std::array<std::size_t, 3> & patch,
              const LocalDenoiseOptions & options);

  /** Voxels per patch: X's rows. */
  std::size_t
  Voxels() const
  {
    return m_Voxels;
  }

  /** Cuboids: the columns [x0, x1) of the patch starting at `start` into X; the rows of column i are
   * (i mod ex) ey ez + j + ey k for its voxel (i, j, k) of the box. */
  void
  Columns(const std::int64_t (&start)[3], std::size_t x0, std::size_t x1, double * x) const;

  /** Spheres: X of the sphere centred on `centre`. */
  void
  Sphere(const std::array<std::int64_t, 3> & centre, double * x) const;

  /** Spheres: take(row, x, y, z) for every voxel of the sphere centred on `centre`, row 0 (the centre) first. */
  template <typename TTake>
  void
  ForEachSphereRow(const std::array<std::int64_t, 3> & centre, TTake && take) const
  {
    const std::int64_t c[3] = { centre[0], centre[1], centre[2] };
    std::int64_t       start[3], extent[3];
    for (int axis = 0; axis < 3; ++axis)
    {
      extent[axis] = static_cast<std::int64_t>(m_Patch[axis]);
      start[axis] = PatchStart(c[axis], extent[axis], static_cast<std::int64_t>(m_Input.size[axis]));
    }
    ForEachSphereVoxel(m_SphereOrder.data(), static_cast<std::int64_t>(m_SphereOrder.size()),
                       static_cast<std::int64_t>(m_Voxels), c, start, extent, take);
  }

private:
  const SeriesView<const float> & m_Input;
  const std::array<std::size_t, 3> m_Patch;
  std::size_t                     m_Voxels{ 0 };
  std::vector<PatchOffset>        m_SphereOrder; // spheres: the offsets in the order patches take them
};

} // namespace detail
} // namespace svdlr

#endif
