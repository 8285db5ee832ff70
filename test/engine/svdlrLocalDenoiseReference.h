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
// A spherical patch is found here by sorting every voxel of its box by distance (SphereVoxelsByBruteForce), and
// the aggregation weights are written out as LocalDenoise.h documents them, not taken from the engine.
// With volume groups, each voxel's group means are taken in float64 and subtracted from the series first, each patch
// is fitted as a voxels x (volumes - groups) matrix without its smallest eigenvalues that the demeaning made zero,
// and the means are added back at the end: derived here on its own, not through the engine's NoiseShapeOf.

#include "shared/svdlrLapack.h"
#include "noise/svdlrNoiseThreshold.h"
#include "svdlrTestSeries.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>

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
  double                     sphereRadius{ 0.0 }; // > 0: a sphere of this radius, `patch` its box
  std::vector<std::uint32_t> groups; // per volume, 0 .. G - 1; empty: no demeaning
  NoiseEstimator             noiseEstimator{ NoiseEstimator::MarchenkoPasturMean };
};

/** The voxels (linear indices) of the sphere of `radius` centred on c whose box of extent e starts at s: the box's
 * voxels sorted by squared distance from c, then by (dz, dy, dx), the first as many as the unshifted box holds
 * within the radius. */
inline std::vector<std::size_t>
SphereVoxelsByBruteForce(const std::array<std::size_t, 3> & size, const std::array<std::size_t, 3> & e,
                         double radius, const std::array<std::size_t, 3> & c, const std::array<std::size_t, 3> & s)
{
  std::size_t within = 0;
  const auto  half = [&](int axis) { return static_cast<long>(e[axis] / 2); };
  for (long z = -half(2); z <= half(2); ++z)
    for (long y = -half(1); y <= half(1); ++y)
      for (long x = -half(0); x <= half(0); ++x)
        within += std::sqrt(double(x * x + y * y + z * z)) <= radius + 1e-9;
  std::vector<std::tuple<long, long, long, long, std::size_t>> candidates; // d², dz, dy, dx, voxel
  for (std::size_t k = 0; k < e[2]; ++k)
    for (std::size_t j = 0; j < e[1]; ++j)
      for (std::size_t i = 0; i < e[0]; ++i)
      {
        const long dx = long(s[0] + i) - long(c[0]), dy = long(s[1] + j) - long(c[1]), dz = long(s[2] + k) - long(c[2]);
        candidates.emplace_back(dx * dx + dy * dy + dz * dz, dz, dy, dx, s[0] + i + size[0] * (s[1] + j + size[1] * (s[2] + k)));
      }
  std::sort(candidates.begin(), candidates.end());
  std::vector<std::size_t> voxels;
  for (std::size_t i = 0; i < within; ++i)
    voxels.push_back(std::get<4>(candidates[i]));
  return voxels;
}

/** A contribution's weight, as LocalDenoise.h and DenoiseChoices.h document it (the Gaussian of FWHM 2 voxels is
 * 2^-d²). */
inline double
ReferenceWeight(PatchAggregation aggregation, int rank, double distance2)
{
  if (aggregation == PatchAggregation::OverlapRankWeighted)
    return 1.0 / (1.0 + rank);
  if (aggregation == PatchAggregation::OverlapGaussianWeighted)
    return std::pow(2.0, -distance2);
  return 1.0;
}

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
  const bool        sphere = settings.sphereRadius > 0.0;
  const std::size_t voxels = series.Voxels(), n = series.volumes;
  const std::size_t m = sphere ? SphereVoxelsByBruteForce(size, e, settings.sphereRadius, { e[0] / 2, e[1] / 2, e[2] / 2 },
                                                          { 0, 0, 0 })
                                   .size()
                               : e[0] * e[1] * e[2];
  const std::size_t p = std::min(m, n);
  ReferenceResult   result;
  result.values.assign(voxels * n, 0.0);
  result.sigma.assign(voxels, 0.0);
  result.rank.assign(voxels, 0.0);
  std::vector<double> counts(voxels, 0.0);
  std::size_t         groupCount = 0;
  for (const std::uint32_t g : settings.groups)
    groupCount = std::max<std::size_t>(groupCount, g + 1);
  std::vector<double> means(voxels * groupCount, 0.0), members(groupCount, 0.0);
  for (const std::uint32_t g : settings.groups)
    members[g] += 1.0;
  for (std::size_t v = 0; v < voxels; ++v)
    for (std::size_t t = 0; t < n && groupCount > 0; ++t)
      means[v * groupCount + settings.groups[t]] += double(series(v, t)) / members[settings.groups[t]];
  const auto demeaned = [&](std::size_t v, std::size_t t) {
    return double(series(v, t)) - (groupCount > 0 ? means[v * groupCount + settings.groups[t]] : 0.0);
  };
  // The noise left after demeaning spans volumes - groups dimensions of the volume axis.
  const std::size_t noiseCols = n - groupCount;
  const std::size_t noiseP = std::min(m, noiseCols);

  // Centres on a body-centred cubic lattice (PatchCentres): the grid of step `stride` (and each axis's last voxel)
  // and the centres of its cells.
  const std::size_t s = settings.stride;
  const auto onGrid = [&](std::size_t i, std::size_t extent) { return i % s == 0 || i + 1 == extent; };
  const auto isCentre = [&](std::size_t x, std::size_t y, std::size_t z) {
    const bool corner = onGrid(x, size[0]) && onGrid(y, size[1]) && onGrid(z, size[2]);
    return corner || (s > 1 && x % s == s / 2 && y % s == s / 2 && z % s == s / 2);
  };
  const auto first = [](std::size_t c, std::size_t extent, std::size_t length) {
    const std::ptrdiff_t start = static_cast<std::ptrdiff_t>(c) - static_cast<std::ptrdiff_t>(extent / 2);
    return static_cast<std::size_t>(
      std::min<std::ptrdiff_t>(std::max<std::ptrdiff_t>(start, 0), static_cast<std::ptrdiff_t>(length - extent)));
  };

  for (std::size_t cz = 0; cz < size[2]; ++cz)
    for (std::size_t cy = 0; cy < size[1]; ++cy)
      for (std::size_t cx = 0; cx < size[0]; ++cx)
      {
        if (!isCentre(cx, cy, cz))
          continue;
        const std::size_t centre = cx + size[0] * (cy + size[1] * cz);
        const std::size_t sx = first(cx, e[0], size[0]), sy = first(cy, e[1], size[1]), sz = first(cz, e[2], size[2]);
        // X: (m, n) column-major, patch voxels x fastest.
        std::vector<std::size_t> patchVoxels;
        if (sphere)
          patchVoxels = SphereVoxelsByBruteForce(size, e, settings.sphereRadius, { cx, cy, cz }, { sx, sy, sz });
        else
          for (std::size_t k = 0; k < e[2]; ++k)
            for (std::size_t j = 0; j < e[1]; ++j)
              for (std::size_t i = 0; i < e[0]; ++i)
                patchVoxels.push_back(sx + i + size[0] * (sy + j + size[1] * (sz + k)));
        std::vector<double> x(m * n);
        for (std::size_t t = 0; t < n; ++t)
          for (std::size_t i = 0; i < m; ++i)
            x[i + t * m] = demeaned(patchVoxels[i], t);
        std::vector<double> a(x), s(p), u(m * p), vt(p * n);
        double              query = 0.0;
        detail::lapack::gesvd(int(m), int(n), a.data(), s.data(), u.data(), vt.data(), &query, -1);
        std::vector<double> work(static_cast<std::size_t>(query) + 1);
        if (detail::lapack::gesvd(int(m), int(n), a.data(), s.data(), u.data(), vt.data(), work.data(),
                                  int(work.size())) != 0)
          throw std::runtime_error("reference dgesvd failed");

        std::vector<double> eigenvalues(noiseP); // the largest noiseP, ascending
        for (std::size_t i = 0; i < noiseP; ++i)
          eigenvalues[i] = s[noiseP - 1 - i] * s[noiseP - 1 - i];
        const double    known = settings.knownSigma ? double(settings.knownSigma[centre]) : -1.0;
        const int       rows = int(m), cols = int(noiseCols);
        detail::NoiseRank decided{ 0, known >= 0.0 ? known : 0.0 };
        if (settings.policy.kind == RankPolicy::Kind::FixedRank)
          decided.rank = int(std::min<std::size_t>(settings.policy.rank, noiseP));
        else if (settings.policy.kind == RankPolicy::Kind::MarchenkoPastur)
          decided = known >= 0.0 ? detail::RankAboveThreshold(eigenvalues.data(), int(noiseP),
                                                              detail::MarchenkoPasturUpperEdge(known, rows, cols), known)
                                 : detail::MarchenkoPasturRank(eigenvalues.data(), int(noiseP), rows, cols,
                                                               settings.policy.estimator);
        else if (settings.policy.kind == RankPolicy::Kind::GavishDonoho)
          decided = known >= 0.0 ? detail::RankAboveThreshold(eigenvalues.data(), int(noiseP),
                                                              detail::GavishDonohoThreshold(known, rows, cols), known)
                                 : detail::GavishDonohoRank(eigenvalues.data(), int(noiseP), rows, cols,
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
          const std::size_t row = static_cast<std::size_t>(
            std::find(patchVoxels.begin(), patchVoxels.end(), centre) - patchVoxels.begin());
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
          const double      dx = double(v % size[0]) - double(cx), dy = double(v / size[0] % size[1]) - double(cy),
                       dz = double(v / (size[0] * size[1])) - double(cz);
          const double weight = ReferenceWeight(settings.aggregation, decided.rank, dx * dx + dy * dy + dz * dz);
          for (std::size_t t = 0; t < n; ++t)
            result.values[v + t * voxels] += weight * approximation(i, t);
          result.sigma[v] += weight * decided.sigma;
          result.rank[v] += weight * decided.rank;
          counts[v] += weight;
        }
      }
  for (std::size_t v = 0; v < voxels; ++v)
  {
    if (counts[v] == 0.0)
      throw std::runtime_error("reference: a voxel is in no patch");
    for (std::size_t t = 0; t < n; ++t)
      result.values[v + t * voxels] =
        result.values[v + t * voxels] / counts[v] + (groupCount > 0 ? means[v * groupCount + settings.groups[t]] : 0.0);
    result.sigma[v] /= counts[v];
    result.rank[v] /= counts[v];
  }
  return result;
}

} // namespace test
} // namespace svdlr

#endif
