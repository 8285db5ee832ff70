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
// The extension module `itk_svdlowrankreconstruction._engine`: the ITK-free engine, for the Python layer.
#include "svdlrPyModule.h"
#include "svdlrPyErrors.h"
#include "svdlrPyRankPolicy.h"

#include "svdlr/Defaults.h"
#include "svdlr/CpuThreads.h"
#include "svdlr/Engine.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <exception>
#include <string>
#include <utility>

#include "SVDLowRankBatchInputs.h"
#include "SVDLowRankExitCodes.h"
#include "SVDLowRankImageFileCheck.h"
#include "SVDLowRankImageFileErrors.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace svdlr
{
namespace python
{

namespace
{

/** Each ErrorCode's name, as in the C++ enum, and the Python exception it becomes. */
std::pair<const char *, PyObject *>
ErrorCodeInfo(ErrorCode code)
{
  switch (code)
  {
    case ErrorCode::InvalidArgument:
      return { "InvalidArgument", PyExc_ValueError };
    case ErrorCode::NonFiniteInput:
      return { "NonFiniteInput", PyExc_ValueError };
    case ErrorCode::BackendUnavailable:
      return { "BackendUnavailable", PyExc_RuntimeError };
    case ErrorCode::DeviceFailure:
      return { "DeviceFailure", PyExc_RuntimeError };
    case ErrorCode::OutOfMemory:
      return { "OutOfMemory", PyExc_RuntimeError };
    case ErrorCode::NumericalFailure:
      return { "NumericalFailure", PyExc_RuntimeError };
    case ErrorCode::Aborted:
      return { "Aborted", PyExc_KeyboardInterrupt };
  }
  return { "Unknown", PyExc_RuntimeError };
}

/** Sets the Python exception `type(message)` with these attributes (name, value), e.g. the engine's `error_code`. */
void
SetPythonError(PyObject * type, const std::string & message,
               std::initializer_list<std::pair<const char *, nb::object>> attributes)
{
  nb::object exception = nb::handle(type)(nb::str(message.c_str()));
  for (const auto & [name, value] : attributes)
  {
    exception.attr(name) = value;
  }
  PyErr_SetObject(type, exception.ptr());
}

/** The Python exception of an engine's or a tool's error that leaves a binding (nanobind calls it with the GIL held):
 *   svdlr::Error: InvalidArgument, NonFiniteInput                     -> ValueError
 *                 BackendUnavailable, DeviceFailure, OutOfMemory,
 *                 NumericalFailure                                    -> RuntimeError
 *                 Aborted                                             -> KeyboardInterrupt
 *     with two attributes: `error_code` (the ErrorCode's name, e.g. "NonFiniteInput") and `matrix_index` (the
 *     offending matrix of the batch, or None), so that the Python layer can name the slice;
 *   svdlr_io::ImageFileError (SVDLowRankImageFileErrors.h): OSError when the file cannot be read as it is (unreadable,
 *     truncated, corrupt), ValueError when what it says cannot be used (an impossible header, NaN or Inf, values
 *     beyond float32);
 *   svdlr_batch::MissingBatchInput: FileNotFoundError; the other BatchInputErrors: ValueError.
 * Other exceptions go on to nanobind's own translation. */
void
TranslateErrors(const std::exception_ptr & thrown, void *)
{
  try
  {
    std::rethrow_exception(thrown);
  }
  catch (const Error & error)
  {
    SetPythonError(ErrorCodeInfo(error.Code()).second, error.what(),
                   { { "error_code", nb::str(ErrorCodeName(error.Code())) },
                     { "matrix_index", error.Matrix() >= 0 ? nb::object(nb::int_(error.Matrix())) : nb::none() } });
  }
  catch (const svdlr_io::ImageFileError & error)
  {
    const bool unusable = dynamic_cast<const svdlr_io::InvalidImageFile *>(&error) != nullptr ||
                          dynamic_cast<const svdlr_io::NonFiniteImageFile *>(&error) != nullptr ||
                          dynamic_cast<const svdlr_io::OverflowingImageFile *>(&error) != nullptr;
    PyErr_SetString(unusable ? PyExc_ValueError : PyExc_OSError, error.what());
  }
  catch (const svdlr_batch::MissingBatchInput & error)
  {
    PyErr_SetString(PyExc_FileNotFoundError, error.what());
  }
  catch (const svdlr_batch::BatchInputError & error)
  {
    PyErr_SetString(PyExc_ValueError, error.what());
  }
}

} // namespace

const char *
ErrorCodeName(ErrorCode code)
{
  return ErrorCodeInfo(code).first;
}

[[noreturn]] void
ThrowValueError(const std::string & message)
{
  throw nanobind::value_error(("svdlr: " + message).c_str());
}

std::string
QuotedNames(const std::vector<std::string> & names)
{
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i)
  {
    list += (i == 0 ? "\"" : (i + 1 == names.size() ? " or \"" : ", \"")) + names[i] + "\"";
  }
  return list;
}

void
RaisePythonError(PyObject * type, const std::string & message,
                 std::initializer_list<std::pair<const char *, nb::object>> attributes)
{
  SetPythonError(type, message, attributes);
  throw nb::python_error();
}

} // namespace python
} // namespace svdlr

#ifndef SVDLR_PY_VERSION
#  define SVDLR_PY_VERSION "0+unknown"
#endif

NB_MODULE(_engine, module)
{
  module.doc() = "Rank-k truncated SVD reconstruction of batches of matrices (the ITK-free svdlr engine).";
  nb::register_exception_translator(&svdlr::python::TranslateErrors);

  svdlr::python::DefineReconstruct(module);
  svdlr::python::DefineSliceStack(module);
  svdlr::python::DefineDenoise(module);
  svdlr::python::DefineComplex(module);
  svdlr::python::DefineBatchRules(module);
  svdlr::python::DefineBatchPipeline(module);
  svdlr::python::DefineRankPolicy(module);
  svdlr::python::DefineNiftiIO(module);

  module.def("cuda_backend_built", &svdlr::CudaBackendBuilt, "True when this build has the CUDA backend compiled in.");
  module.def("cuda_device_count", &svdlr::CudaDeviceCount,
             "How many CUDA devices this process sees (0 without the CUDA backend or a driver).");

  module.def("usable_cpu_threads", &svdlr::UsableCpuThreads,
             "What every core means where threads=0: the CPUs this thread may run on (its affinity mask), at most\n"
             "the cap of limit_cpu_threads.");
  module.def("limit_cpu_threads", &svdlr::LimitCpuThreads, "most"_a,
             "Caps usable_cpu_threads() for this whole process at `most` (0 lifts the cap): the engine, gzip and\n"
             "the batch pipeline then use at most that many threads where threads=0 (denoise_with_dask gives each\n"
             "worker on a host its share).");

  module.def(
    "cuda_device_usable",
    [](int deviceId) {
      std::string why;
      bool        usable = false;
      {
        nb::gil_scoped_release release;
        usable = svdlr::CudaDeviceUsable(deviceId, &why);
      }
      return nb::make_tuple(usable, why);
    },
    "device_id"_a = 0,
    "(usable, why): whether CUDA device `device_id` can run the CUDA backend, and if not, why.");

  module.def(
    "release_cuda_resources",
    [] {
      nb::gil_scoped_release release; // freeing device memory may wait for the device
      svdlr::ReleaseCudaResources();
    },
    "Frees the GPU memory, streams and handles the CUDA backend keeps between runs (no-op without CUDA).");

  module.def(
    "check_image_file",
    [](const std::string & path, bool values) {
      nb::gil_scoped_release release;
      svdlr_io::CheckImageFile(path, values ? svdlr_io::ImageFileScan::Values : svdlr_io::ImageFileScan::Structure);
    },
    "path"_a,
    "values"_a = false,
    "The tools' raw check of an image file (docs/reliability.md): OSError "
    "naming the file when it cannot be read\n"
    "(missing, permission denied, a symbolic link loop, not a regular file), "
    "when a NIfTI, MHA or NRRD file holds\n"
    "less pixel data than its header promises (the bytes missing named), or "
    "when its gzip stream is corrupt (a CRC-32\n"
    "or size that does not match); ValueError for an impossible NIfTI header "
    "(the field named) or gzip data past what\n"
    "it declares; with `values`, ValueError for a NaN or Inf voxel of a "
    "NIfTI file, or values beyond float32 (which\n"
    "ITK 5.2 and nibabel's readers would hide or pass on).");

  // The denoiser's defaults (svdlr/Defaults.h), by the names Python and the tools take.
  module.attr("DEFAULT_DENOISE_POLICY") = svdlr::PolicyName(svdlr::DefaultDenoisePolicy());
  module.attr("DEFAULT_DENOISE_AGGREGATION") = svdlr::AggregationName(svdlr::kDefaultPatchAggregation);
  module.attr("DEFAULT_DENOISE_SHRINKAGE") = svdlr::ShrinkageName(svdlr::kDefaultShrinkage);
  module.attr("DEFAULT_PATCH_SHAPE") = svdlr::PatchShapeName(svdlr::kDefaultPatchShape);
  module.attr("AUTO_PATCH_STRIDE") = static_cast<std::int64_t>(svdlr::kAutoPatchStride);
  module.attr("DEFAULT_GPU_MEMORY_LIMIT") = static_cast<std::int64_t>(svdlr::kDefaultDeviceMemoryLimit);
  // Every spelling, for the BIDS App's and the Nipype interface's choices.
  module.attr("AGGREGATIONS") = nb::tuple(nb::cast(svdlr::AggregationNameList()));
  module.attr("PATCH_SHAPES") = nb::tuple(nb::cast(svdlr::PatchShapeNameList()));
  module.attr("DEFAULT_DENOISE_NOISE_ESTIMATOR") = svdlr::NoiseEstimatorName(svdlr::kDefaultNoiseEstimator);
  module.attr("NOISE_ESTIMATORS") = nb::tuple(nb::cast(svdlr::NoiseEstimatorNameList()));
  // The tools' exit codes (apps/tool/SVDLowRankExitCodes.h), for Python's command-line entry points (svdlr-bids).
  module.attr("EXIT_SUCCESS") = svdlr_tools::ExitSuccess;
  module.attr("EXIT_FAILURE") = svdlr_tools::ExitFailure;
  module.attr("EXIT_USAGE") = svdlr_tools::ExitUsage;
  module.attr("EXIT_INPUT_ERROR") = svdlr_tools::ExitInputError;
  module.attr("EXIT_SOME_FAILED") = svdlr_tools::ExitSomeFailed;
  module.attr("EXIT_INTERRUPTED") = svdlr_tools::ExitInterrupted;
  module.attr("EXIT_CODE_TABLE") = svdlr_tools::ExitCodeTable();

  // Whether `reconstruct` works on CUDA device arrays where they are (svdlr::ReconstructOnDevice); without it, the
  // Python layer copies device arrays to the host.
  module.attr("DEVICE_INPUT_SUPPORTED") = svdlr::CudaBackendBuilt();
  module.attr("__version__") = SVDLR_PY_VERSION;
}
