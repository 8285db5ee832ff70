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
#ifndef svdlrPyModule_h
#define svdlrPyModule_h

// The parts of the extension module `_engine`, which svdlrPyModule.cpp puts together, and the arrays they return.

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace svdlr
{
namespace python
{

/** Adds `reconstruct` and `check_options`, with the reconstruction's names and defaults. */
void
DefineReconstruct(nanobind::module_ & module);

/** Adds svdlr/SliceStack.h's rules for _filter.py: `slice_axes`, `works_in_double`, `non_finite_slice_message`. */
void
DefineSliceStack(nanobind::module_ & module);

/** Adds `denoise_local_low_rank`, `demean_groups`, `shell_groups` and the denoiser's names, then DefineDenoiseRules. */
void
DefineDenoise(nanobind::module_ & module);

/** Adds the engine's rules that the Python layer and the BIDS App read before a run, each the engine's one function:
 * shrinkage_used, magnitude_noise_used, gfactor_known_sigma_problem, sigma_floor_correction_problem,
 * patch_size_used, patch_stride_used, sphere_patch_used (svdlrPyDenoiseRules.cpp). */
void
DefineDenoiseRules(nanobind::module_ & module);

/** Adds `demodulate_phase(real, imag, *, filter_sigma, threads)` to `module`. */
void
DefineComplex(nanobind::module_ & module);

/** Adds the batch rules of SVDLowRankReconstructImage --batch (apps/batch/SVDLowRankBatchInputs.h), the one
 * implementation the Python batch layer (_batch.py) calls: how inputs are found, outputs and partials named. */
void
DefineBatchRules(nanobind::module_ & module);

/** Adds `batch_pipeline`: the tools' batch pipeline (apps/batch/SVDLowRankBatchStages.h) with Python's steps, for
 * _denoise_batch.denoise_batch. */
void
DefineBatchPipeline(nanobind::module_ & module);

/** Adds the tools' NIfTI pixel reader, gradient-table check and gzip writer, so that the Python per-series path
 * (_nifti_series.py: the BIDS App, Dask, Nipype) reads and writes .nii.gz as fast as the tools and gives the denoiser
 * the same numbers. nibabel keeps the headers. */
void
DefineNiftiIO(nanobind::module_ & module);

/** A new C-ordered NumPy array of `ndim` dimensions (transpose it for another memory order); `data` receives its
 * buffer (left uninitialised). NumPy itself allocates it: it asks the kernel for huge pages on large arrays, so the
 * engine's first write into a fresh result takes a few hundred page faults instead of one per 4 KiB (12.7 ms of a
 * 22.7 ms W1 call on the H100 machine with `new[]`, docs/performance.md). Needs the GIL. */
template <typename T>
nanobind::object
NewNumpyArray(std::size_t ndim, const std::size_t * shape, T *& data)
{
  namespace nb = nanobind;
  nb::list dimensions;
  for (std::size_t i = 0; i < ndim; ++i)
  {
    dimensions.append(shape[i]);
  }
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, std::int64_t> ||
                std::is_same_v<T, std::uint16_t>);
  const char * dtype = std::is_same_v<T, float>          ? "float32"
                       : std::is_same_v<T, double>       ? "float64"
                       : std::is_same_v<T, std::int64_t> ? "int64"
                                                         : "uint16";
  nb::object array = nb::module_::import_("numpy").attr("empty")(nb::tuple(dimensions), dtype);
  data = static_cast<T *>(nb::cast<nb::ndarray<nb::numpy, T>>(array).data());
  return array;
}

/** The extents of `array` (a nanobind::ndarray), to compare or to allocate by. */
template <typename TArray>
std::vector<std::size_t>
ShapeVector(const TArray & array)
{
  std::vector<std::size_t> shape(array.ndim());
  for (std::size_t i = 0; i < shape.size(); ++i)
  {
    shape[i] = array.shape(i);
  }
  return shape;
}

} // namespace python
} // namespace svdlr

#endif
