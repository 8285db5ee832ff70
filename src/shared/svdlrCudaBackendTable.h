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
#ifndef svdlr_CudaBackendTable_h
#define svdlr_CudaBackendTable_h

// What the engine and its CUDA backend, a shared library loaded on first use (svdlrCudaBackendLoader.cxx), pass each
// other through the backend's one C entry point:
//  - CudaBackendTable: the backend's side of svdlrBackends.h and svdlrLocalDenoiseBackends.h, one function each;
//  - CudaHostTable: the engine code the backend runs (threads, rank and patch rules), given by the engine.
// Both sides are built from the same sources by the same build, so C++ types cross by pointer. A plugin from another
// build has another entry point's name (SVDLR_CUDA_BACKEND_ABI) or another layout (CudaBackendLayout()), and is
// refused.
//
// Why the backend calls the engine's rules through CudaHostTable instead of linking a copy of them: the thread rules
// keep process-wide state (the running jobs of RunningParallelJob, LimitCpuThreads' limit) that a second copy would
// split, and the Python module's engine is a static archive with hidden symbols that the plugin could not link to.
// One copy of each rule, in the engine, is also what "one rule, one place" asks of the binaries.

#include "svdlr/CpuThreads.h"
#include "svdlr/Engine.h"
#include "svdlr/LocalDenoise.h"

#include "noise/svdlrMagnitudeTransform.h"
#include "noise/svdlrRankSelection.h"
#include "denoise/svdlrSpherePatch.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

/** Bumped whenever either table or a type that crosses it changes: it is part of the entry point's name. */
#define SVDLR_CUDA_BACKEND_ABI 2
#define SVDLR_CUDA_BACKEND_PASTE2(a, b) a##b
#define SVDLR_CUDA_BACKEND_PASTE(a, b) SVDLR_CUDA_BACKEND_PASTE2(a, b)
#define SVDLR_CUDA_BACKEND_QUOTE2(x) #x
#define SVDLR_CUDA_BACKEND_QUOTE(x) SVDLR_CUDA_BACKEND_QUOTE2(x)
/** The backend's one exported C function (extern "C", type CudaBackendEntry). */
#define SVDLR_CUDA_BACKEND_ENTRY SVDLR_CUDA_BACKEND_PASTE(svdlr_cuda_backend_v, SVDLR_CUDA_BACKEND_ABI)

namespace svdlr
{
namespace detail
{

/** The entry point's name, for dlsym. */
constexpr const char * kCudaBackendEntryName = SVDLR_CUDA_BACKEND_QUOTE(SVDLR_CUDA_BACKEND_ENTRY);

/** How a backend call failed. An svdlr::Error travels as its parts and is thrown anew on the engine's side, so that
 * the engine's catch sites never compare the type information of two shared objects; any other exception (an
 * allocation failure, one from the caller's progress or ParallelFor callbacks) travels as itself. */
struct CudaCallFailure
{
  bool               failed{ false };
  ErrorCode          code{ ErrorCode::DeviceFailure };
  std::ptrdiff_t     matrix{ -1 };
  std::string        message;
  std::exception_ptr other;
};

struct CudaBackendTable
{
  std::uint64_t layout;
  int (*visibleDevices)() noexcept;
  bool (*deviceReady)(int deviceId, std::string & why, CudaCallFailure & failure) noexcept;
  void (*releaseCachedResources)() noexcept;
  void (*resetDevice)(int deviceId) noexcept;
  void * (*allocatePinnedHost)(std::size_t bytes) noexcept;
  void (*freePinnedHost)(void * memory) noexcept;
  // RunCuda (host memory), or RunCudaOnDevice on `stream` (device memory; nullptr is the default stream) when
  // `onDevice`.
  void (*runFloat)(const MatrixBatch<const float> & input, const MatrixBatch<float> & output, const Options & options,
                   Report & report, bool onDevice, void * stream, CudaCallFailure & failure) noexcept;
  void (*runDouble)(const MatrixBatch<const double> & input, const MatrixBatch<double> & output,
                    const Options & options, Report & report, bool onDevice, void * stream,
                    CudaCallFailure & failure) noexcept;
  void (*runLocalDenoise)(const SeriesView<const float> & input, const SeriesView<float> & output,
                          const LocalDenoiseMaps & maps, const LocalDenoiseOptions & options,
                          const std::array<std::size_t, 3> & patch, LocalDenoiseReport & report,
                          const MagnitudeTransform * transform, CudaCallFailure & failure) noexcept;
};

/** The engine's functions that the backend's code calls (each the function of the same name in the engine). */
struct CudaHostTable
{
  std::uint64_t layout;
  int (*openParallelJob)(ParallelJobKind kind) noexcept;
  void (*closeParallelJob)(ParallelJobKind kind, int outerKind) noexcept;
  unsigned (*workerCount)(unsigned threads);
  void (*poolParallelFor)(unsigned threads, std::size_t n, const std::function<void(std::size_t)> & body);
  ParallelFor (*parallelForOrThreads)(const ParallelFor & given, unsigned workers);
  RankChoice (*selectRank)(const RankPolicy & policy, const double * singularValuesDescending, std::size_t count,
                           std::size_t rows, std::size_t cols);
  void (*singularValuesFromGramEigenvalues)(const double * ascending, std::size_t count,
                                            std::vector<double> & singularValues);
  std::vector<std::uint8_t> (*patchCentres)(const std::array<std::size_t, 3> & size,
                                            const std::array<std::size_t, 3> & patch, std::size_t stride,
                                            const std::uint8_t * mask);
  std::vector<PatchOffset> (*sphereOffsetOrder)(const std::array<std::size_t, 3> & extent);
  SpherePatch (*spherePatchUsed)(const std::array<std::size_t, 3> & size, std::size_t volumes,
                                 double requestedRadius);
  std::size_t (*patchStrideUsed)(const std::array<std::size_t, 3> & patchUsed, PatchShape shape,
                                 PatchAggregation aggregation, std::size_t requested);
  Shrinkage (*resolveShrinkage)(Shrinkage requested, const RankPolicy & policy, bool knownSigma);
};

/** A fingerprint of the sizes of `TTypes`. */
template <typename... TTypes>
constexpr std::uint64_t
SizesOf()
{
  std::uint64_t fingerprint = 0;
  ((fingerprint = fingerprint * 1031 + sizeof(TTypes)), ...);
  return fingerprint;
}

/** The layout of what crosses the tables: a backend built from other headers differs in one of these sizes. */
constexpr std::uint64_t
CudaBackendLayout()
{
  return SizesOf<Options, Report, MatrixBatch<const float>, LocalDenoiseOptions, LocalDenoiseReport, LocalDenoiseMaps,
                 SeriesView<const float>, RankPolicy, RankChoice, SpherePatch, MagnitudeTransform, CudaCallFailure,
                 CudaBackendTable, CudaHostTable>();
}

/** The entry point's type: given the engine's functions, the backend's, or nullptr when `host` has another layout. */
using CudaBackendEntry = const CudaBackendTable * (*)(const CudaHostTable * host);

} // namespace detail
} // namespace svdlr

#endif
