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
#ifndef svdlr_CudaLocalDenoiser_h
#define svdlr_CudaLocalDenoiser_h

// One run of the local denoiser on the device (docs/denoising-cuda.md), without the fallbacks around it
// (svdlrLocalDenoiseCuda.cxx: cuSOLVER after our eigen-solver gave up; the output held aside when in place).

#include "svdlrCudaExport.h"
#include "svdlrDeviceBuffer.h"
#include "svdlrLocalDenoiseCuda.h"
#include "svdlrLocalDenoiseKernels.cuh"
#include "denoise/svdlrSpherePatch.h"
#include "noise/svdlrMagnitudeTransform.h"
#include "svdlr/Engine.h"

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace svdlr
{
namespace detail
{

/** Our solver gave up on some patch (its info flag): the run is redone with cuSOLVER where that is safe. */
struct OwnSolverFailed
{};

/** Denoises the whole series on options.deviceId, stabilised on its way in and inverted on its way out by
 * `transform` when given; returns the number of patches, and in `deviceBytes` (when given)
 * the device memory its buffers took. Throws OwnSolverFailed when our eigen-solver did not converge on a patch
 * (planes may have been written to `output` by then), svdlr::Error otherwise. */
std::size_t
RunCudaLocalDenoiser(const SeriesView<const float> & input, const SeriesView<float> & output,
                     const LocalDenoiseMaps & maps, const LocalDenoiseOptions & options,
                     const std::array<std::size_t, 3> & patch, const LocalDenoiseCudaTuning & tuning,
                     LocalDenoiseCudaTrace * trace, const MagnitudeTransform * transform = nullptr,
                     std::size_t * deviceBytes = nullptr);

// What the CUDA local denoiser (svdlrCudaLocalDenoiser.cxx) derives from the series, the patch and the options
// before it plans: the geometry its kernels see, the most eigenvectors a patch keeps, the rank rule, and which Gram
// stage it runs. No ITK header.

/** The series and the patch; a sphere's voxel count and table size (the table's device address comes with the
 * fixed buffers). */
DenoiseGeometry
GeometryOf(const SeriesView<const float> & input, const std::array<std::size_t, 3> & patch,
           const LocalDenoiseOptions & options, const std::vector<PatchOffset> & sphereOrder);

/** The most eigenvectors a patch keeps: the fixed rank, else all n. */
std::int64_t
MaxVectorsFor(const RankPolicy & policy, std::int64_t n);

/** The options' rank policy, with what ChooseRank needs besides, for ChoosePatchRanks. */
PatchRankRule
RankRuleFor(const LocalDenoiseOptions & options, const DenoiseGeometry & geometry);

/** The Gram stage by cuBLAS's DGEMM (LaunchPatchGramByGemm) at Gram side n: from kGemmGramFromSide on, unless the
 * tuning says otherwise. */
inline bool
UsesGemmGram(const LocalDenoiseCudaTuning & tuning, std::int64_t n)
{
  return tuning.gemmGram < 0 ? n >= kGemmGramFromSide : tuning.gemmGram == 1;
}

// A magnitude transform's tables and σ map (svdlrMagnitudeTransform.h) copied to the device for one run of the local
// denoiser, whose slab kernels stabilise and invert with them. Exported for the tests, which size a plan with it.

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
