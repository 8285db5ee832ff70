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
// `denoise_local_low_rank`: one call of svdlr::DenoiseLocalLowRank on a 4D float32 array in host memory, in any
// axis order and with any strides. The volume axis is named by the caller; the other three are the spatial axes,
// in array order (a0, a1, a2), which the engine sees as (z, y, x): then C-ordered 3D arrays of shape
// (n0, n1, n2) are exactly the engine's x-fastest maps, so that mask, noise_sigma and the maps returned need no
// reordering, and patch sizes and voxel indices are given and reported in array order.
#include "svdlrPyModule.h"

#include "svdlrPyErrors.h"
#include "svdlrPyProgress.h"
#include "svdlrPyRankPolicy.h"

#include "svdlr/DenoisePresets.h"
#include "svdlr/LocalDenoise.h"
#include "svdlr/MagnitudeNoise.h"
#include "svdlr/Names.h"
#include "svdlr/VolumeGroups.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nb = nanobind;
using namespace nb::literals;

namespace svdlr
{
namespace python
{
namespace
{

// Any strides, so that a float32 view (ITK's, nibabel's, a transposed or sliced array) is read where it is;
// nanobind converts other dtypes to float32 (a copy) before the call.
using SeriesArray = nb::ndarray<nb::ro, float, nb::device::cpu>;
using MaskArray = nb::ndarray<nb::ro, std::uint8_t, nb::c_contig, nb::device::cpu>;
using SigmaArray = nb::ndarray<nb::ro, float, nb::c_contig, nb::device::cpu>;

/** A shape as Python prints the tuple: "(2, 3)", "(4,)". */
std::string
ShapeText(const std::vector<std::size_t> & shape)
{
  return nb::str(nb::tuple(nb::cast(shape))).c_str();
}

/** The series' axes: which array axis holds the volumes, and the spatial axes a0, a1, a2 in array order. */
struct SeriesAxes
{
  std::size_t volume{ 0 };
  std::size_t spatial[3]{ 1, 2, 3 };
};

SeriesAxes
AxesOf(const SeriesArray & series, std::int64_t volumeAxis)
{
  if (series.ndim() != 4)
  {
    ThrowValueError("expected a 4D series (three spatial axes and one axis of volumes), got " +
                    std::to_string(series.ndim()) + " dimensions, shape " + ShapeText(ShapeVector(series)));
  }
  CheckedRange("volume_axis", volumeAxis, "in [-4, 3]", -4, 3);
  SeriesAxes axes;
  axes.volume = static_cast<std::size_t>(volumeAxis < 0 ? volumeAxis + 4 : volumeAxis);
  for (std::size_t axis = 0, i = 0; axis < 4; ++axis)
  {
    if (axis != axes.volume)
    {
      axes.spatial[i++] = axis;
    }
  }
  return axes;
}

/** The engine's view of an array of the series' shape: x = a2, y = a1, z = a0 (element strides, as DLPack's). */
template <typename T>
SeriesView<T>
ViewOf(T * data, const std::size_t * shape, const std::int64_t * strides, const SeriesAxes & axes)
{
  SeriesView<T> view;
  view.data = data;
  for (std::size_t i = 0; i < 3; ++i)
  {
    const std::size_t axis = axes.spatial[2 - i];
    view.size[i] = shape[axis];
    view.strides[i] = static_cast<std::ptrdiff_t>(strides[axis]);
  }
  view.volumes = shape[axes.volume];
  view.strides[3] = static_cast<std::ptrdiff_t>(strides[axes.volume]);
  return view;
}

/** A 3D input on the spatial grid (mask, noise_sigma): its shape must be the spatial shape. */
template <typename TArray>
void
CheckGrid(const TArray & array, const std::vector<std::size_t> & grid, const char * name)
{
  const std::vector<std::size_t> shape = ShapeVector(array);
  if (shape != grid)
  {
    ThrowValueError(std::string(name) + " has shape " + ShapeText(shape) + ", but the series' spatial shape is " +
                    ShapeText(grid) + " (its axes other than the volume axis, in array order)");
  }
}

nb::tuple
VoxelIndex(std::size_t voxel, const std::vector<std::size_t> & grid)
{
  return nb::make_tuple(voxel / (grid[1] * grid[2]), voxel / grid[2] % grid[1], voxel % grid[2]);
}

std::string
VoxelText(std::size_t voxel, const std::vector<std::size_t> & grid)
{
  return nb::str(VoxelIndex(voxel, grid)).c_str();
}

/** ValueError naming the voxel (in array order) that holds NaN or Inf; `voxel` attribute: its index tuple. */
[[noreturn]] void
RaiseNonFinite(std::size_t voxel, const std::vector<std::size_t> & grid)
{
  RaisePythonError(PyExc_ValueError,
                   "svdlr: the series holds NaN or Inf at voxel " + VoxelText(voxel, grid) +
                     " (indices along the spatial axes, in array order)",
                   { { "error_code", nb::str(ErrorCodeName(ErrorCode::NonFiniteInput)) },
                     { "matrix_index", nb::none() },
                     { "voxel", VoxelIndex(voxel, grid) } });
}

/** ValueError for a patch_size extent longer than its spatial axis, named in array order (the order patch_size is
 * given in); `patch_axis` attribute: that extent's index. The engine checks the same, but names its own axes (its x is
 * the last array axis), which would name another axis than the caller's. */
[[noreturn]] void
RaisePatchTooLarge(std::size_t axis, std::int64_t extent, const std::vector<std::size_t> & grid)
{
  RaisePythonError(PyExc_ValueError,
                   "svdlr: patch_size[" + std::to_string(axis) + "] = " + std::to_string(extent) +
                     " exceeds the series' " + std::to_string(grid[axis]) + " voxels along that axis (spatial shape " +
                     ShapeText(grid) + ", in array order)",
                   { { "error_code", nb::str(ErrorCodeName(ErrorCode::InvalidArgument)) },
                     { "patch_axis", nb::cast(axis) } });
}

nb::tuple
DenoiseArray(SeriesArray                               series,
             std::int64_t                              volumeAxis,
             std::optional<std::vector<std::int64_t>>  patchSize,
             std::int64_t                              patchStride,
             std::optional<std::string>                patchShape,
             double                                    patchRadius,
             std::optional<std::string>                aggregation,
             std::optional<std::string>                shrinkage,
             std::optional<std::string>                policy,
             std::optional<std::int64_t>               rank,
             std::optional<double>                     energyFraction,
             std::optional<MaskArray>                  mask,
             std::optional<SigmaArray>                 noiseSigma,
             const std::string &                       backend,
             std::int64_t                              deviceId,
             std::int64_t                              maxPatchesPerBatch,
             std::optional<std::string>                gpuMemoryLimit,
             std::int64_t                              threads,
             nb::object                                progress,
             std::optional<std::string>                preset,
             bool                                      vst,
             bool                                      noiseFloor,
             std::int64_t                              coils,
             std::optional<std::vector<std::int64_t>>  volumeGroups,
             std::optional<std::string>                noiseEstimator,
             bool                                      sigmaFloorCorrection,
             std::optional<SigmaArray>                 gfactor,
             bool                                      estimateGFactor,
             std::optional<bool>                       automaticMagnitudeModel)
{
  const SeriesAxes axes = AxesOf(series, volumeAxis);
  LocalDenoiseOptions options; // the preset's ("default": Defaults.h's without one), then the keywords given
  const DenoisePreset * named = &DenoisePresets().front();
  ParseOption("preset", preset, +[](const std::string & name, const DenoisePreset *& found) {
    return (found = FindDenoisePreset(name)) != nullptr;
  }, &DenoisePresetNameList, named);
  ApplyDenoisePreset(*named, options);
  // The reconstruction's keywords (svdlrPyRankPolicy.h); noise_sigma is the denoiser's map, not a policy parameter.
  options.policy = RankPolicyFrom({ policy, "policy", rank, energyFraction, std::nullopt }, PolicyName(options.policy));
  const std::string problem = PolicyProblem(options.policy, Solver::Exact);
  if (!problem.empty())
  {
    ThrowValueError(problem);
  }
  if (patchSize)
  {
    if (patchSize->size() != 3)
    {
      ThrowValueError("patch_size must give 3 extents (along the spatial axes, in array order), got " +
                      std::to_string(patchSize->size()));
    }
    for (std::size_t i = 0; i < 3; ++i)
    {
      options.patchSize[i] = static_cast<std::size_t>(
        CheckedRange("patch_size extents", (*patchSize)[2 - i], "odd and >= 1", 1)); // engine x = array axis a2
    }
  }
  options.patchStride = static_cast<std::size_t>(
    CheckedRange("patch_stride", patchStride, ">= 1 (or 0, AUTO_PATCH_STRIDE: the default rule)", 0));
  ParseOption("patch_shape", patchShape, &ParsePatchShapeName, &PatchShapeNameList, options.patchShape);
  if (!(std::isfinite(patchRadius) && patchRadius >= 0.0))
  {
    ThrowValueError("patch_radius must be finite and >= 0 (0: the default sphere), got " + std::to_string(patchRadius));
  }
  if (patchRadius > 0.0 && !patchShape)
  {
    options.patchShape = PatchShape::Sphere; // a radius implies a sphere
  }
  if (options.patchShape == PatchShape::Sphere && patchSize)
  {
    ThrowValueError("patch_size sets a cuboid's extent; a sphere takes patch_radius");
  }
  if (options.patchShape == PatchShape::Cuboid && patchRadius > 0.0)
  {
    ThrowValueError("patch_radius needs patch_shape \"sphere\"");
  }
  options.patchRadius = patchRadius;
  ParseOption("aggregation", aggregation, &ParseAggregationName, &AggregationNameList, options.aggregation);
  ParseOption("shrinkage", shrinkage, &ParseShrinkageName, &ShrinkageNameList, options.shrinkage);
  ParseOption("backend", backend, &ParseName, &BackendNames, options.backend);
  options.deviceId = static_cast<int>(CheckedRange("device_id", deviceId, ">= 0", 0, INT_MAX));
  options.maxPatchesPerBatch = static_cast<std::size_t>(
    CheckedRange("max_patches_per_batch", maxPatchesPerBatch, ">= 0 (0: the backend chooses)", 0));
  ParseOption("gpu_memory_limit", gpuMemoryLimit, &ParseDeviceMemoryLimit,
              [] { return std::string(ByteSizeSyntax()) + " or \"" + kNoDeviceMemoryLimitName + "\""; },
              options.deviceMemoryLimit);
  options.threads =
    static_cast<unsigned>(CheckedRange("threads", threads, ">= 0 (0: all hardware threads)", 0, UINT_MAX));
  options.magnitudeNoise.coils = static_cast<unsigned>(CheckedRange("coils", coils, ">= 1", 1, UINT_MAX));
  options.magnitudeNoise.stabilise = vst;
  options.magnitudeNoise.noiseFloor = noiseFloor;
  options.magnitudeNoise.sigmaFloorCorrection = sigmaFloorCorrection;
  options.magnitudeNoise.automatic = automaticMagnitudeModel.value_or(options.magnitudeNoise.automatic);
  ParseOption("noise_estimator", noiseEstimator, &ParseNoiseEstimatorName, &NoiseEstimatorNameList,
              options.noiseEstimator);
  if (options.magnitudeNoise.Active() && !noiseSigma && !PatchesHaveSigma(options.policy, false))
  {
    ThrowValueError(std::string(vst ? "vst" : noiseFloor ? "noise_floor" : "sigma_floor_correction") +
                    " needs sigma: give noise_sigma, or keep a policy that estimates it (the default does)");
  }

  const std::vector<std::size_t> shape = ShapeVector(series);
  const std::vector<std::size_t> grid{ shape[axes.spatial[0]], shape[axes.spatial[1]], shape[axes.spatial[2]] };
  const std::size_t              voxels = grid[0] * grid[1] * grid[2];
  for (std::size_t axis = 0; patchSize && axis < 3; ++axis)
  {
    if (static_cast<std::size_t>((*patchSize)[axis]) > grid[axis])
    {
      RaisePatchTooLarge(axis, (*patchSize)[axis], grid);
    }
  }
  if (mask)
  {
    CheckGrid(*mask, grid, "mask");
    options.mask = mask->data();
  }
  if (noiseSigma)
  {
    CheckGrid(*noiseSigma, grid, "noise_sigma");
    const float * sigma = noiseSigma->data();
    for (std::size_t v = 0; v < voxels; ++v)
    {
      if (!(std::isfinite(sigma[v]) && sigma[v] >= 0.0f))
      {
        ThrowValueError("noise_sigma must be finite and >= 0, got " + std::to_string(sigma[v]) + " at voxel " +
                        VoxelText(v, grid));
      }
    }
    options.noiseSigma = sigma;
  }
  if (gfactor)
  {
    CheckGrid(*gfactor, grid, "gfactor");
    // The engine's rule, naming the voxel in array order (the engine's x is the last array axis).
    const std::size_t v = FirstInvalidGFactorVoxel(gfactor->data(), voxels);
    if (v < voxels)
    {
      ThrowValueError("gfactor must be finite and > 0 at every voxel (outside the mask too: fill it with 1 there), "
                      "got " + std::to_string(gfactor->data()[v]) + " at voxel " + VoxelText(v, grid));
    }
    options.gfactor = gfactor->data();
  }
  const std::string estimateProblem = GFactorEstimateProblem(gfactor.has_value(), options.magnitudeNoise.Active());
  if (estimateGFactor && !estimateProblem.empty())
  {
    ThrowValueError("estimate_gfactor: " + estimateProblem);
  }
  options.estimateGFactor = estimateGFactor;

  std::vector<std::uint32_t> groups;
  if (volumeGroups)
  {
    const std::size_t volumes = shape[axes.volume];
    if (volumeGroups->size() != volumes)
    {
      ThrowValueError("volume_groups holds " + std::to_string(volumeGroups->size()) + " groups for " +
                      std::to_string(volumes) + " volumes: one per volume");
    }
    for (const std::int64_t group : *volumeGroups)
    {
      if (group < 0 || group >= static_cast<std::int64_t>(volumes))
      {
        ThrowValueError("volume_groups must be 0 .. groups - 1, got " + std::to_string(group));
      }
      groups.push_back(static_cast<std::uint32_t>(group));
    }
    options.volumeGroups = groups.data();
  }

  std::int64_t inputStrides[4];
  for (std::size_t i = 0; i < 4; ++i)
  {
    inputStrides[i] = series.stride(i);
  }
  const SeriesView<const float> input = ViewOf(series.data(), shape.data(), inputStrides, axes);

  // The denoised series takes the input's memory order (its axes ranked by stride): a nibabel array (x fastest), or
  // the reversed view of one, comes back in the order NIfTI writes, without a transposing copy of the whole series.
  std::array<std::size_t, 4> slowestFirst{ 0, 1, 2, 3 };
  std::stable_sort(slowestFirst.begin(), slowestFirst.end(), [&](std::size_t a, std::size_t b) {
    return std::llabs(inputStrides[a]) > std::llabs(inputStrides[b]);
  });
  std::size_t                memoryShape[4];
  std::array<std::size_t, 4> position{};
  for (std::size_t j = 0; j < 4; ++j)
  {
    memoryShape[j] = shape[slowestFirst[j]];
    position[slowestFirst[j]] = j;
  }
  float *      denoisedData = nullptr;
  nb::object   denoised = NewNumpyArray(4, memoryShape, denoisedData)
                          .attr("transpose")(nb::make_tuple(position[0], position[1], position[2], position[3]));
  std::int64_t outputStrides[4];
  for (std::int64_t j = 3, stride = 1; j >= 0; --j)
  {
    const std::size_t axis = slowestFirst[static_cast<std::size_t>(j)];
    outputStrides[axis] = stride;
    stride *= static_cast<std::int64_t>(shape[axis]);
  }
  const SeriesView<float> output = ViewOf(denoisedData, shape.data(), outputStrides, axes);

  LocalDenoiseMaps maps;
  nb::object       sigmaMap = NewNumpyArray(grid.size(), grid.data(), maps.noiseSigma); // the engine fills maps in C order
  nb::object       rankMap = NewNumpyArray(grid.size(), grid.data(), maps.rank);

  ProgressRelay relay(std::move(progress));
  options.progress = relay.Callback();
  try
  {
    nb::gil_scoped_release release;
    DenoiseLocalLowRank(input, output, maps, options);
  }
  catch (const Error & error)
  {
    // The GIL is held again here. An exception raised in the progress callback (Ctrl-C, or the caller's own)
    // is what stopped the engine: raise that one rather than the engine's Aborted.
    relay.RaisePending();
    if (error.Code() == ErrorCode::NonFiniteInput && error.Matrix() >= 0)
    {
      // The engine names the voxel x fastest, x = a2: that is the C-order index over the spatial grid.
      RaiseNonFinite(static_cast<std::size_t>(error.Matrix()), grid);
    }
    throw; // TranslateErrors (svdlrPyModule.cpp)
  }
  relay.RaisePending();
  return nb::make_tuple(denoised, sigmaMap, rankMap);
}

} // namespace

void
DefineDenoise(nb::module_ & module)
{
  module.def("denoise_local_low_rank",
             &DenoiseArray,
             "series"_a,
             nb::kw_only(),
             "volume_axis"_a = 0,
             "patch_size"_a = nb::none(),
             "patch_stride"_a = static_cast<std::int64_t>(kAutoPatchStride),
             "patch_shape"_a = nb::none(),
             "patch_radius"_a = 0.0,
             "aggregation"_a = nb::none(),
             "shrinkage"_a = nb::none(),
             "policy"_a = nb::none(),
             "rank"_a = nb::none(),
             "energy_fraction"_a = nb::none(),
             "mask"_a = nb::none(),
             "noise_sigma"_a = nb::none(),
             "backend"_a = "auto",
             "device_id"_a = 0,
             "max_patches_per_batch"_a = 0,
             "gpu_memory_limit"_a = nb::none(),
             "threads"_a = 0,
             "progress"_a = nb::none(),
             "preset"_a = nb::none(),
             "vst"_a = false,
             "noise_floor"_a = false,
             "coils"_a = kDefaultCoils,
             "volume_groups"_a = nb::none(),
             "noise_estimator"_a = nb::none(),
             "sigma_floor_correction"_a = false,
             "gfactor"_a = nb::none(),
             "estimate_gfactor"_a = kDefaultEstimateGFactor,
             "automatic_magnitude_model"_a = nb::none(),
             R"doc(Denoises a 4D float32 host series by local low-rank approximation: svdlr::DenoiseLocalLowRank.

The engine's entry point behind itk_svdlowrankreconstruction.local_low_rank_denoising_image_filter, whose
docstring describes the keywords they share. Here only:
volume_axis : int
    The axis holding the volumes: 0 for ITK's NumPy view (volumes, z, y, x), -1 or 3 for nibabel's (x, y, z,
    volumes). The other three are the spatial axes, in array order, which patch_size, mask, noise_sigma, gfactor
    and the maps returned follow.
patch_stride : int >= 0
    0 (AUTO_PATCH_STRIDE, the default): the engine's rule (patch_stride_used).
mask, noise_sigma, gfactor : C-contiguous arrays of the spatial shape (uint8, float32, float32), optional
volume_groups : sequence of int, optional
    The group of each volume, 0 .. groups - 1, whose means are removed (demean_groups builds them); None: none.
automatic_magnitude_model : bool, optional
    The filter's magnitude_model.

Returns (denoised, noise_map, rank_map): a new float32 array of the series' shape, and the float32 sigma and uint16
rank maps of the spatial shape. NaN or Inf in the series raises ValueError naming the voxel (attribute `voxel`).)doc");
  module.def(
    "demean_groups",
    [](const std::string & demean, std::int64_t volumes, std::int64_t echoes,
       std::optional<std::vector<double>> bvalues) {
      Demean choice{};
      ParseOption("demean", demean, &ParseDemeanName, &DemeanNameList, choice);
      if (volumes < 0 || echoes < 1)
      {
        ThrowValueError("volumes must be >= 0 and echoes >= 1");
      }
      return DemeanGroups(choice, static_cast<std::size_t>(volumes), static_cast<std::size_t>(echoes),
                          bvalues.value_or(std::vector<double>{}));
    },
    "demean"_a, "volumes"_a, "echoes"_a = 1, "bvalues"_a = nb::none(),
    "The group of each volume that `demean` (\"none\", \"all\", \"shells\", \"echoes\") stands for, the engine's\n"
    "rule (svdlr::DemeanGroups): [] for none; for shells, one b-value per volume; for echoes, `echoes` >= 2 equal\n"
    "blocks of volumes stacked echo after echo. ValueError for counts that do not fit.");
  module.def(
    "shell_groups",
    [](const std::vector<double> & bvalues, double tolerance) { return ShellGroups(bvalues, tolerance); },
    "bvalues"_a, "tolerance"_a = kShellBValueTolerance,
    "The shell of each volume: b-values within `tolerance` s/mm^2 of their sorted neighbour are one shell (MRtrix3's\n"
    "rule), shells numbered from the lowest b-value (svdlr::ShellGroups).");
  module.attr("DEMEAN_CHOICES") = nb::tuple(nb::cast(DemeanNameList()));
  module.attr("DEFAULT_DEMEAN") = DemeanName(kDefaultDemean);
  module.attr("DEFAULT_ESTIMATE_GFACTOR") = kDefaultEstimateGFactor;
  module.attr("DENOISE_PRESETS") = nb::tuple(nb::cast(DenoisePresetNameList()));
  DefineDenoiseRules(module);
}

} // namespace python
} // namespace svdlr
