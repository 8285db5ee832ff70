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
#ifndef svdlr_DeviceBuffer_h
#define svdlr_DeviceBuffer_h

// RAII owners for device memory (cudaMalloc) and pinned host memory (cudaMallocHost). Sizes are in
// elements of T and 64-bit. Allocation comes in two flavours: Allocate() throws svdlr::Error, and
// TryAllocate() returns the CUDA status so that the pipeline can shrink its batch and retry when the
// device is out of memory.

#include "svdlrCudaCheck.h"
#include "svdlrDeviceAllocationFaults.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

namespace svdlr
{
namespace detail
{

/** Where a buffer lives; selects the CUDA allocator and deallocator. */
enum class MemorySpace
{
  Device,
  PinnedHost
};

template <typename T, MemorySpace VSpace>
class CudaBuffer
{
public:
  CudaBuffer() = default;
  ~CudaBuffer() { Release(); }

  CudaBuffer(const CudaBuffer &) = delete;
  CudaBuffer &
  operator=(const CudaBuffer &) = delete;

  CudaBuffer(CudaBuffer && other) noexcept
    : m_Data(std::exchange(other.m_Data, nullptr))
    , m_Size(std::exchange(other.m_Size, 0))
  {}
  CudaBuffer &
  operator=(CudaBuffer && other) noexcept
  {
    if (this != &other)
    {
      Release();
      m_Data = std::exchange(other.m_Data, nullptr);
      m_Size = std::exchange(other.m_Size, 0);
    }
    return *this;
  }

  /** Frees what the buffer held, then allocates `count` elements. On failure the buffer is empty, the
   * status is returned, and CUDA's sticky last-error slot is cleared so that the next launch check does
   * not report this allocation. */
  cudaError_t
  TryAllocate(std::size_t count)
  {
    Release();
    if (count == 0)
    {
      return cudaSuccess;
    }
    if (VSpace == MemorySpace::Device && DeviceAllocationFaults().NextFails())
    {
      return cudaErrorMemoryAllocation; // a test's injected fault: exactly what a full device answers
    }
    void *            pointer = nullptr;
    const std::size_t bytes = count * sizeof(T);
    const cudaError_t status =
      VSpace == MemorySpace::Device ? cudaMalloc(&pointer, bytes) : cudaMallocHost(&pointer, bytes);
    if (status != cudaSuccess)
    {
      (void)cudaGetLastError();
      return status;
    }
    m_Data = static_cast<T *>(pointer);
    m_Size = count;
    return cudaSuccess;
  }

  /** Keeps the memory when it holds at least `count` elements (Size() is then the capacity), otherwise
   * TryAllocate(count). Lets a cached buffer serve later, smaller or equal, requests. */
  cudaError_t
  TryReserve(std::size_t count)
  {
    return m_Size >= count ? cudaSuccess : TryAllocate(count);
  }

  void
  Allocate(std::size_t count)
  {
    const cudaError_t status = TryAllocate(count);
    CheckCuda(status, VSpace == MemorySpace::Device ? "cudaMalloc" : "cudaMallocHost", __FILE__, __LINE__);
  }

  /** Frees the memory. Errors from the free are ignored: this runs in destructors, possibly while an
   * exception unwinds, and there is nothing better to do with them. */
  void
  Release() noexcept
  {
    if (m_Data != nullptr)
    {
      if (VSpace == MemorySpace::Device)
      {
        (void)cudaFree(m_Data);
      }
      else
      {
        (void)cudaFreeHost(m_Data);
      }
      m_Data = nullptr;
      m_Size = 0;
    }
  }

  T *
  Data() const noexcept
  {
    return m_Data;
  }
  std::size_t
  Size() const noexcept
  {
    return m_Size;
  }
  std::size_t
  Bytes() const noexcept
  {
    return m_Size * sizeof(T);
  }

private:
  T *         m_Data{ nullptr };
  std::size_t m_Size{ 0 };
};

template <typename T>
using DeviceBuffer = CudaBuffer<T, MemorySpace::Device>;

template <typename T>
using PinnedBuffer = CudaBuffer<T, MemorySpace::PinnedHost>;

} // namespace detail
} // namespace svdlr

#endif
