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
#ifndef svdlr_CudaHandles_h
#define svdlr_CudaHandles_h

// RAII owners for CUDA streams and events and for cuBLAS and cuSOLVER handles. Each owner creates its
// object in the constructor (throwing svdlr::Error on failure) and destroys it in the destructor, so that
// nothing leaks when an exception unwinds the pipeline. Destruction errors are ignored on purpose.

#include "svdlrCudaCheck.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include <utility>

namespace svdlr
{
namespace detail
{

/** Move-only owner of an opaque handle `THandle`, released by `VDestroy`. */
template <typename THandle, typename TStatus, TStatus (*VDestroy)(THandle)>
class UniqueHandle
{
public:
  UniqueHandle() = default;
  explicit UniqueHandle(THandle handle)
    : m_Handle(handle)
  {}
  ~UniqueHandle() { Reset(); }

  UniqueHandle(const UniqueHandle &) = delete;
  UniqueHandle &
  operator=(const UniqueHandle &) = delete;
  UniqueHandle(UniqueHandle && other) noexcept
    : m_Handle(std::exchange(other.m_Handle, THandle{}))
  {}
  UniqueHandle &
  operator=(UniqueHandle && other) noexcept
  {
    if (this != &other)
    {
      Reset();
      m_Handle = std::exchange(other.m_Handle, THandle{});
    }
    return *this;
  }

  void
  Reset() noexcept
  {
    if (m_Handle != THandle{})
    {
      (void)VDestroy(m_Handle);
      m_Handle = THandle{};
    }
  }

  THandle
  Get() const noexcept
  {
    return m_Handle;
  }

private:
  THandle m_Handle{};
};

using StreamOwner = UniqueHandle<cudaStream_t, cudaError_t, cudaStreamDestroy>;
using EventOwner = UniqueHandle<cudaEvent_t, cudaError_t, cudaEventDestroy>;
using CublasOwner = UniqueHandle<cublasHandle_t, cublasStatus_t, cublasDestroy>;
using CusolverOwner = UniqueHandle<cusolverDnHandle_t, cusolverStatus_t, cusolverDnDestroy>;
using CusolverParamsOwner = UniqueHandle<cusolverDnParams_t, cusolverStatus_t, cusolverDnDestroyParams>;

/** A non-blocking stream: it must not synchronise with the legacy default stream that the caller's
 * other CUDA work may use. */
inline StreamOwner
CreateStream()
{
  cudaStream_t stream = nullptr;
  SVDLR_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  return StreamOwner(stream);
}

/** Events only order work and tell the host when a batch is done; timing is off because it costs. */
inline EventOwner
CreateEvent()
{
  cudaEvent_t event = nullptr;
  SVDLR_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  return EventOwner(event);
}

/** A cuBLAS handle bound to `stream`. All our products are float64 (cublasDgemm), which TF32 never
 * touches; the math mode is still set explicitly to the default (no TF32, no FP64 emulation) so that a
 * later change to a float32 product cannot silently pick up reduced precision. */
inline CublasOwner
CreateCublas(cudaStream_t stream)
{
  cublasHandle_t handle = nullptr;
  SVDLR_CUBLAS_CHECK(cublasCreate(&handle));
  CublasOwner owner(handle);
  SVDLR_CUBLAS_CHECK(cublasSetStream(handle, stream));
  SVDLR_CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  return owner;
}

inline CusolverOwner
CreateCusolver(cudaStream_t stream)
{
  cusolverDnHandle_t handle = nullptr;
  SVDLR_CUSOLVER_CHECK(cusolverDnCreate(&handle));
  CusolverOwner owner(handle);
  SVDLR_CUSOLVER_CHECK(cusolverDnSetStream(handle, stream));
  return owner;
}

inline CusolverParamsOwner
CreateCusolverParams()
{
  cusolverDnParams_t params = nullptr;
  SVDLR_CUSOLVER_CHECK(cusolverDnCreateParams(&params));
  return CusolverParamsOwner(params);
}

} // namespace detail
} // namespace svdlr

#endif
