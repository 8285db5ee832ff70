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
// `reconstruct`: one call of svdlr::Reconstruct on a (count, rows, cols) or (rows, cols) array in host
// memory, or of svdlr::ReconstructOnDevice on a CUDA array (CuPy, PyTorch... through DLPack), which stays
// on its device.
// The GIL is released while the engine works; between batches the engine's progress callback takes it
// back briefly to run the caller's progress function and Python's signal handlers, so Ctrl-C stops the
// work at the next batch boundary and raises KeyboardInterrupt.
#include "svdlrPyModule.h"

#include "svdlrPyErrors.h"
#include "svdlrPyProgress.h"
#include "svdlrPyRankPolicy.h"

#include "svdlr/Defaults.h"
#include "svdlr/Engine.h"
#include "svdlr/Names.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace nb = nanobind;
using namespace nb::literals;

namespace svdlr
{
namespace python
{
namespace
{

// Any dtype and device: dispatched at run time, so that one entry point serves float32 and float64,
// host and CUDA device arrays. Non-contiguous host inputs are copied to C order by nanobind.
using InputArray = nb::ndarray<nb::ro, nb::c_contig>;
using OutputArray = nb::ndarray<nb::c_contig>;

struct BatchShape
{
  std::size_t count{ 0 };
  std::size_t rows{ 0 };
  std::size_t cols{ 0 };
};

[[noreturn]] void
ThrowTypeError(const std::string & message)
{
  throw nb::type_error(("svdlr: " + message).c_str());
}

BatchShape
ShapeOf(const InputArray & matrices)
{
  if (matrices.ndim() == 2)
  {
    return { 1, matrices.shape(0), matrices.shape(1) };
  }
  if (matrices.ndim() == 3)
  {
    return { matrices.shape(0), matrices.shape(1), matrices.shape(2) };
  }
  ThrowValueError("expected an array of shape (rows, cols) or (count, rows, cols), got " +
                  std::to_string(matrices.ndim()) + " dimensions");
}

// Range checks the engine cannot do because its fields are unsigned. The engine validates the rest
// (energy fraction range, empty input, overlap of input and output).
Options
MakeOptions(const std::optional<std::string> & policy,
            std::optional<std::int64_t>       rank,
            std::optional<double>             energyFraction,
            const std::optional<std::string> & noiseRank,
            std::optional<double>             noiseSigma,
            const std::string &               backend,
            const std::string &               solver,
            std::int64_t                      deviceId,
            std::int64_t                      maxMatricesPerBatch,
            std::int64_t                      threads)
{
  if (policy && noiseRank)
  {
    ThrowValueError("give policy or noise_rank (its deprecated name), not both");
  }
  // The rules of the deprecated keywords, kept with their messages: one of rank, energy_fraction and a noise policy.
  if (rank && energyFraction)
  {
    ThrowValueError("give either rank or energy_fraction, not both");
  }
  if ((rank || energyFraction) && (noiseRank || noiseSigma))
  {
    ThrowValueError("give one of rank, energy_fraction and noise_rank/noise_sigma");
  }
  PolicyKeywords keywords{ noiseRank ? noiseRank : policy, noiseRank ? "noise_rank" : "policy", rank, energyFraction,
                           noiseSigma };
  if (!keywords.policy && !rank && !energyFraction && !noiseSigma)
  {
    keywords.rank = static_cast<std::int64_t>(kDefaultRank); // svdlr/Defaults.h, as every interface
  }
  Options options;
  options.policy = RankPolicyFrom(keywords, "fixed");
  ParseOption("backend", backend, &ParseName, &BackendNames, options.backend);
  ParseOption("solver", solver, &ParseName, &SolverNames, options.solver);
  const std::string problem = PolicyProblem(options.policy, options.solver);
  if (!problem.empty())
  {
    ThrowValueError(problem);
  }
  options.deviceId = static_cast<int>(CheckedRange("device_id", deviceId, ">= 0", 0, INT_MAX));
  options.maxMatricesPerBatch = static_cast<std::size_t>(
    CheckedRange("max_matrices_per_batch", maxMatricesPerBatch, ">= 0 (0: the backend chooses)", 0));
  options.threads =
    static_cast<unsigned>(CheckedRange("threads", threads, ">= 0 (0: all hardware threads)", 0, UINT_MAX));
  return options;
}

/** Checks that `out` can receive the reconstruction of `input` and returns its buffer. */
template <typename T>
T *
OutputBuffer(nb::handle out, const InputArray & input)
{
  OutputArray array;
  if (!nb::try_cast(out, array, false))
  {
    ThrowTypeError("out must be a writable C-contiguous array");
  }
  if (array.dtype() != nb::dtype<T>() || ShapeVector(array) != ShapeVector(input))
  {
    ThrowValueError("out must have the dtype and shape of the input");
  }
  if (array.device_type() != input.device_type() || array.device_id() != input.device_id())
  {
    ThrowValueError("out must be on the device of the input");
  }
  return static_cast<T *>(array.data());
}

nb::dict
DetailsOf(const Report & report, const BatchShape & shape)
{
  const std::size_t valueCount = std::min(shape.rows, shape.cols);
  const std::size_t countShape[1] = { shape.count };
  const std::size_t redoneShape[1] = { report.redoneMatrices.size() };
  const std::size_t valueShape[2] = { shape.count, valueCount };
  std::int64_t *    ranks = nullptr;
  std::int64_t *    redone = nullptr;
  double *          noiseSigmas = nullptr;
  double *          values = nullptr;
  nb::dict          details;
  details["ranks"] = NewNumpyArray(1, countShape, ranks);
  details["slices_redone"] = report.slicesRedone;
  details["redone_slices"] = NewNumpyArray(1, redoneShape, redone);
  details["noise_sigma"] = NewNumpyArray(1, countShape, noiseSigmas);
  details["singular_values"] = NewNumpyArray(2, valueShape, values);
  details["backend"] = Name(report.backend);
  details["solver"] = Name(report.solver);
  details["notes"] = report.notes;

  const double              notComputed = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> none;
  for (std::size_t i = 0; i < shape.count; ++i)
  {
    ranks[i] = i < report.ranks.size() ? static_cast<std::int64_t>(report.ranks[i]) : 0;
    noiseSigmas[i] = i < report.noiseSigmas.size() ? report.noiseSigmas[i] : notComputed;
    const std::vector<double> & sigma = i < report.singularValues.size() ? report.singularValues[i] : none;
    double *                    row = values + i * valueCount;
    std::fill(row, row + valueCount, notComputed);
    std::copy_n(sigma.begin(), std::min(sigma.size(), valueCount), row);
  }
  std::copy(report.redoneMatrices.begin(), report.redoneMatrices.end(), redone);
  return details;
}

/** Runs the engine from `input` into `out` (None: a new NumPy array) without the GIL. A CUDA array (`onDevice`) is
 * read and written where it is, ordered after `stream` (the caller's framework's cudaStream_t; 0: the legacy default
 * stream); the binding allocates no device memory itself, so the caller gives `out` (which may be `input`: in
 * place). */
template <typename T>
nb::tuple
Run(const InputArray & input, nb::object out, const Options & options, ProgressRelay & relay, bool onDevice,
    std::uintptr_t stream)
{
  if (onDevice && out.is_none())
  {
    ThrowTypeError("a CUDA array needs `out`: an array of its dtype, shape and device, e.g. "
                   "cupy.empty_like(matrices) or torch.empty_like(matrices), or `matrices` itself (in place)");
  }
  const BatchShape shape = ShapeOf(input);
  T *              outputData = nullptr;
  if (out.is_none())
  {
    const std::vector<std::size_t> dims = ShapeVector(input);
    out = NewNumpyArray(dims.size(), dims.data(), outputData);
  }
  else
  {
    outputData = OutputBuffer<T>(out, input);
  }
  const std::size_t          stride = shape.rows * shape.cols;
  const MatrixBatch<const T> inputBatch{
    static_cast<const T *>(input.data()), shape.count, shape.rows, shape.cols, stride
  };
  const MatrixBatch<T> outputBatch{ outputData, shape.count, shape.rows, shape.cols, stride };

  Report report;
  try
  {
    nb::gil_scoped_release release;
    report = onDevice ? ReconstructOnDevice(inputBatch, outputBatch, options, reinterpret_cast<void *>(stream))
                      : Reconstruct(inputBatch, outputBatch, options);
  }
  catch (const Error &)
  {
    // The GIL is held again here. A Python exception raised in the progress callback (Ctrl-C, or the
    // caller's own) is what stopped the engine: raise that one rather than the engine's Aborted.
    relay.RaisePending();
    throw; // TranslateErrors (svdlrPyModule.cpp)
  }
  relay.RaisePending();
  return nb::make_tuple(out, DetailsOf(report, shape));
}

nb::tuple
ReconstructArray(InputArray                  matrices,
                 std::optional<std::string>  policy,
                 std::optional<std::int64_t> rank,
                 std::optional<double>       energyFraction,
                 std::optional<std::string>  noiseRank,
                 std::optional<double>       noiseSigma,
                 const std::string &         backend,
                 const std::string &         solver,
                 std::optional<std::int64_t> deviceId,
                 std::int64_t                maxMatricesPerBatch,
                 std::int64_t                threads,
                 nb::object                  progress,
                 nb::object                  out,
                 std::uintptr_t              stream)
{
  const bool onHost = matrices.device_type() == nb::device::cpu::value;
  const bool onDevice =
    matrices.device_type() == nb::device::cuda::value || matrices.device_type() == nb::device::cuda_managed::value;
  if (!onHost && !onDevice)
  {
    ThrowTypeError("matrices must be in host memory or CUDA device memory, got DLPack device type " +
                   std::to_string(matrices.device_type()));
  }
  // A CUDA array is worked on where it is: its device, unless device_id names another one.
  const std::int64_t arrayDevice = onDevice ? matrices.device_id() : 0;
  if (onDevice && deviceId && *deviceId != arrayDevice)
  {
    ThrowValueError("device_id " + std::to_string(*deviceId) + " differs from device " + std::to_string(arrayDevice) +
                    ", which holds the array");
  }
  Options options = MakeOptions(policy,
                                rank,
                                energyFraction,
                                noiseRank,
                                noiseSigma,
                                backend,
                                solver,
                                deviceId.value_or(arrayDevice),
                                maxMatricesPerBatch,
                                threads);

  ProgressRelay relay(std::move(progress));
  options.progress = relay.Callback();

  if (matrices.dtype() == nb::dtype<float>())
  {
    return Run<float>(matrices, std::move(out), options, relay, onDevice, stream);
  }
  if (matrices.dtype() == nb::dtype<double>())
  {
    return Run<double>(matrices, std::move(out), options, relay, onDevice, stream);
  }
  ThrowTypeError("matrices must be float32 or float64; convert other types first");
}

} // namespace

void
DefineReconstruct(nb::module_ & module)
{
  module.def("reconstruct",
             &ReconstructArray,
             "matrices"_a,
             nb::kw_only(),
             "policy"_a = nb::none(),
             "rank"_a = nb::none(),
             "energy_fraction"_a = nb::none(),
             "noise_rank"_a = nb::none(),
             "noise_sigma"_a = nb::none(),
             "backend"_a = "auto",
             "solver"_a = "auto",
             "device_id"_a = nb::none(),
             "max_matrices_per_batch"_a = 0,
             "threads"_a = 0,
             "progress"_a = nb::none(),
             "out"_a = nb::none(),
             "stream"_a = 0,
             R"doc(Replaces every matrix of `matrices` by its rank-k truncated SVD reconstruction: svdlr::Reconstruct.

The engine's entry point behind itk_svdlowrankreconstruction.svd_low_rank_reconstruction_image_filter, whose
docstring describes the keywords they share. Here only:
matrices : float32 or float64 array, shape (rows, cols) or (count, rows, cols)
    In host memory (copied to C order first when it is not), or C-contiguous in CUDA device memory (CuPy,
    PyTorch... through DLPack), where it stays: `out` is then required.
out : array, optional
    Receives the result: the dtype, shape and device of `matrices`, C-contiguous and writable; it may be
    `matrices` itself (in place), but must not partially overlap it.
stream : int
    For a CUDA array: the caller's CUDA stream as an integer (cupy.cuda.get_current_stream().ptr,
    torch.cuda.current_stream(device).cuda_stream); 0 is the legacy default stream.

Returns (result, details): `out` or a new NumPy array, and a dict of ReconstructionDetails' fields but
slice_dimension. Engine errors carry `error_code` and `matrix_index` (the offending matrix, or None).)doc");

  module.def(
    "check_options",
    [](std::optional<std::string> policy, std::optional<std::int64_t> rank, std::optional<double> energyFraction,
       std::optional<std::string> noiseRank, std::optional<double> noiseSigma, const std::string & backend,
       const std::string & solver) {
      MakeOptions(policy, rank, energyFraction, noiseRank, noiseSigma, backend, solver, 0, 0, 0);
    },
    nb::kw_only(),
    "policy"_a = nb::none(),
    "rank"_a = nb::none(),
    "energy_fraction"_a = nb::none(),
    "noise_rank"_a = nb::none(),
    "noise_sigma"_a = nb::none(),
    "backend"_a = "auto",
    "solver"_a = "auto",
    "Raises ValueError when reconstruct() would refuse these options, with the engine's own message (svdlr/Names.h).");
  module.attr("BACKENDS") = nb::make_tuple(Name(Backend::Auto), Name(Backend::CPU), Name(Backend::CUDA));
  module.attr("SOLVERS") = nb::make_tuple(Name(Solver::Auto), Name(Solver::Exact), Name(Solver::Subspace));
  module.attr("MAX_SUBSPACE_WIDTH") = kMaxSubspaceWidth;
  // The defaults every interface shares (svdlr/Defaults.h); NOISE_RANKS is svdlrPyRankPolicy.cpp's.
  module.attr("DEFAULT_RANK") = kDefaultRank;
  module.attr("DEFAULT_OUTPUT_TYPE") = kDefaultOutputTypeName;
}

} // namespace python
} // namespace svdlr
