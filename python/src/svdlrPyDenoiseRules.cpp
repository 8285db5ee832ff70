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
// The engine's rules that Python reads before a run (svdlrPyModule.h's DefineDenoiseRules): each binds the one
// engine function the tools use too, so that a sidecar says what the engine does.
#include "svdlrPyModule.h"

#include "svdlrPyErrors.h"

#include "svdlr/LocalDenoise.h"
#include "svdlr/MagnitudeNoise.h"
#include "svdlr/Names.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nb = nanobind;
using namespace nb::literals;

namespace svdlr
{
namespace python
{

void
DefineDenoiseRules(nb::module_ & module)
{
  module.def(
    "magnitude_noise_used",
    [](const std::string & policy, bool automatic, bool vst, bool noiseFloor, bool sigmaFloorCorrection,
       bool knownSigma, bool gfactor, bool estimateGFactor, bool negativeValues) {
      LocalDenoiseOptions options;
      if (!ParsePolicyName(policy, options.policy))
      {
        ThrowValueError("unknown policy \"" + policy + "\"");
      }
      const float given = 1.0f; // stands for a σ map or a g-factor map: the rule reads only whether there is one
      options.noiseSigma = knownSigma ? &given : nullptr;
      options.gfactor = gfactor ? &given : nullptr;
      options.estimateGFactor = estimateGFactor;
      options.magnitudeNoise.automatic = automatic;
      options.magnitudeNoise.stabilise = vst;
      options.magnitudeNoise.noiseFloor = noiseFloor;
      options.magnitudeNoise.sigmaFloorCorrection = sigmaFloorCorrection;
      return MagnitudeNoiseName(MagnitudeNoiseUsed(options, negativeValues));
    },
    "policy"_a, "automatic"_a, "vst"_a = false, "noise_floor"_a = false, "sigma_floor_correction"_a = false,
    "known_sigma"_a = false, "gfactor"_a = false, "estimate_gfactor"_a = false, "negative_values"_a = false,
    "The magnitude model a denoising run applies, as the sidecars name it (\"vst+noise-floor\", \"none\", ...):\n"
    "the one given, or for `automatic` with none given the default model where sigma is estimated per patch\n"
    "and the series can be a magnitude (svdlr::MagnitudeNoiseUsed, the one rule of the engine and the tools);\n"
    "`known_sigma`: a sigma or sigma map given, `gfactor`: a g-factor map given, `negative_values`: the series\n"
    "holds a value below 0 (no magnitude).");
  module.def(
    "shrinkage_used",
    [](const std::string & shrinkage, const std::string & policy, bool knownSigma) {
      Shrinkage requested{};
      RankPolicy rankPolicy;
      if (!ParseShrinkageName(shrinkage, requested) || !ParsePolicyName(policy, rankPolicy))
      {
        ThrowValueError("unknown shrinkage \"" + shrinkage + "\" or policy \"" + policy + "\"");
      }
      return std::string(ShrinkageName(ResolveShrinkage(requested, rankPolicy, knownSigma)));
    },
    "shrinkage"_a, "policy"_a, "known_sigma"_a,
    "The shrinkage a denoising run uses, \"hard\" or \"frobenius\": \"auto\" resolved by the engine's rule\n"
    "(svdlr::ResolveShrinkage: optimal shrinkage where the patches have sigma, the hard threshold otherwise).");
  module.def(
    "gfactor_known_sigma_problem",
    [](bool knownSigmaMap) { return GFactorKnownSigmaProblem(knownSigmaMap); },
    "known_sigma_map"_a,
    "Why a known sigma map cannot go with a g-factor map: \"\" when it can (a single sigma is the sigma where g = 1;\n"
    "svdlr::GFactorKnownSigmaProblem, the rule the tools share).");
  module.def(
    "sigma_floor_correction_problem",
    [](bool vst, bool knownSigma) {
      MagnitudeNoiseOptions model;
      model.stabilise = vst;
      model.sigmaFloorCorrection = true;
      return SigmaFloorCorrectionProblem(model, knownSigma);
    },
    "vst"_a, "known_sigma"_a,
    "Why sigma_floor_correction cannot run with vst and a known sigma as given: \"\" when it can (the engine's\n"
    "rule, svdlr::SigmaFloorCorrectionProblem), for checking a command line before any run.");
  module.def(
    "patch_size_used",
    [](const std::vector<std::int64_t> & shape, std::int64_t volumes,
       const std::optional<std::vector<std::int64_t>> & requested) {
      if (shape.size() != 3 || (requested && requested->size() != 3) || volumes < 1)
      {
        ThrowValueError("patch_size_used takes the 3 spatial extents, the volume count (>= 1) and optionally the 3 "
                        "patch extents asked for");
      }
      // Array order in and out, the engine's (x = the last spatial array axis) inside, as denoise_local_low_rank.
      std::array<std::size_t, 3> size{};
      std::array<std::size_t, 3> asked{};
      for (int i = 0; i < 3; ++i)
      {
        if (shape[2 - i] < 1 || (requested && (*requested)[2 - i] < 0))
        {
          ThrowValueError("patch_size_used: extents must be >= 1 (patch extents >= 0)");
        }
        size[i] = static_cast<std::size_t>(shape[2 - i]);
        asked[i] = requested ? static_cast<std::size_t>((*requested)[2 - i]) : 0;
      }
      const std::array<std::size_t, 3> used = PatchSizeUsed(size, static_cast<std::size_t>(volumes), asked);
      return std::vector<std::int64_t>{ static_cast<std::int64_t>(used[2]), static_cast<std::int64_t>(used[1]),
                                        static_cast<std::int64_t>(used[0]) };
    },
    "shape"_a, "volumes"_a, "requested"_a = nb::none(),
    "The patch extent a denoising run uses on a series of this spatial shape and volume count (array order):\n"
    "`requested` as given, or for None the default cube fitted to the image (svdlr::PatchSizeUsed, the one rule\n"
    "the engine and the tools use). The BIDS App records it in each run's sidecar.");
  module.def(
    "patch_stride_used",
    [](const std::vector<std::int64_t> & patchUsed, const std::string & shape, const std::string & aggregation,
       std::int64_t requested) {
      PatchShape       engineShape = kDefaultPatchShape;
      PatchAggregation engineAggregation = kDefaultPatchAggregation;
      if (patchUsed.size() != 3 || requested < 0 || !ParsePatchShapeName(shape, engineShape) ||
          !ParseAggregationName(aggregation, engineAggregation))
      {
        ThrowValueError("patch_stride_used takes the 3 patch extents used, a patch shape's and an aggregation's "
                        "name, and the stride asked for (>= 0)");
      }
      std::array<std::size_t, 3> patch{};
      for (int i = 0; i < 3; ++i)
      {
        patch[i] = static_cast<std::size_t>(std::max<std::int64_t>(1, patchUsed[i]));
      }
      return static_cast<std::int64_t>(
        PatchStrideUsed(patch, engineShape, engineAggregation, static_cast<std::size_t>(requested)));
    },
    "patch_used"_a, "patch_shape"_a, "aggregation"_a, "requested"_a = static_cast<std::int64_t>(kAutoPatchStride),
    "The patch stride a denoising run uses with this patch extent (patch_size_used), shape and aggregation:\n"
    "`requested` as given, or for AUTO_PATCH_STRIDE (0) the default rule (svdlr::PatchStrideUsed, the one rule the\n"
    "engine and the tools use: half the patch's smallest extent). The BIDS App records it in each run's sidecar.");
  module.def(
    "sphere_patch_used",
    [](const std::vector<std::int64_t> & shape, std::int64_t volumes, double radius) {
      if (shape.size() != 3 || volumes < 1 || !(std::isfinite(radius) && radius >= 0.0))
      {
        ThrowValueError("sphere_patch_used takes the 3 spatial extents, the volume count (>= 1) and a radius >= 0");
      }
      std::array<std::size_t, 3> size{};
      for (int i = 0; i < 3; ++i)
      {
        if (shape[2 - i] < 1)
        {
          ThrowValueError("sphere_patch_used: extents must be >= 1");
        }
        size[i] = static_cast<std::size_t>(shape[2 - i]);
      }
      const SpherePatch sphere = SpherePatchUsed(size, static_cast<std::size_t>(volumes), radius);
      return nb::make_tuple(sphere.radius, sphere.voxels);
    },
    "shape"_a, "volumes"_a, "radius"_a = 0.0,
    "The spherical patch a denoising run uses on a series of this spatial shape (array order) and volume count:\n"
    "(radius, voxels), for `radius` as given or, for 0, the default (svdlr::SpherePatchUsed, the one rule the\n"
    "engine and the tools use). The BIDS App records it in each run's sidecar.");
}

} // namespace python
} // namespace svdlr
