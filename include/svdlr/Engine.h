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
#ifndef svdlr_Engine_h
#define svdlr_Engine_h

// The ITK-free engine: rank-k truncated SVD reconstruction of a batch of 2D matrices.
// This header is the whole public API of the engine. It must stay free of ITK and CUDA
// headers: the ITK filter, the Python module and the CUDA translation units all include it.

#include "svdlr/Defaults.h"
#include "svdlr/RankPolicy.h"

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace svdlr
{

/** Where the work runs. Auto takes the GPU when the CUDA backend is built and a device is usable, except for a
 * job small enough that the CPU finishes it before a cold GPU has started (no CUDA work yet in this process,
 * no StartCudaWarmUp running, and an estimated CPU time under a third of a second): such a job runs on the CPU. */
enum class Backend
{
  Auto,
  CPU,
  CUDA
};

const char *
ToString(Backend backend);

/** How the CUDA backend finds the leading singular subspace.
 *  Exact:    float64 Gram matrix and a float64 batched eigen-solver (cuSOLVER): every singular value, at
 *            about float64 accuracy.
 *  Subspace: subspace iteration on the float64 Gram matrix with a block of k + p vectors, then a
 *            Rayleigh-Ritz step: only the leading k + p singular values are computed. Much faster for
 *            small ranks, and still within the project's bounds (optimality ratio ||A - R|| / ||A - A_k||
 *            <= 1 + 1e-4, relative error <= 1e-5 where the spectrum has a gap at k). Fixed ranks only. Each
 *            matrix passes an a-posteriori check of the optimality ratio; one that fails it is redone by the
 *            exact solver in the same call (Report::slicesRedone, docs/cuda.md).
 *  Auto:     Subspace for a fixed rank whose block fits (see docs/performance.md), else Exact.
 * The CPU backend always computes the exact SVD (LAPACK). */
enum class Solver
{
  Auto,
  Exact,
  Subspace
};

const char *
ToString(Solver solver);

/** `count` row-major matrices of rows x cols; matrix i starts at data + i * matrixStride (elements).
 * Rows are contiguous (leading dimension == cols). */
template <typename T>
struct MatrixBatch
{
  T *         data{ nullptr };
  std::size_t count{ 0 };
  std::size_t rows{ 0 };
  std::size_t cols{ 0 };
  std::size_t matrixStride{ 0 };

  std::size_t
  MatrixSize() const
  {
    return rows * cols;
  }
};

enum class ErrorCode
{
  InvalidArgument,    // sizes, policy or options out of range
  NonFiniteInput,     // NaN or Inf in a matrix (Error::Matrix() names it)
  BackendUnavailable, // CUDA requested but not built or no usable device
  DeviceFailure,      // a CUDA, cuSOLVER or cuBLAS call failed
  OutOfMemory,        // not even one matrix fits in memory
  NumericalFailure,   // a solver did not converge and no fallback could recover
  Aborted             // the progress callback asked to stop
};

/** The only exception type the engine throws. On throw, the output batch's content is unspecified. */
class Error : public std::runtime_error
{
public:
  Error(ErrorCode code, const std::string & message, std::ptrdiff_t matrix = -1)
    : std::runtime_error(message)
    , m_Code(code)
    , m_Matrix(matrix)
  {}

  ErrorCode
  Code() const noexcept
  {
    return m_Code;
  }
  /** Index of the offending matrix in the batch, or -1 when the error is not about one matrix. */
  std::ptrdiff_t
  Matrix() const noexcept
  {
    return m_Matrix;
  }

private:
  ErrorCode      m_Code;
  std::ptrdiff_t m_Matrix;
};

/** Runs `body(i)` for every i in [0, n), possibly in parallel, and returns when all are done.
 * The ITK filter passes one backed by ITK's MultiThreaderBase so ITK's global thread settings apply. */
using ParallelFor = std::function<void(std::size_t n, const std::function<void(std::size_t)> & body)>;

/** Called on the calling thread between batches with (matrices done, total). Return false to abort. */
using ProgressCallback = std::function<bool(std::size_t done, std::size_t total)>;

struct Options
{
  RankPolicy  policy{};
  Backend     backend{ Backend::Auto };
  int         deviceId{ 0 };
  std::size_t maxMatricesPerBatch{ 0 }; // 0: the backend chooses (from free memory on the GPU)
  unsigned    threads{ 0 };             // CPU worker threads; 0: all hardware threads
  ParallelFor parallelFor{};            // empty: the engine's own std::thread pool
  ProgressCallback progress{};
  Solver           solver{ Solver::Auto };
};

struct Report
{
  Backend backend{ Backend::CPU };           // the backend that did the work
  Solver  solver{ Solver::Exact };           // Exact or Subspace: how the singular subspace was found
  std::vector<std::size_t> ranks;            // effective rank per matrix
  // Per matrix, descending: all min(rows, cols) values (Exact), or the leading k + p (Subspace).
  std::vector<std::vector<double>> singularValues;
  // Per matrix: the σ of each entry's noise that the policy estimated or was given; NaN for FixedRank and
  // EnergyFraction, which do not model noise.
  std::vector<double> noiseSigmas;
  // Subspace solver only: the matrices that failed its a-posteriori optimality check (docs/cuda.md, "The
  // check") and were redone with the exact solver in the same call; their singularValues hold all
  // min(rows, cols) values. slicesRedone == redoneMatrices.size(), indices ascending; 0 and empty otherwise.
  std::size_t              slicesRedone{ 0 };
  std::vector<std::size_t> redoneMatrices;
  std::string notes;                         // e.g. why Auto fell back to the CPU; empty when nothing to say
};

/** Replaces every matrix of `input` by its truncated SVD reconstruction in `output`.
 * `output` must have the same count/rows/cols; it may alias `input` exactly (in place), not partially.
 * Throws svdlr::Error. */
Report
Reconstruct(const MatrixBatch<const float> & input, const MatrixBatch<float> & output, const Options & options);
Report
Reconstruct(const MatrixBatch<const double> & input, const MatrixBatch<double> & output, const Options & options);

/** Reconstruct on data already in GPU memory: `input` and `output` are device pointers (device or managed
 * memory) on options.deviceId, with the same layout rules and the same exact-aliasing rule as Reconstruct.
 * `stream` is the caller's cudaStream_t as void * (nullptr: the legacy default stream). The engine's work
 * is ordered after everything already queued on `stream`, and the output is complete when the call
 * returns. The data never goes through host memory.
 * Backend::Auto and Backend::CUDA run on the GPU; Backend::CPU is an InvalidArgument, as are pointers that
 * are not device memory on options.deviceId; a build without CUDA or an unusable device gives
 * BackendUnavailable (there is no CPU fallback). Throws svdlr::Error. */
Report
ReconstructOnDevice(const MatrixBatch<const float> & input, const MatrixBatch<float> & output, const Options & options,
                    void * stream);
Report
ReconstructOnDevice(const MatrixBatch<const double> & input, const MatrixBatch<double> & output,
                    const Options & options, void * stream);

/** Starts the CUDA backend's one-time set-up for `count` matrices of `rows x cols` (float, or double when
 * `doublePrecision`) with `options` on a background thread, and returns at once. A fresh process spends
 * 0.3-0.6 s on the driver, the context, the cuBLAS and cuSOLVER handles and the first load of each kernel,
 * a hundred times the warm solve of an MRI volume; started when the volume's size is known and before its
 * pixels are read, that time overlaps the reading. The warm-up runs the engine once on a small synthetic
 * batch of the same slice shape (same solver choice), so that everything is loaded and cached for the
 * device. The next Reconstruct, ReconstructOnDevice, DenoiseLocalLowRank or ReleaseCudaResources waits for
 * it instead of repeating it. Does nothing when options.backend is CPU, the build has no CUDA, or a warm-up
 * is already running; its errors are dropped (the real call meets and reports them). */
void
StartCudaWarmUp(std::size_t count, std::size_t rows, std::size_t cols, const Options & options,
                bool doublePrecision = false);

/** The first part of that set-up alone, the driver and the context of `deviceId` (about 0.2 s of it on an H200), for
 * a caller that knows it will use the GPU before it knows the shape of its work: a tool before it has checked and
 * decompressed its input. A StartCudaWarmUp or StartCudaDenoiseWarmUp that follows runs after it on the same thread.
 * Does nothing when `backend` is CPU or the build has no CUDA. */
void
StartCudaDeviceWarmUp(Backend backend, int deviceId);

/** Waits until a warm-up started by StartCudaWarmUp has finished (at once when none runs). */
void
WaitForCudaWarmUp() noexcept;

/** The CUDA backend keeps, per device and element type, the streams, library handles, device buffers and
 * pinned staging buffers of its last run, so that the next run skips their set-up (several ms). This frees
 * them now (they are freed at exit anyway); runs in progress keep theirs. No-op without CUDA. */
void
ReleaseCudaResources() noexcept;

/** ReleaseCudaResources, then the CUDA context of each device this process has run on destroyed too
 * (cudaDeviceReset), for a process that is done with the GPU: most of the teardown it would otherwise pay at its
 * exit (about 50 of 150 ms on an H200), paid where it can overlap host work. The tools call it on a thread beside
 * writing their outputs. A later CUDA call creates the context again. No-op without CUDA. */
void
ReleaseCudaDevices() noexcept;

/** How many CUDA devices this process sees (CUDA_VISIBLE_DEVICES applies); 0 without the CUDA backend or a
 * driver. Device ids run from 0 to the count - 1. */
int
CudaDeviceCount() noexcept;

/** `bytes` of page-locked ("pinned") host memory, usable with every device, for the input and output of
 * Reconstruct: the CUDA backend copies from and to pinned memory directly, at full PCIe speed, instead of
 * staging through its own small pinned buffers. Allocating it is slow (about 26 ms per 64 MiB), so allocate
 * once and reuse. Returns nullptr when the CUDA backend is not built, no device is usable or the allocation
 * fails: the caller then uses ordinary memory, which every backend also takes. Never throws. */
void *
AllocatePinnedHostMemory(std::size_t bytes) noexcept;

/** Frees memory from AllocatePinnedHostMemory; nullptr is a no-op. */
void
FreePinnedHostMemory(void * memory) noexcept;

/** True when this build has the CUDA backend compiled in. */
bool
CudaBackendBuilt() noexcept;

/** True when the CUDA backend is built and `deviceId` can run it; otherwise false and `why` says why. */
bool
CudaDeviceUsable(int deviceId, std::string * why = nullptr);

} // namespace svdlr

#endif
