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
#ifndef svdlr_LocalDenoiseBackends_h
#define svdlr_LocalDenoiseBackends_h

// Internal contract between DenoiseLocalLowRank's front end (svdlrLocalDenoise.cxx) and its backends.
// The front end has validated the views, the options and the maps, checked that the input is finite (so a backend
// meets no NaN or Inf), resolved options.patchSize (never {0,0,0} here: `patch` holds the extent to use) and
// filled report.patchSize; it passes options.shrinkage with Auto resolved, but a backend reads it through
// ShrinksOptimally, so that a caller that reaches a backend directly (the CUDA tests' tuned runs, the CUDA
// benchmark) with Auto gets what DenoiseLocalLowRank would have done, not the hard threshold. A backend must:
//  - centre patches where PatchCentres (svdlrPatchCentres.h) says, and place them with svdlrPatchGeometry.h;
//  - write every output voxel (copying those outside the mask) and every map value asked for, or throw;
//  - give the same result as the CPU backend to within float32 rounding of the patch decompositions;
//  - report progress between batches of patches on the calling thread only, and set report.patches;
//  - when the output is the input (in place) and it throws an error after which Auto falls back to the CPU
//    (BackendUnavailable, DeviceFailure, OutOfMemory), not have written any output yet: the CPU reads the input.
// The CUDA backend also takes a magnitude transform (svdlrMagnitudeTransform.h), which it applies to each slab on
// its way in and inverts on its way out; the front end applies it on the host around the CPU backend.

#include "svdlr/LocalDenoise.h"

namespace svdlr
{

struct MagnitudeTransform; // svdlrMagnitudeTransform.h

namespace detail
{

/** Whether the patches' kept components are shrunk (OptimalFrobenius) rather than kept whole (Hard): the options'
 * shrinkage as ResolveShrinkage reads it, which leaves a resolved one as it is. Both backends ask this. */
inline bool
ShrinksOptimally(const LocalDenoiseOptions & options)
{
  return ResolveShrinkage(options.shrinkage, options.policy, options.noiseSigma != nullptr) ==
         Shrinkage::OptimalFrobenius;
}

/** The stride the patches are centred with: the options' as PatchStrideUsed reads it, which leaves a resolved one as
 * it is (a backend reached directly, as by the CUDA benchmark, gets the default kAutoPatchStride). Both backends ask
 * this. */
inline std::size_t
BackendPatchStride(const LocalDenoiseOptions & options, const std::array<std::size_t, 3> & patch)
{
  return PatchStrideUsed(patch, options.patchShape, options.aggregation, options.patchStride);
}

void
RunLocalDenoiseCpu(const SeriesView<const float> & input, const SeriesView<float> & output,
                   const LocalDenoiseMaps & maps, const LocalDenoiseOptions & options,
                   const std::array<std::size_t, 3> & patch, LocalDenoiseReport & report);

/** Same contract on the GPU (src/cuda/; svdlrCudaBackendDisabled.cxx throws BackendUnavailable). The views are
 * host memory; the backend stages slabs of the series through the device. With a `transform`, the output is its
 * inverse of the low-rank approximation of the input stabilised by it. */
void
RunLocalDenoiseCuda(const SeriesView<const float> & input, const SeriesView<float> & output,
                    const LocalDenoiseMaps & maps, const LocalDenoiseOptions & options,
                    const std::array<std::size_t, 3> & patch, LocalDenoiseReport & report,
                    const MagnitudeTransform * transform = nullptr);

} // namespace detail
} // namespace svdlr

#endif
