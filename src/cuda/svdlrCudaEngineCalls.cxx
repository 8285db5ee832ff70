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
// The CUDA backend's boundary with the engine that loads it (svdlrCudaBackendTable.h): its one exported function,
// which takes the engine's functions and gives the backend's, every call returning its failure instead of throwing it
// across the boundary; and the engine's functions that the backend's code calls, defined here as calls into the
// engine (svdlrCudaBackendTable.h says why the backend holds no copy of them). The backend is linked with -z defs, so
// an engine function that its code starts to call fails its link until it is added here and to CudaHostTable.
#include "svdlr/CpuThreads.h"

#include "denoise/svdlrLocalDenoiseBackends.h"
#include "shared/svdlrBackends.h"
#include "shared/svdlrCudaBackendTable.h"
#include "shared/svdlrParallel.h"
#include "denoise/svdlrPatchCentres.h"

#include <cstdio>
#include <cstdlib>

namespace svdlr
{
namespace
{
const detail::CudaHostTable * g_Engine = nullptr;

const detail::CudaHostTable &
Engine()
{
  if (g_Engine == nullptr)
  {
    // Only a program that links the backend and calls into it without the engine's loader gets here.
    std::fputs("svdlr: the CUDA backend was called before the engine loaded it (detail::LoadCudaBackend)\n", stderr);
    std::abort();
  }
  return *g_Engine;
}
} // namespace

RunningParallelJob::RunningParallelJob(ParallelJobKind kind) noexcept
  : m_Kind(kind)
  , m_OuterKind(Engine().openParallelJob(kind))
{}

RunningParallelJob::~RunningParallelJob()
{
  Engine().closeParallelJob(m_Kind, m_OuterKind);
}

std::size_t
PatchStrideUsed(const std::array<std::size_t, 3> & patchUsed, PatchShape shape, PatchAggregation aggregation,
                std::size_t requested)
{
  return Engine().patchStrideUsed(patchUsed, shape, aggregation, requested);
}

Shrinkage
ResolveShrinkage(Shrinkage requested, const RankPolicy & policy, bool knownSigma)
{
  return Engine().resolveShrinkage(requested, policy, knownSigma);
}

SpherePatch
SpherePatchUsed(const std::array<std::size_t, 3> & size, std::size_t volumes, double requestedRadius)
{
  return Engine().spherePatchUsed(size, volumes, requestedRadius);
}

namespace detail
{

unsigned
WorkerCount(unsigned threads)
{
  return Engine().workerCount(threads);
}

void
PoolParallelFor(unsigned threads, std::size_t n, const std::function<void(std::size_t)> & body)
{
  Engine().poolParallelFor(threads, n, body);
}

ParallelFor
ParallelForOrThreads(const ParallelFor & given, unsigned workers)
{
  return Engine().parallelForOrThreads(given, workers);
}

RankChoice
SelectRank(const RankPolicy & policy, const double * singularValuesDescending, std::size_t count, std::size_t rows,
           std::size_t cols)
{
  return Engine().selectRank(policy, singularValuesDescending, count, rows, cols);
}

void
SingularValuesFromGramEigenvalues(const double * ascending, std::size_t count, std::vector<double> & singularValues)
{
  Engine().singularValuesFromGramEigenvalues(ascending, count, singularValues);
}

std::vector<std::uint8_t>
PatchCentres(const std::array<std::size_t, 3> & size, const std::array<std::size_t, 3> & patch, std::size_t stride,
             const std::uint8_t * mask)
{
  return Engine().patchCentres(size, patch, stride, mask);
}

std::vector<PatchOffset>
SphereOffsetOrder(const std::array<std::size_t, 3> & extent)
{
  return Engine().sphereOffsetOrder(extent);
}

} // namespace detail
} // namespace svdlr

namespace svdlr
{
namespace detail
{
namespace
{

template <typename TCall>
void
CaptureFailure(CudaCallFailure & failure, TCall && call) noexcept
{
  try
  {
    call();
  }
  catch (const Error & error)
  {
    failure.failed = true;
    failure.code = error.Code();
    failure.matrix = error.Matrix();
    failure.message = error.what();
  }
  catch (...)
  {
    failure.failed = true;
    failure.other = std::current_exception();
  }
}

bool
DeviceReady(int deviceId, std::string & why, CudaCallFailure & failure) noexcept
{
  bool ready = false;
  CaptureFailure(failure, [&] { ready = CudaDeviceReady(deviceId, why); });
  return ready;
}

template <typename T>
void
Run(const MatrixBatch<const T> & input, const MatrixBatch<T> & output, const Options & options, Report & report,
    bool onDevice, void * stream, CudaCallFailure & failure) noexcept
{
  CaptureFailure(failure, [&] {
    if (onDevice)
    {
      RunCudaOnDevice(input, output, options, report, stream);
    }
    else
    {
      RunCuda(input, output, options, report);
    }
  });
}

void
RunLocalDenoise(const SeriesView<const float> & input, const SeriesView<float> & output, const LocalDenoiseMaps & maps,
                const LocalDenoiseOptions & options, const std::array<std::size_t, 3> & patch,
                LocalDenoiseReport & report, const MagnitudeTransform * transform, CudaCallFailure & failure) noexcept
{
  CaptureFailure(failure, [&] { RunLocalDenoiseCuda(input, output, maps, options, patch, report, transform); });
}

constexpr CudaBackendTable kBackend{ CudaBackendLayout(),
                                     CudaVisibleDevices,
                                     DeviceReady,
                                     ReleaseCachedCudaResources,
                                     ResetCudaDevice,
                                     AllocatePinnedHost,
                                     FreePinnedHost,
                                     Run<float>,
                                     Run<double>,
                                     RunLocalDenoise };

} // namespace
} // namespace detail
} // namespace svdlr

extern "C" __attribute__((visibility("default"))) const svdlr::detail::CudaBackendTable *
SVDLR_CUDA_BACKEND_ENTRY(const svdlr::detail::CudaHostTable * host)
{
  if (host == nullptr || host->layout != svdlr::detail::CudaBackendLayout())
  {
    return nullptr;
  }
  svdlr::g_Engine = host;
  return &svdlr::detail::kBackend;
}
