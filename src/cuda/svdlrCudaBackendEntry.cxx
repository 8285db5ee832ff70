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

// The CUDA backend's one exported function: it takes the engine's functions and gives the backend's
// (svdlrCudaBackendTable.h). Every call returns its failure instead of throwing it across the boundary.
#include "shared/svdlrBackends.h"
#include "svdlrCudaEngineCalls.h"
#include "denoise/svdlrLocalDenoiseBackends.h"

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
  svdlr::detail::UseEngineCalls(*host);
  return &svdlr::detail::kBackend;
}
