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
#ifndef svdlr_CudaResourceCache_h
#define svdlr_CudaResourceCache_h

// What one run of the CUDA pipeline sets up and the next run can use again: the stream slots (streams,
// events, cuBLAS and cuSOLVER handles, device buffers, small pinned buffers) and the pinned staging ring.
// Creating them costs several milliseconds per run on the H100 (handles 0.4 ms, device buffers 1.5-2.5 ms,
// pinned staging 2.2 ms, freeing it all 2.7-3.8 ms; docs/performance.md), as much as the whole solve of a
// small volume. So the engine keeps one set per device and element type between calls, as PyTorch keeps
// its caching allocator and handles, in a DeviceResourceCache (svdlrDeviceResourceCache.h: only a run that
// succeeded gives its set back; svdlr::ReleaseCudaResources() and process exit free them).

#include "svdlrCudaPipeline.h"
#include "svdlrDeviceResourceCache.h"
#include "svdlrEigenSolver.h"
#include "svdlrStagingRing.h"
#include "svdlrCudaHandles.h"
#include "svdlrDeviceBuffer.h"

#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <type_traits>
#include <vector>

namespace svdlr
{
namespace detail
{

// One stream of the CUDA pipeline with everything a batch needs on it: its own cuBLAS and cuSOLVER handles
// (handles are not shared between streams), its device buffers, sized for the largest batch of a run, and
// small pinned buffers for the per-matrix results that come back to the host between the two halves of a
// batch (eigenvalues, flags, solver info) and the ranks that go back down. Slots outlive a run in the
// resource cache below: a later run keeps every buffer that is already large enough.

template <typename T>
struct CudaStreamSlot
{
  StreamOwner         stream;
  EventOwner          eigenReady; // eigenvalues, flags and info of the batch are on the host
  CublasOwner         cublas;
  CusolverOwner       cusolver;
  CusolverParamsOwner cusolverParams;

  SlotLayout                  layout;
  DeviceBuffer<T>             io;          // (batch, rows, cols): input, then output
  DeviceBuffer<double>        a;           // (batch, rows, cols) float64; empty when T is double
  DeviceBuffer<double>        gram;        // (batch, n, n): Gram matrices, then eigenvectors
  DeviceBuffer<double>        eigenvalues; // (batch, e), ascending (e: SlotLayout)
  DeviceBuffer<double>        subspace;    // the subspace solver's workspace; empty for the exact solver
  DeviceBuffer<int>           status;      // (kStatusArrays, batch): info | non-finite | redo flags | ranks
  DeviceBuffer<unsigned char> scratch;     // eigen workspace, then factors P | Q
  std::vector<unsigned char>  hostWorkspace;

  PinnedBuffer<double> hostEigenvalues; // (batch, e)
  PinnedBuffer<int>    hostStatus;      // (kStatusArrays, batch), same order as status

  std::size_t statusStride{ 0 }; // the planned batch: status and hostStatus hold kStatusArrays arrays this long

  // The batch now on this slot.
  std::size_t first{ 0 };
  std::size_t    count{ 0 };
  const double * ritzBasis{ nullptr }; // subspace solver: the orthonormal basis the eigenvectors refer to

  // The solver thread's work for the batch (see CudaPipeline::Launch). Declared last so that it is
  // destroyed first: a std::async future waits for its thread, which uses everything above.
  std::future<void> solved;

  /** Creates the stream and the handles bound to it. */
  void
  CreateHandles()
  {
    stream = CreateStream();
    eigenReady = CreateEvent();
    cublas = CreateCublas(stream.Get());
    cusolver = CreateCusolver(stream.Get());
    cusolverParams = CreateCusolverParams();
  }

  /** Makes the buffers hold `batch` matrices with `eigenSide` eigenvalues each, keeping those that are
   * already large enough; on failure releases everything and returns the status. */
  cudaError_t
  TryAllocate(const SlotLayout & slotLayout, std::size_t batch, std::size_t eigenSide, std::size_t hostWorkspaceBytes)
  {
    layout = slotLayout;
    statusStride = batch;
    const cudaError_t result = TryAllocateAll(batch, eigenSide);
    if (result != cudaSuccess)
    {
      Release();
      return result;
    }
    hostWorkspace.assign(hostWorkspaceBytes, 0);
    return cudaSuccess;
  }

  void
  Release() noexcept
  {
    io.Release();
    a.Release();
    gram.Release();
    eigenvalues.Release();
    subspace.Release();
    status.Release();
    scratch.Release();
    hostEigenvalues.Release();
    hostStatus.Release();
  }

  /** Whether every buffer already holds what `batch` matrices of `slotLayout` need (nothing to allocate). */
  bool
  Holds(const SlotLayout & slotLayout, std::size_t batch, std::size_t eigenSide) const
  {
    return io.Bytes() >= slotLayout.io && a.Bytes() >= slotLayout.a && gram.Bytes() >= slotLayout.gram &&
           eigenvalues.Bytes() >= slotLayout.eigenvalues && subspace.Bytes() >= slotLayout.subspace &&
           status.Size() >= kStatusArrays * batch && scratch.Bytes() >= slotLayout.scratch &&
           hostEigenvalues.Size() >= batch * eigenSide && hostStatus.Size() >= kStatusArrays * batch;
  }

  /** Device bytes the slot holds now (for the batch planner: a cached slot's memory is available). */
  std::size_t
  DeviceBytes() const
  {
    return io.Bytes() + a.Bytes() + gram.Bytes() + eigenvalues.Bytes() + subspace.Bytes() + status.Bytes() +
           scratch.Bytes();
  }

  /** Stops at the first failure; the caller releases. */
  cudaError_t
  TryAllocateAll(std::size_t batch, std::size_t eigenSide)
  {
    cudaError_t result = cudaSuccess;
    const auto  reserve = [&result](auto & buffer, std::size_t elements) {
      if (result == cudaSuccess)
      {
        result = buffer.TryReserve(elements);
      }
    };
    reserve(io, layout.io / sizeof(T));
    if (layout.a > 0)
    {
      reserve(a, layout.a / sizeof(double));
    }
    reserve(gram, layout.gram / sizeof(double));
    reserve(eigenvalues, layout.eigenvalues / sizeof(double));
    reserve(subspace, layout.subspace / sizeof(double));
    reserve(status, kStatusArrays * batch);
    reserve(scratch, layout.scratch);
    reserve(hostEigenvalues, batch * eigenSide);
    reserve(hostStatus, kStatusArrays * batch);
    return result;
  }

  /** The float64 copy of the batch: its own buffer for float input, io itself for double input. */
  double *
  Float64Input()
  {
    if constexpr (std::is_same_v<T, double>)
    {
      return io.Data();
    }
    else
    {
      return a.Data();
    }
  }

  /** The status arrays in status's and hostStatus's order: solver info, non-finite flags, the subspace solver's
   * check (1 where a matrix is to be redone with the exact solver), ranks. */
  enum StatusArray : std::size_t
  {
    Info,
    Flags,
    Redo,
    Ranks
  };
  int *
  Device(StatusArray array)
  {
    return status.Data() + array * statusStride;
  }
  int *
  Host(StatusArray array)
  {
    return hostStatus.Data() + array * statusStride;
  }
  double *
  FactorP()
  {
    return reinterpret_cast<double *>(scratch.Data());
  }
  double *
  FactorQ()
  {
    return reinterpret_cast<double *>(scratch.Data() + layout.factorQOffset);
  }
};

template <typename T>
struct CudaPipelineResources
{
  int                                             deviceId{ -1 };
  std::vector<std::unique_ptr<CudaStreamSlot<T>>> slots;
  std::unique_ptr<StagingRing>                    ring; // host input only
  std::size_t                                     ringLanes{ 0 };
  std::size_t                                     ringChunkBytes{ 0 };

  /** An empty set for `device`: the pipeline adds the slots and the ring it needs. */
  explicit CudaPipelineResources(int device)
    : deviceId(device)
  {}

  /** Device memory the slots hold, which a new run may count as available. */
  std::size_t
  DeviceBytes() const
  {
    std::size_t bytes = 0;
    for (const auto & slot : slots)
    {
      bytes += slot->DeviceBytes();
    }
    return bytes;
  }

  /** Adds a slot, with its stream and handles. */
  void
  AddSlot();

  /** cuSOLVER's workspace for a batch of `batch` matrices of side `eigenSide`, as slot 0's handles answer it. */
  EigenWorkspaceSize
  EigenWorkspace(std::int64_t eigenSide, std::size_t batch) const;

  /** Gives the first plan.slots slots the buffers of the planned batch, keeping those already large enough; when the
   * device runs out, halves the batch (in `plan`) and tries again, down to one matrix, then throws OutOfMemory.
   * freeBytes: what the plan took as free on `deviceId`, for the message. */
  void
  AllocateSlots(const BatchGeometry & geometry, std::size_t matrices, std::size_t freeBytes, int deviceId,
                BatchPlan & plan);
};

/** The cache of the pipeline's resources for element type T. */
template <typename T>
using CudaPipelineResourceCache = DeviceResourceCache<CudaPipelineResources<T>>;

} // namespace detail
} // namespace svdlr

#endif
