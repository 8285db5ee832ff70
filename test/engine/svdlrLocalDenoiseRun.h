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
#ifndef svdlrLocalDenoiseRun_h
#define svdlrLocalDenoiseRun_h

// What the local denoiser's engine suites share: a run of DenoiseLocalLowRank
// into outputs poisoned with NaN, and its comparison with the float64 reference
// (svdlrLocalDenoiseReference.h).
#include "svdlr/LocalDenoise.h"
#include "svdlrLocalDenoiseReference.h"
#include "svdlrTestSeries.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace svdlr {
namespace test {

struct Denoised {
  Series output;
  std::vector<float> sigma;
  std::vector<std::uint16_t> rank;
  LocalDenoiseReport report;
};

/** Runs the engine into a fresh output poisoned with NaN, so that every value
 * it should write is checked. */
inline Denoised Denoise(const Series &input,
                        const LocalDenoiseOptions &options) {
  Denoised result;
  result.output = EmptySeries(input.size, input.volumes);
  std::fill(result.output.values.begin(), result.output.values.end(),
            std::numeric_limits<float>::quiet_NaN());
  result.sigma.assign(input.Voxels(), std::numeric_limits<float>::quiet_NaN());
  result.rank.assign(input.Voxels(), 0xFFFF);
  LocalDenoiseMaps maps;
  maps.noiseSigma = result.sigma.data();
  maps.rank = result.rank.data();
  result.report =
      DenoiseLocalLowRank(input.View(), result.output.View(), maps, options);
  return result;
}

inline ReferenceSettings SettingsOf(const LocalDenoiseOptions &options,
                                    const std::array<std::size_t, 3> &patch,
                                    std::size_t volumes) {
  ReferenceSettings settings;
  if (options.volumeGroups != nullptr) {
    settings.groups.assign(options.volumeGroups, options.volumeGroups + volumes);
  }
  settings.patch = patch;
  settings.policy = options.policy;
  settings.shrinkage = options.shrinkage;
  settings.aggregation = options.aggregation;
  // The stride the engine resolves (its rule is tested on its own, svdlrDenoiseDefaultsGTest): the reference then
  // holds the denoising with that stride to float64.
  settings.stride = svdlr::PatchStrideUsed(patch, options.patchShape, options.aggregation, options.patchStride);
  settings.knownSigma = options.noiseSigma;
  if (options.patchShape == PatchShape::Sphere)
    settings.sphereRadius = options.patchRadius; // the sphere tests give their radius
  settings.noiseEstimator = options.noiseEstimator;
  return settings;
}

/** How far the engine's run is from the float64 reference: the largest relative difference of a voxel's series, the
 * largest difference of σ relative to the reference's (|Δσ| / (σ + 1e-6)), and the voxels whose rank differs. */
struct ReferenceDistance {
  double value{0.0};
  double sigma{0.0};
  std::size_t ranks{0};
};

inline ReferenceDistance DistanceToReference(const Series &input,
                                             const LocalDenoiseOptions &options,
                                             const std::array<std::size_t, 3> &patch) {
  const Denoised result = Denoise(input, options);
  const ReferenceResult reference =
      ReferenceDenoise(input, SettingsOf(options, patch, input.volumes));
  EXPECT_EQ(result.report.patchSize, patch);
  const std::size_t voxels = input.Voxels();
  ReferenceDistance distance;
  for (std::size_t v = 0; v < voxels; ++v) {
    double difference = 0.0, norm = 0.0;
    for (std::size_t t = 0; t < input.volumes; ++t) {
      const double d =
          double(result.output(v, t)) - reference.values[v + t * voxels];
      difference += d * d;
      norm +=
          reference.values[v + t * voxels] * reference.values[v + t * voxels];
    }
    distance.value =
        std::max(distance.value, norm > 0.0 ? std::sqrt(difference / norm)
                                            : std::sqrt(difference));
    distance.sigma = std::max(
        distance.sigma, std::abs(double(result.sigma[v]) - reference.sigma[v]) /
                            (reference.sigma[v] + 1e-6));
    // The documented rounding of a mean rank (LocalDenoise.h, AggregatedRank):
    // half up, a tie moved up by 1e-9, so that a tie summed to just below a
    // half in either order rounds alike.
    distance.ranks += result.rank[v] != static_cast<std::uint16_t>(
                                            std::floor(reference.rank[v] + 0.5 + 1e-9));
  }
  return distance;
}

/** Per voxel: the series within 1e-5 relative of the reference's, σ within
 * `sigmaTolerance` (1e-6 unless a test measured otherwise), the rank equal. */
inline void ExpectMatchesReference(const Series &input,
                                   const LocalDenoiseOptions &options,
                                   const std::array<std::size_t, 3> &patch,
                                   double sigmaTolerance = 1e-6) {
  const ReferenceDistance distance = DistanceToReference(input, options, patch);
  EXPECT_LE(distance.value, 1e-5);
  EXPECT_LE(distance.sigma, sigmaTolerance);
  EXPECT_EQ(distance.ranks, 0u);
}

} // namespace test
} // namespace svdlr

#endif
