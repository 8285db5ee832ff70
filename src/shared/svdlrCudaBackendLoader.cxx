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

// The CUDA backend's entry points (svdlrBackends.h, svdlrLocalDenoiseBackends.h) in a build with SVDLR_USE_CUDA=ON.
// The backend is a shared library of its own (SVDLR_CUDA_BACKEND_FILE), loaded here on the first call that needs
// it, so that a process that never asks for the GPU (a CPU run, `import`, `--help`) never loads the CUDA runtime,
// cuBLAS or cuSOLVER. Where the backend cannot be loaded (no file, or the CUDA libraries it needs are missing),
// these functions do what a build without CUDA does, with the reason: Backend::Auto runs on the CPU and notes it,
// Backend::CUDA fails with BackendUnavailable.
#include "shared/svdlrBackends.h"
#include "shared/svdlrCudaBackendTable.h"
#include "denoise/svdlrLocalDenoiseBackends.h"
#include "shared/svdlrParallel.h"
#include "denoise/svdlrPatchCentres.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <type_traits>

#ifndef SVDLR_CUDA_BACKEND_FILE
#  error "SVDLR_CUDA_BACKEND_FILE (the CUDA backend's file name) comes from CMake/SVDLowRankReconstructionEngine.cmake"
#endif

namespace svdlr
{
namespace detail
{
namespace
{

unsigned
WorkerCountOf(unsigned threads)
{
  return WorkerCount(threads);
}

const CudaHostTable kEngineCalls{ CudaBackendLayout(),
                                  OpenParallelJob,
                                  CloseParallelJob,
                                  WorkerCountOf,
                                  PoolParallelFor,
                                  ParallelForOrThreads,
                                  SelectRank,
                                  SingularValuesFromGramEigenvalues,
                                  PatchCentres,
                                  SphereOffsetOrder,
                                  SpherePatchUsed,
                                  PatchStrideUsed,
                                  ResolveShrinkage };

struct LoadedBackend
{
  std::once_flag                         once;
  std::atomic<const CudaBackendTable *> table{ nullptr };
  std::string                            why; // why it could not be loaded; written once, before `once` completes
};

// Never destroyed, and the library never closed: the warm-up's exit handler and other libraries' static destructors
// may still call the backend while the process ends.
LoadedBackend &
Loaded()
{
  static auto * loaded = new LoadedBackend;
  return *loaded;
}

/** The folder of the file that holds this code (the engine's library, the Python module or a program), with its
 * trailing '/', or "" when the loader cannot tell. */
std::string
FolderOfThisCode()
{
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void *>(&FolderOfThisCode), &info) == 0 || info.dli_fname == nullptr)
  {
    return {};
  }
  const std::string path = info.dli_fname;
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

/** Where to load the backend from: SVDLR_CUDA_BACKEND when set (that file only); else the file beside this code when
 * there is one; else the bare name, which the dynamic loader looks for on its search path. */
std::string
BackendPath()
{
  if (const char * chosen = std::getenv("SVDLR_CUDA_BACKEND"); chosen != nullptr && *chosen != '\0')
  {
    return chosen;
  }
  const std::string beside = FolderOfThisCode() + SVDLR_CUDA_BACKEND_FILE;
  return access(beside.c_str(), F_OK) == 0 ? beside : std::string(SVDLR_CUDA_BACKEND_FILE);
}

void
Load(LoadedBackend & loaded)
{
  const std::string path = BackendPath();
  // RTLD_NOW: a CUDA library that lacks a symbol fails here, with its name, not at the first call that needs it.
  void * library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr)
  {
    const char * error = dlerror();
    // dlerror names the path tried and the file that failed (the backend, or a CUDA library it needs).
    loaded.why = std::string(SVDLR_CUDA_BACKEND_FILE) + " could not be loaded: " + (error != nullptr ? error : "");
    return;
  }
  const auto entry = reinterpret_cast<CudaBackendEntry>(dlsym(library, kCudaBackendEntryName));
  if (entry == nullptr)
  {
    loaded.why = path + " is not this build's CUDA backend: it has no " + kCudaBackendEntryName;
    return;
  }
  const CudaBackendTable * table = entry(&kEngineCalls);
  if (table == nullptr || table->layout != CudaBackendLayout())
  {
    loaded.why = path + " is the CUDA backend of another build (its types differ from this engine's)";
    return;
  }
  loaded.table.store(table);
}

/** The backend, loaded at the first call, or nullptr with the reason in `why`. */
const CudaBackendTable *
Backend(std::string * why = nullptr)
{
  LoadedBackend & loaded = Loaded();
  std::call_once(loaded.once, Load, std::ref(loaded));
  const CudaBackendTable * table = loaded.table.load();
  if (table == nullptr && why != nullptr)
  {
    *why = loaded.why;
  }
  return table;
}

/** The backend when an earlier call loaded it, else nullptr: releasing or freeing never loads it. */
const CudaBackendTable *
BackendIfLoaded() noexcept
{
  return Loaded().table.load();
}

const CudaBackendTable &
BackendOrThrow()
{
  std::string why;
  const CudaBackendTable * table = Backend(&why);
  if (table == nullptr)
  {
    throw Error(ErrorCode::BackendUnavailable, "svdlr: CUDA backend unavailable: " + why);
  }
  return *table;
}

void
ThrowIfFailed(const CudaCallFailure & failure)
{
  if (!failure.failed)
  {
    return;
  }
  if (failure.other)
  {
    std::rethrow_exception(failure.other);
  }
  throw Error(failure.code, failure.message, failure.matrix);
}

} // namespace

bool
LoadCudaBackend(std::string & why)
{
  return Backend(&why) != nullptr;
}

bool
CudaCompiledIn() noexcept
{
  return true;
}

bool
CudaDeviceReady(int deviceId, std::string & why)
{
  const CudaBackendTable * table = Backend(&why);
  if (table == nullptr)
  {
    return false;
  }
  CudaCallFailure failure;
  const bool      ready = table->deviceReady(deviceId, why, failure);
  ThrowIfFailed(failure);
  return ready;
}

void
ReleaseCachedCudaResources() noexcept
{
  if (const CudaBackendTable * table = BackendIfLoaded())
  {
    table->releaseCachedResources();
  }
}

void
ResetCudaDevice(int deviceId) noexcept
{
  if (const CudaBackendTable * table = BackendIfLoaded())
  {
    table->resetDevice(deviceId);
  }
}

int
CudaVisibleDevices() noexcept
{
  const CudaBackendTable * table = Backend();
  return table != nullptr ? table->visibleDevices() : 0;
}

void *
AllocatePinnedHost(std::size_t bytes) noexcept
{
  const CudaBackendTable * table = Backend();
  return table != nullptr ? table->allocatePinnedHost(bytes) : nullptr;
}

void
FreePinnedHost(void * memory) noexcept
{
  if (const CudaBackendTable * table = BackendIfLoaded()) // the memory came from it
  {
    table->freePinnedHost(memory);
  }
}

namespace
{
template <typename T>
void
Run(const MatrixBatch<const T> & input, const MatrixBatch<T> & output, const Options & options, Report & report,
    bool onDevice, void * stream)
{
  const CudaBackendTable & table = BackendOrThrow();
  CudaCallFailure          failure;
  if constexpr (std::is_same_v<T, float>)
  {
    table.runFloat(input, output, options, report, onDevice, stream, failure);
  }
  else
  {
    table.runDouble(input, output, options, report, onDevice, stream, failure);
  }
  ThrowIfFailed(failure);
}
} // namespace

template <typename T>
void
RunCuda(const MatrixBatch<const T> & input, const MatrixBatch<T> & output, const Options & options, Report & report)
{
  Run(input, output, options, report, false, nullptr);
}

template <typename T>
void
RunCudaOnDevice(const MatrixBatch<const T> & input, const MatrixBatch<T> & output, const Options & options,
                Report & report, void * stream)
{
  Run(input, output, options, report, true, stream);
}

void
RunLocalDenoiseCuda(const SeriesView<const float> & input, const SeriesView<float> & output,
                    const LocalDenoiseMaps & maps, const LocalDenoiseOptions & options,
                    const std::array<std::size_t, 3> & patch, LocalDenoiseReport & report,
                    const MagnitudeTransform * transform)
{
  const CudaBackendTable & table = BackendOrThrow();
  CudaCallFailure          failure;
  table.runLocalDenoise(input, output, maps, options, patch, report, transform, failure);
  ThrowIfFailed(failure);
}

SVDLR_INSTANTIATE_RUN_CUDA;

} // namespace detail
} // namespace svdlr
