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
#include "svdlrLocalDenoiseResources.h"

#include <initializer_list>

namespace svdlr
{
namespace detail
{

LocalDenoiseResources::LocalDenoiseResources(int device)
  : deviceId(device)
{
  compute = CreateStream();
  upload = CreateStream();
  download = CreateStream();
  for (int slot = 0; slot < 2; ++slot)
  {
    uploaded[slot] = CreateEvent();
    computed[slot] = CreateEvent();
  }
  hostFlags.Allocate(4);
}

cusolverDnHandle_t
LocalDenoiseResources::Cusolver()
{
  if (m_Cusolver.Get() == nullptr)
  {
    m_Cusolver = CreateCusolver(compute.Get());
  }
  return m_Cusolver.Get();
}

cusolverDnParams_t
LocalDenoiseResources::CusolverParams()
{
  if (m_CusolverParams.Get() == nullptr)
  {
    m_CusolverParams = CreateCusolverParams();
  }
  return m_CusolverParams.Get();
}

cublasHandle_t
LocalDenoiseResources::Cublas()
{
  if (m_Cublas.Get() == nullptr)
  {
    m_Cublas = CreateCublas(compute.Get());
  }
  return m_Cublas.Get();
}

std::size_t
LocalDenoiseResources::DeviceBytes() const
{
  return slots[0].Bytes() + slots[1].Bytes() + batch.Bytes() + fixed.Bytes();
}

void
LocalDenoiseResources::Quiesce() noexcept
{
  for (const StreamOwner * s : { &compute, &upload, &download })
  {
    if (s->Get() != nullptr)
    {
      (void)cudaStreamSynchronize(s->Get());
    }
  }
  (void)cudaGetLastError();
}

} // namespace detail
} // namespace svdlr
