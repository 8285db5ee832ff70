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
#ifndef svdlrLocalDenoiseReference_h
#define svdlrLocalDenoiseReference_h

// A float64 reference of DenoiseLocalLowRank written independently of the engine: a naive loop over the centres,
// each patch's Casorati matrix built explicitly and decomposed by a full SVD (LAPACK dgesvd, not the engine's Gram
// path). Only the rank rules are shared with the engine (svdlrNoiseThreshold.h), as the rule is what it tests.

#include "svdlrLapack.h"
#include "svdlrNoiseThreshold.h"
#include "svdlrTestSeries.h"

#include <algorithm>
#include <stdexcept>

namespace svdlr
{
namespace test
{

struct ReferenceResult
{
  std::vector<double> values; // voxel + t * voxels
  std::vector<double> sigma;  // per voxel
  std::vector<double> rank;   // per voxel (a mean with OverlapAverage)
};

struct ReferenceSettings
{
  std::array<std::size_t, 3> patch{ 5, 5, 5 };
  RankPolicy                 policy{ RankPolicy::MarchenkoPastur() };
  Shrinkage                  shrinkage{ Shrinkage::Hard };
  PatchAggregation           aggregation{ PatchAggregation::CentreVoxel };
  std::size_t                stride{ 1 };
  const float *              knownSigma{ nullptr };
  NoiseEstimator             noiseEstimator{ NoiseEstimator::MarchenkoPasturMean };
};

/** The residual refit of σ, written here from the singular values of the reference's own SVD (descending): the
 * squares of those after the `rank` kept, summed in long double, over (rows - rank)(cols - rank). */
inline double
ReferenceResidualSigma(const std::vector<double> & singularDescending, int rows, int cols, int rank)
{
  long double residual = 0.0L;
  for (std::size_t j = static_cast<std::size_t>(rank); j < singularDescending.size(); ++j)
  {
    residual += (long double)singularDescending[j] * (long double)singularDescending[j];
  }
  return double(std::sqrt(residual / ((long double)(rows - rank) * (long double)(cols - rank))));
}

inline ReferenceResult
ReferenceDenoise(const Series & series, const ReferenceSettings & settings)
{
  const auto &      size = series.size;
  const auto &      e = settings.patch;
  const std::size_t voxels = series.Voxels(), n = series.volumes, m = e[0] * e[1] * e[2];
  const std::size_t p = std::min(m, n);
  ReferenceResult   result;
  result.values.assign(voxels * n, 0.0);
  result.sigma.assign(voxels, 0.0);
  result.rank.assign(voxels, 0.0);
  std::vector<double> counts(voxels, 0.0);

  const auto onGrid = [&](std::size_t i, std::size_t extent) { return i % settings.stride == 0 || i + 1 == extent; };
  const auto first = [](std::size_t c, std::size_t extent, std::size_t length) {
    const std::ptrdiff_t start = static_cast<std::ptrdiff_t>(c) - static_cast<std::ptrdiff_t>(extent / 2);
    return static_cast<std::size_t>(
      std::min<std::ptrdiff_t>(std::max<std::ptrdiff_t>(start, 0), static_cast<std::ptrdiff_t>(length - extent)));
  };

  for (std::size_t cz = 0; cz < size[2]; ++cz)
    for (std::size_t cy = 0; cy < size[1]; ++cy)
      for (std::size_t cx = 0; cx < size[0]; ++cx)
      {
        if (!onGrid(cx, size[0]) || !onGrid(cy, size[1]) || !onGrid(cz, size[2]))
          continue;
        const std::size_t centre = cx + size[0] * (cy + size[1] * cz);
        const std::size_t sx = first(cx, e[0], size[0]), sy = first(cy, e[1], size[1]), sz = first(cz, e[2], size[2]);
        // X: (m, n) column-major, patch voxels x fastest.
        std::vector<std::size_t> patchVoxels;
        for (std::size_t k = 0; k < e[2]; ++k)
          for (std::size_t j = 0; j < e[1]; ++j)
            for (std::size_t i = 0; i < e[0]; ++i)
              patchVoxels.push_back(sx + i + size[0] * (sy + j + size[1] * (sz + k)));
        std::vector<double> x(m * n);
        for (std::size_t t = 0; t < n; ++t)
          for (std::size_t i = 0; i < m; ++i)
            x[i + t * m] = series(patchVoxels[i], t);
        std::vector<double> a(x), s(p), u(m * p), vt(p * n);
        double              query = 0.0;
        detail::lapack::gesvd(int(m), int(n), a.data(), s.data(), u.data(), vt.data(), &query, -1);
        std::vector<double> work(static_cast<std::size_t>(query) + 1);
        if (detail::lapack::gesvd(int(m), int(n), a.data(), s.data(), u.data(), vt.data(), work.data(),
                                  int(work.size())) != 0)
          throw std::runtime_error("reference dgesvd failed");

        std::vector<double> eigenvalues(p);
        for (std::size_t i = 0; i < p; ++i)
          eigenvalues[i] = s[p - 1 - i] * s[p - 1 - i];
        const double    known = settings.knownSigma ? double(settings.knownSigma[centre]) : -1.0;
        const int       rows = int(m), cols = int(n);
        detail::NoiseRank decided{ 0, known >= 0.0 ? known : 0.0 };
        if (settings.policy.kind == RankPolicy::Kind::FixedRank)
          decided.rank = int(std::min<std::size_t>(settings.policy.rank, p));
        else if (settings.policy.kind == RankPolicy::Kind::MarchenkoPastur)
          decided = known >= 0.0 ? detail::RankAboveThreshold(eigenvalues.data(), int(p),
                                                              detail::MarchenkoPasturUpperEdge(known, rows, cols), known)
                                 : detail::MarchenkoPasturRank(eigenvalues.data(), int(p), rows, cols,
                                                               settings.policy.estimator);
        else if (settings.policy.kind == RankPolicy::Kind::GavishDonoho)
          decided = known >= 0.0 ? detail::RankAboveThreshold(eigenvalues.data(), int(p),
                                                              detail::GavishDonohoThreshold(known, rows, cols), known)
                                 : detail::GavishDonohoRank(eigenvalues.data(), int(p), rows, cols,
                                                            settings.policy.noiseSigma);
        else
          throw std::runtime_error("reference: policy not covered");
        const bool estimated = known < 0.0 && (settings.policy.kind == RankPolicy::Kind::MarchenkoPastur ||
                                               (settings.policy.kind == RankPolicy::Kind::GavishDonoho &&
                                                !(settings.policy.noiseSigma > 0.0)));
        if (settings.noiseEstimator == NoiseEstimator::ResidualRefit && estimated && decided.sigma > 0.0 &&
            decided.rank < int(p))
          decided.sigma = ReferenceResidualSigma(s, rows, cols, decided.rank);

        // Auto shrinks optimally where the patch has σ: a noise policy, or a known σ.
        const bool hasSigma = settings.knownSigma != nullptr ||
                              settings.policy.kind == RankPolicy::Kind::GavishDonoho ||
                              settings.policy.kind == RankPolicy::Kind::MarchenkoPastur;
        const bool hard = settings.shrinkage == Shrinkage::Hard || (settings.shrinkage == Shrinkage::Auto && !hasSigma);
        std::vector<double> kept(decided.rank);
        for (int j = 0; j < decided.rank; ++j)
          kept[j] = hard
                      ? s[j]
                      : detail::OptimalFrobeniusShrinkage(s[j], decided.sigma, rows, cols);
        const auto approximation = [&](std::size_t i, std::size_t t) {
          double value = 0.0;
          for (int j = 0; j < decided.rank; ++j)
            value += u[i + j * m] * kept[j] * vt[j + t * p];
          return value;
        };

        if (settings.aggregation == PatchAggregation::CentreVoxel)
        {
          const std::size_t row = (cx - sx) + e[0] * ((cy - sy) + e[1] * (cz - sz));
          for (std::size_t t = 0; t < n; ++t)
            result.values[centre + t * voxels] = approximation(row, t);
          result.sigma[centre] = decided.sigma;
          result.rank[centre] = decided.rank;
          counts[centre] = 1.0;
          continue;
        }
        for (std::size_t i = 0; i < m; ++i)
        {
          const std::size_t v = patchVoxels[i];
          for (std::size_t t = 0; t < n; ++t)
            result.values[v + t * voxels] += approximation(i, t);
          result.sigma[v] += decided.sigma;
          result.rank[v] += decided.rank;
          counts[v] += 1.0;
        }
      }
  for (std::size_t v = 0; v < voxels; ++v)
  {
    if (counts[v] == 0.0)
      throw std::runtime_error("reference: a voxel is in no patch");
    for (std::size_t t = 0; t < n; ++t)
      result.values[v + t * voxels] /= counts[v];
    result.sigma[v] /= counts[v];
    result.rank[v] /= counts[v];
  }
  return result;
}

} // namespace test
} // namespace svdlr

#endif
