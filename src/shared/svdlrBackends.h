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
#ifndef svdlr_Backends_h
#define svdlr_Backends_h

// Internal contract between the engine's front end (svdlrEngine.cxx) and its backends.
// The front end has already validated sizes and options and sized report.ranks, report.singularValues and
// report.noiseSigmas (NaN) to input.count. A backend must:
//  - write every output matrix, or throw;
//  - fill report.ranks[i], report.noiseSigmas[i] (SelectRank's σ) and report.singularValues[i] (all min(rows, cols)
//    values, descending);
//  - throw Error(NonFiniteInput, ..., i) for a matrix holding NaN or Inf, naming matrix i;
//  - call ReportProgress() (svdlrParallel.h) between batches, on the calling thread only.

#include "svdlr/Engine.h"

#include "cuda/svdlrCudaExport.h"

#include <string>

namespace svdlr
{
namespace detail
{

template <typename T>
void
RunCpu(const MatrixBatch<const T> & input, const MatrixBatch<T> & output, const Options & options, Report & report);

template <typename T>
void
RunCuda(const MatrixBatch<const T> & input, const MatrixBatch<T> & output, const Options & options, Report & report);

/** RunCuda on device pointers (ReconstructOnDevice): checks that both batches are device memory on
 * options.deviceId, orders its work after what is queued on `stream` (a cudaStream_t), and copies device to
 * device instead of through host memory. */
template <typename T>
void
RunCudaOnDevice(const MatrixBatch<const T> & input, const MatrixBatch<T> & output, const Options & options,
                Report & report, void * stream);

/** The element types RunCuda and RunCudaOnDevice are instantiated for, in the one file that defines them in this
 * build (the CUDA pipeline, the loader's forwarders or the disabled build's stubs); a semicolon follows. */
#define SVDLR_INSTANTIATE_RUN_CUDA                                                                                  \
  template void RunCuda<float>(const MatrixBatch<const float> &, const MatrixBatch<float> &, const Options &,        \
                               Report &);                                                                            \
  template void RunCuda<double>(const MatrixBatch<const double> &, const MatrixBatch<double> &, const Options &,     \
                                Report &);                                                                           \
  template void RunCudaOnDevice<float>(const MatrixBatch<const float> &, const MatrixBatch<float> &, const Options &, \
                                       Report &, void *);                                                            \
  template void RunCudaOnDevice<double>(const MatrixBatch<const double> &, const MatrixBatch<double> &,             \
                                        const Options &, Report &, void *)

/** Whether this build has the CUDA backend (false in svdlrCudaBackendDisabled.cxx), loaded or not. */
bool
CudaCompiledIn() noexcept;

/** Frees the streams, handles and buffers the CUDA backend keeps between runs, the slice pipeline's and
 * the local denoiser's (svdlrDeviceResourceCache.h). */
void
ReleaseCachedCudaResources() noexcept;

/** Destroys the CUDA context of `deviceId` (cudaDeviceReset), once nothing cached refers to it. */
void
ResetCudaDevice(int deviceId) noexcept;

/** The number of CUDA devices visible, 0 when none or without CUDA. */
int
CudaVisibleDevices() noexcept;

/** Portable pinned host memory, or nullptr (svdlr::AllocatePinnedHostMemory). */
void *
AllocatePinnedHost(std::size_t bytes) noexcept;
void
FreePinnedHost(void * memory) noexcept;

/** Whether `deviceId` can run the CUDA backend now; otherwise false with the reason in `why`. */
bool
CudaDeviceReady(int deviceId, std::string & why);

/** Loads the CUDA backend now if no call has yet (svdlrCudaBackendLoader.cxx); false, with the reason in `why`, when
 * it cannot be loaded. The backend's own tests call it before they call into the backend directly. */
SVDLR_CUDA_EXPORT bool
LoadCudaBackend(std::string & why);

} // namespace detail
} // namespace svdlr

#endif
