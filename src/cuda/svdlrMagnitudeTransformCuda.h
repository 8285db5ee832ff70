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
#ifndef svdlr_MagnitudeTransformCuda_h
#define svdlr_MagnitudeTransformCuda_h

// A magnitude transform's tables and σ map (svdlrMagnitudeTransform.h) copied to the device for one run of the local
// denoiser, whose slab kernels stabilise and invert with them. Exported for the tests, which size a plan with it.

#include "svdlrCudaExport.h"
#include "svdlrDeviceBuffer.h"
#include "noise/svdlrMagnitudeTransform.h"

#include <cuda_runtime_api.h>

#include <cstddef>

namespace svdlr
{
namespace detail
{

class SVDLR_CUDA_EXPORT DeviceMagnitudeTransform
{
public:
  /** Nothing to copy without a transform (`host` null): View() then has no σ map, which the kernels read as none. */
  DeviceMagnitudeTransform(const MagnitudeTransform * host, std::size_t voxels);

  /** The device memory Upload() takes. */
  std::size_t
  Bytes() const
  {
    return m_Bytes;
  }

  /** Allocates on the current device and copies the tables and the σ map of `voxels` values (pageable host memory:
   * the copies are finished on `stream` before this returns). */
  void
  Upload(cudaStream_t stream);

  /** The transform with device pointers. */
  const MagnitudeTransform &
  View() const
  {
    return m_View;
  }

private:
  const MagnitudeTransform *  m_Host;
  std::size_t                 m_Voxels;
  std::size_t                 m_Bytes{ 0 };
  DeviceBuffer<unsigned char> m_Buffer;
  MagnitudeTransform          m_View{};
};

} // namespace detail
} // namespace svdlr

#endif
