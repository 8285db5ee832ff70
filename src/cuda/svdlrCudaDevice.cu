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
#include "svdlrCudaDevice.h"

#include "shared/svdlrBackends.h"
#include "svdlrCudaCheck.h"

#include <cuda_runtime_api.h>

#include <exception>
#include <string>

namespace svdlr
{
namespace detail
{
namespace
{

/** Does nothing; its only use is to ask the runtime whether this binary carries code the device can run
 * (cudaFuncGetAttributes fails with cudaErrorInvalidDeviceFunction / NoKernelImageForDevice otherwise). All
 * our .cu files are compiled for the same architectures, so one probe answers for all of them. */
__global__ void
KernelImageProbe()
{}

std::string
Describe(cudaError_t status)
{
  return std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")";
}

} // namespace

ScopedDevice::ScopedDevice(int deviceId)
{
  SVDLR_CUDA_CHECK(cudaGetDevice(&m_Previous));
  if (m_Previous != deviceId)
  {
    SVDLR_CUDA_CHECK(cudaSetDevice(deviceId));
    m_Changed = true;
  }
}

ScopedDevice::~ScopedDevice()
{
  if (m_Changed)
  {
    (void)cudaSetDevice(m_Previous);
  }
}

void
ResetCudaDevice(int deviceId) noexcept
{
  if (cudaSetDevice(deviceId) == cudaSuccess)
  {
    (void)cudaDeviceReset();
  }
  (void)cudaGetLastError();
}

bool
CudaCompiledIn() noexcept
{
  return true;
}

bool
CudaDeviceReady(int deviceId, std::string & why)
{
  try
  {
    int               deviceCount = 0;
    const cudaError_t countStatus = cudaGetDeviceCount(&deviceCount);
    if (countStatus != cudaSuccess)
    {
      (void)cudaGetLastError();
      if (countStatus == cudaErrorInsufficientDriver)
      {
        int driverVersion = 0;
        int runtimeVersion = 0;
        (void)cudaDriverGetVersion(&driverVersion);
        (void)cudaRuntimeGetVersion(&runtimeVersion);
        if (driverVersion == 0)
        {
          why = "no NVIDIA driver found (libcuda is not installed or not loadable)";
        }
        else
        {
          why = "the NVIDIA driver is too old for this build: it supports CUDA " +
                std::to_string(driverVersion / 1000) + "." + std::to_string(driverVersion % 1000 / 10) +
                ", the backend was built with CUDA " + std::to_string(runtimeVersion / 1000) + "." +
                std::to_string(runtimeVersion % 1000 / 10);
        }
      }
      else if (countStatus == cudaErrorNoDevice)
      {
        why = "no CUDA device found";
      }
      else
      {
        why = "cudaGetDeviceCount failed: " + Describe(countStatus);
      }
      return false;
    }
    if (deviceCount == 0)
    {
      why = "no CUDA device found";
      return false;
    }
    if (deviceId < 0 || deviceId >= deviceCount)
    {
      why = "device id " + std::to_string(deviceId) + " is out of range: " + std::to_string(deviceCount) +
            " CUDA device(s), ids 0 to " + std::to_string(deviceCount - 1);
      return false;
    }
    cudaDeviceProp    properties{};
    const cudaError_t propertiesStatus = cudaGetDeviceProperties(&properties, deviceId);
    if (propertiesStatus != cudaSuccess)
    {
      (void)cudaGetLastError();
      why = "cudaGetDeviceProperties(" + std::to_string(deviceId) + ") failed: " + Describe(propertiesStatus);
      return false;
    }
    int computeMode = cudaComputeModeDefault;
    if (cudaDeviceGetAttribute(&computeMode, cudaDevAttrComputeMode, deviceId) != cudaSuccess)
    {
      (void)cudaGetLastError();
    }
    if (computeMode == cudaComputeModeProhibited)
    {
      why = "device " + std::to_string(deviceId) + " (" + properties.name + ") is in compute-prohibited mode";
      return false;
    }

    const ScopedDevice device(deviceId);
    cudaFuncAttributes attributes{};
    const cudaError_t  probeStatus = cudaFuncGetAttributes(&attributes, KernelImageProbe);
    if (probeStatus != cudaSuccess)
    {
      (void)cudaGetLastError();
      why = "device " + std::to_string(deviceId) + " (" + properties.name + ", compute capability " +
            std::to_string(properties.major) + "." + std::to_string(properties.minor) +
            ") cannot run this build's kernels: " + Describe(probeStatus) +
            "; rebuild with CMAKE_CUDA_ARCHITECTURES including it";
      return false;
    }
    why.clear();
    return true;
  }
  catch (const std::exception & error)
  {
    why = error.what();
    return false;
  }
}

} // namespace detail
} // namespace svdlr
