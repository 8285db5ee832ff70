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

#include "svdlrLocalDenoiseCuda.h"

#include <array>
#include <cstddef>

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

} // namespace detail
} // namespace svdlr

#endif
