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
// The CUDA backend's entry points in a build configured with SVDLR_USE_CUDA=OFF.
#include "shared/svdlrBackends.h"
#include "denoise/svdlrLocalDenoiseBackends.h"

namespace svdlr
{
namespace detail
{

bool
CudaCompiledIn() noexcept
{
  return false;
}

bool
CudaDeviceReady(int, std::string & why)
{
  why = "this build has no CUDA backend (configure with -DSVDLR_USE_CUDA=ON and a CUDA toolkit)";
  return false;
}

bool
LoadCudaBackend(std::string & why)
{
  return CudaDeviceReady(0, why);
}

void
ReleaseCachedCudaResources() noexcept
{}

void
ResetCudaDevice(int) noexcept
{}

int
CudaVisibleDevices() noexcept
{
  return 0;
}

void *
AllocatePinnedHost(std::size_t) noexcept
{
  return nullptr;
}

void
FreePinnedHost(void *) noexcept
{}

template <typename T>
void
RunCuda(const MatrixBatch<const T> &, const MatrixBatch<T> &, const Options &, Report &)
{
  throw Error(ErrorCode::BackendUnavailable,
              "svdlr: this build has no CUDA backend (configure with -DSVDLR_USE_CUDA=ON and a CUDA toolkit)");
}

template <typename T>
void
RunCudaOnDevice(const MatrixBatch<const T> &, const MatrixBatch<T> &, const Options &, Report &, void *)
{
  throw Error(ErrorCode::BackendUnavailable,
              "svdlr: this build has no CUDA backend (configure with -DSVDLR_USE_CUDA=ON and a CUDA toolkit)");
}

void
RunLocalDenoiseCuda(const SeriesView<const float> &, const SeriesView<float> &, const LocalDenoiseMaps &,
                    const LocalDenoiseOptions &, const std::array<std::size_t, 3> &, LocalDenoiseReport &,
                    const MagnitudeTransform *)
{
  throw Error(ErrorCode::BackendUnavailable,
              "svdlr: this build has no CUDA backend (configure with -DSVDLR_USE_CUDA=ON and a CUDA toolkit)");
}

SVDLR_INSTANTIATE_RUN_CUDA;

} // namespace detail
} // namespace svdlr
