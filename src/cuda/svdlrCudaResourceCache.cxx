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
#include "svdlrCudaResourceCache.h"

#include "shared/svdlrBackends.h"

#include "svdlrCudaCheck.h"
#include "svdlrLocalDenoiseResources.h"
#include "svdlr/Engine.h"

#include <string>

namespace svdlr
{
namespace detail
{

template <typename T>
void
CudaPipelineResources<T>::AddSlot()
{
  slots.push_back(std::make_unique<CudaStreamSlot<T>>());
  slots.back()->CreateHandles();
}

template <typename T>
EigenWorkspaceSize
CudaPipelineResources<T>::EigenWorkspace(std::int64_t eigenSide, std::size_t batch) const
{
  return QueryEigenWorkspace(
    slots.front()->cusolver.Get(), slots.front()->cusolverParams.Get(), eigenSide, static_cast<std::int64_t>(batch));
}

template <typename T>
void
CudaPipelineResources<T>::AllocateSlots(const BatchGeometry & geometry, std::size_t matrices, std::size_t freeBytes,
                                        int deviceId, BatchPlan & plan)
{
  for (;;)
  {
    while (slots.size() < plan.slots)
    {
      AddSlot();
    }
    const EigenWorkspaceSize workspace = EigenWorkspace(geometry.EigenSide(), plan.batchSize);
    const SlotLayout         layout = ComputeSlotLayout(geometry, plan.batchSize, workspace.deviceBytes);
    const std::size_t        eigenSide = static_cast<std::size_t>(geometry.EigenSide());
    bool                     reused = true;
    for (std::size_t s = 0; s < plan.slots; ++s)
    {
      reused = reused && slots[s]->Holds(layout, plan.batchSize, eigenSide);
    }
    if (!reused)
    {
      // The plan counted the cached buffers as free memory: free them all before allocating anew.
      for (const auto & slot : slots)
      {
        slot->Release();
      }
    }
    cudaError_t status = cudaSuccess;
    for (std::size_t s = 0; s < plan.slots && status == cudaSuccess; ++s)
    {
      status = slots[s]->TryAllocate(layout, plan.batchSize, eigenSide, workspace.hostBytes);
    }
    if (status == cudaSuccess)
    {
      return;
    }
    for (const auto & slot : slots)
    {
      slot->Release();
    }
    if (status != cudaErrorMemoryAllocation)
    {
      SVDLR_CUDA_CHECK(status);
    }
    if (plan.batchSize == 1)
    {
      throw Error(ErrorCode::OutOfMemory,
                  "svdlr CUDA backend: not even one " +
                    MatrixShapeText(static_cast<std::size_t>(geometry.rows), static_cast<std::size_t>(geometry.cols)) +
                    " matrix fits on device " + std::to_string(deviceId) + ": it needs " +
                    std::to_string(plan.slots * layout.Total() >> 20) + " MiB, " + std::to_string(freeBytes >> 20) +
                    " MiB were free");
    }
    plan = PlanWithBatchSize(matrices, plan.batchSize / 2);
  }
}

template struct CudaPipelineResources<float>;
template struct CudaPipelineResources<double>;

void
ReleaseCachedCudaResources() noexcept
{
  LocalDenoiseResourceCache::Shared().Release();
  CudaPipelineResourceCache<float>::Shared().Release();
  CudaPipelineResourceCache<double>::Shared().Release();
}

} // namespace detail
} // namespace svdlr
