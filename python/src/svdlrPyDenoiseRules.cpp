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
// The rules that the Python layer reads, each binding the one function the tools use too: the denoiser's before a run
// (DefineDenoiseRules), so that a sidecar says what the engine does; how an image is cut into slices
// (DefineSliceStack); the batch rules (DefineBatchRules), compiled into the extension from apps/batch (without DICOM:
// Python's batch takes image files), so that Python and the command-line tool cannot drift apart. And
// `demodulate_phase` (DefineComplex): svdlr::DemodulatePhase on C-ordered float32 arrays of shape (volumes, n0, n1,
// n2), which the engine sees as x = a2, y = a1, z = a0 (as denoise_local_low_rank does); the filter widths are given
// in array order.
#include "svdlrPyModule.h"

#include "svdlrPyErrors.h"

#include "SVDLowRankBatchInputs.h"
#include "SVDLowRankInterruptCleanup.h"
#include "svdlr/ComplexSeries.h"
#include "svdlr/LocalDenoise.h"
#include "svdlr/MagnitudeNoise.h"
#include "svdlr/Names.h"
#include "svdlr/OutputMaps.h"
#include "svdlr/SliceStack.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace nb = nanobind;
using namespace nb::literals;

namespace svdlr
{
namespace python
{
namespace
{

/** Spatial `extents` in array order as the engine's (x, y, z), x being the last array axis; ValueError `rule` unless
 * there are 3, each at least `minimum`. */
std::array<std::size_t, 3>
EngineOrder(const std::vector<std::int64_t> & extents, std::int64_t minimum, const char * rule)
{
  if (extents.size() != 3 || *std::min_element(extents.begin(), extents.end()) < minimum)
  {
    ThrowValueError(rule);
  }
  return { static_cast<std::size_t>(extents[2]), static_cast<std::size_t>(extents[1]),
           static_cast<std::size_t>(extents[0]) };
}

/** The axes of the slices, or ValueError with the rule's sentence (Python spells the parameter slice_dimension). */
SliceAxes
CheckedSliceAxes(unsigned int dimension, std::optional<std::int64_t> sliceDimension)
{
  const long long   value = sliceDimension ? *sliceDimension : DefaultSliceDimension(dimension);
  const std::string problem = SliceDimensionProblem("slice_dimension", dimension, value);
  if (!problem.empty())
  {
    ThrowValueError(problem);
  }
  return SliceAxesOf(dimension, static_cast<unsigned int>(value));
}

using VolumeArray = nb::ndarray<nb::ro, float, nb::ndim<4>, nb::c_contig, nb::device::cpu>;

SeriesView<const float>
ViewOf(const VolumeArray & array)
{
  const std::size_t n0 = array.shape(1), n1 = array.shape(2), n2 = array.shape(3);
  return { array.data(),
           { n2, n1, n0 },
           array.shape(0),
           { 1, static_cast<std::ptrdiff_t>(n2), static_cast<std::ptrdiff_t>(n2 * n1),
             static_cast<std::ptrdiff_t>(n2 * n1 * n0) } };
}

nb::tuple
DemodulatePhaseArrays(const VolumeArray & real, const VolumeArray & imag, std::array<double, 3> filterSigma,
                      unsigned threads)
{
  const std::vector<std::size_t> shape = ShapeVector(real);
  float *                        phaseData = nullptr;
  float *                        realData = nullptr;
  nb::object                     phase = NewNumpyArray(4, shape.data(), phaseData);
  nb::object                     demodulated = NewNumpyArray(4, shape.data(), realData);
  const auto input = ViewOf(real);
  PhaseDemodulationOptions options;
  options.filterSigma = { filterSigma[2], filterSigma[1], filterSigma[0] }; // array order -> x, y, z
  options.threads = threads;
  {
    nb::gil_scoped_release release;
    DemodulatePhase(input, ViewOf(imag), { phaseData, input.size, input.volumes, input.strides },
                    { realData, input.size, input.volumes, input.strides }, {}, options);
  }
  return nb::make_tuple(phase, demodulated);
}

/** (path, relative) of each volume found; FileNotFoundError for a path that does not exist, ValueError when
 * nothing is found or two volumes would share an output. */
std::vector<std::pair<std::string, std::string>>
FindInputs(const std::vector<std::string> & paths,
           const std::vector<std::string> & patterns,
           bool                             bids,
           const std::string &              exclude)
{
  svdlr_batch::InputSelection selection;
  selection.paths = paths;
  selection.patterns = patterns;
  selection.bids = bids;
  selection.exclude = exclude;
  std::vector<std::pair<std::string, std::string>> found;
  for (const auto & input : svdlr_batch::FindBatchInputs(selection))
  {
    found.emplace_back(input.path, input.relative);
  }
  return found;
}

} // namespace

void
DefineDenoiseRules(nb::module_ & module)
{
  module.def(
    "magnitude_noise_used",
    [](const std::string & policy, bool automatic, bool vst, bool noiseFloor, bool sigmaFloorCorrection,
       bool knownSigma, bool gfactor, bool estimateGFactor, bool negativeValues) {
      LocalDenoiseOptions options;
      ParseOption("policy", policy, &ParsePolicyName, &PolicyNames, options.policy);
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
      ParseOption("shrinkage", shrinkage, &ParseShrinkageName, &ShrinkageNameList, requested);
      ParseOption("policy", policy, &ParsePolicyName, &PolicyNames, rankPolicy);
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
      const char * rule = "patch_size_used takes the 3 spatial extents (>= 1), the volume count (>= 1) and "
                          "optionally the 3 patch extents asked for (>= 0)";
      if (volumes < 1)
      {
        ThrowValueError(rule);
      }
      // Array order in and out, the engine's (x = the last spatial array axis) inside, as denoise_local_low_rank.
      const std::array<std::size_t, 3> used =
        PatchSizeUsed(EngineOrder(shape, 1, rule), static_cast<std::size_t>(volumes),
                      requested ? EngineOrder(*requested, 0, rule) : std::array<std::size_t, 3>{});
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
      const char * rule = "sphere_patch_used takes the 3 spatial extents (>= 1), the volume count (>= 1) and a "
                          "radius >= 0";
      if (volumes < 1 || !(std::isfinite(radius) && radius >= 0.0))
      {
        ThrowValueError(rule);
      }
      const SpherePatch sphere = SpherePatchUsed(EngineOrder(shape, 1, rule), static_cast<std::size_t>(volumes), radius);
      return nb::make_tuple(sphere.radius, sphere.voxels);
    },
    "shape"_a, "volumes"_a, "radius"_a = 0.0,
    "The spherical patch a denoising run uses on a series of this spatial shape (array order) and volume count:\n"
    "(radius, voxels), for `radius` as given or, for 0, the default (svdlr::SpherePatchUsed, the one rule the\n"
    "engine and the tools use). The BIDS App records it in each run's sidecar.");
}

void
DefineSliceStack(nb::module_ & module)
{
  module.def(
    "slice_axes",
    [](unsigned int dimension, std::optional<std::int64_t> sliceDimension) {
      const SliceAxes axes = CheckedSliceAxes(dimension, sliceDimension);
      return std::make_tuple(axes.columnAxis, axes.rowAxis, axes.stackAxis);
    },
    "dimension"_a,
    "slice_dimension"_a = nb::none(),
    "(column_axis, row_axis, stack_axis) of the slices of a 2D or 3D image, in ITK's axis numbering (svdlr/SliceStack.h); "
    "slice_dimension None: the default (the last axis). ValueError when the image cannot be cut so.");
  module.def("works_in_double",
             &WorksInDouble,
             "input_is_double"_a,
             "output_is_double"_a,
             "Whether the reconstruction runs in float64 for these pixel types (svdlr/SliceStack.h).");
  module.def(
    "non_finite_slice_message",
    [](unsigned int dimension, long long slice, std::optional<std::int64_t> sliceDimension) {
      std::string message = NonFiniteSliceMessage(dimension, slice, CheckedSliceAxes(dimension, sliceDimension));
      message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
      return "svdlr: " + message;
    },
    "dimension"_a,
    "slice"_a,
    "slice_dimension"_a = nb::none(),
    "The message for NaN or Inf in a slice, as the ITK filter words it (svdlr/SliceStack.h).");
}

void
DefineComplex(nb::module_ & module)
{
  module.def("demodulate_phase", &DemodulatePhaseArrays, "real"_a, "imag"_a, nb::kw_only(),
             "filter_sigma"_a = std::array<double, 3>{ 0.0, 2.0, 2.0 }, "threads"_a = 0u,
             R"doc(Removes each volume's smooth phase from a complex series: svdlr::DemodulatePhase.

real, imag : float32 C-ordered arrays of shape (volumes, n0, n1, n2)
filter_sigma : the Gaussian's standard deviation in voxels along n0, n1, n2 (0: no smoothing along that axis)
threads : CPU threads, 0 for all

Returns (phase, demodulated_real), both of the input's shape: the smooth phase in radians and Re(z e^{-i phase}).
Most users want local_low_rank_denoising_image_filter(..., phase=...).)doc");
}

void
DefineBatchRules(nb::module_ & module)
{
  module.def("batch_default_patterns", &svdlr_batch::DefaultImagePatterns,
             "The patterns a folder search takes by default (NIfTI, NRRD, MetaImage, Analyze headers).");
  module.def("batch_bids_patterns", &svdlr_batch::BidsPatterns, "The patterns of a BIDS-like layout's anatomy.");
  module.def("batch_find_inputs", &FindInputs, "paths"_a, nb::kw_only(), "patterns"_a = std::vector<std::string>{},
             "bids"_a = false, "exclude"_a = "",
             "[(path, relative)] of the volumes among `paths`, in the tool's order (see _batch.find_volumes).");
  module.attr("BATCH_DENOISED_TAG") = svdlr_batch::DenoisedTag;
  module.attr("BATCH_SIGMA_MAP_TAG") = svdlr_batch::SigmaMapTag;
  module.attr("BATCH_RANK_MAP_TAG") = svdlr_batch::RankMapTag;
  module.def(
    "batch_output_path",
    [](const std::string & relative, const std::string & outputRoot, const std::string & tag) {
      svdlr_batch::BatchInput input;
      input.relative = relative;
      return svdlr_batch::OutputPathFor(input, outputRoot, tag);
    },
    "relative"_a, "output_root"_a, "tag"_a,
    "Where an image file found at `relative` goes under `output_root`: `_<tag>` before its extension.");
  module.def("remove_stale_partials_beside", &svdlr_io::RemoveStalePartialsBeside, "target"_a,
             "Removes the hidden partial outputs beside `target` (.NAME.partial-PID..., .STEM.partial-PID...) whose "
             "process no longer runs (killed with SIGKILL, a machine that lost power), as the tools do before each "
             "write; a running process's, this one's included, are kept.");
  module.def(
    "partial_name_parts",
    [](const std::string & name) {
      const svdlr_io::PartialFileName parts = svdlr_io::SplitForPartial(name);
      return std::make_pair(svdlr_io::PartialNameStart(parts.stem), parts.extension);
    },
    "name"_a,
    "How the tools name a partial output of the file `name`: (start, extension), the temporary being\n"
    "start + PID + ... + extension (\".STEM.partial-\", a long stem cut and tagged with its hash so that any legal\n"
    "name stays within 255 bytes; the extension that picks ITK's writer). One rule for the tools and Python.");
  // What the denoiser's maps hold, for their sidecars (svdlr/OutputMaps.h: the tool writes the same).
  nb::dict maps;
  for (const svdlr::OutputMap * map : { &svdlr::kNoiseMap, &svdlr::kRankMap })
  {
    nb::dict entry;
    entry["label"] = map->label;
    entry["description"] = map->description;
    entry["units"] = map->units;
    maps[map->label] = entry;
  }
  module.attr("OUTPUT_MAPS") = maps;
}

} // namespace python
} // namespace svdlr
