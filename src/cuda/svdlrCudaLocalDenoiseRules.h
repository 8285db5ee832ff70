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
#ifndef svdlr_CudaLocalDenoiseRules_h
#define svdlr_CudaLocalDenoiseRules_h

// What the CUDA local denoiser (svdlrCudaLocalDenoiser.cxx) derives from the series, the patch and the options
// before it plans: the geometry its kernels see, the most eigenvectors a patch keeps, the rank rule, and which Gram
// stage it runs. No ITK header.

#include "svdlrLocalDenoiseCuda.h"
#include "svdlrLocalDenoiseKernels.cuh"
#include "denoise/svdlrSpherePatch.h"

#include "svdlr/Engine.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace svdlr
{
namespace detail
{

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

} // namespace detail
} // namespace svdlr

#endif
