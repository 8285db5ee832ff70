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
#ifndef svdlr_LocalDenoiseCuda_h
#define svdlr_LocalDenoiseCuda_h

// The local denoiser's CUDA backend with its knobs and its trace, for tests and benchmarks: RunLocalDenoiseCuda
// (svdlrLocalDenoiseBackends.h) is this with default tuning and no trace. No CUDA type here, so that test and
// benchmark code compiles without nvcc.

#include "svdlrCudaExport.h"
#include "denoise/svdlrLocalDenoiseBackends.h"

#include <cstddef>
#include <cstdint>

namespace svdlr
{
namespace detail
{

/** The Gram side from which the Gram stage goes through cuBLAS's DGEMM (LaunchPatchGramByGemm) by default, and the
 * staging it takes at most: the stage benchmark at n = 65, 200 and 1,000 (docs/denoising-cuda.md). */
constexpr std::int64_t kGemmGramFromSide = 128;
constexpr std::size_t  kGemmGramStagingBytes = std::size_t{ 256 } << 20;

/** Overrides for experiments and tests; the defaults are what the engine uses. */
struct LocalDenoiseCudaTuning
{
  std::size_t availableBytes{ 0 }; // device memory the plan may use; 0: what cudaMemGetInfo reports, less a reserve
  bool        cusolver{ false };   // cuSOLVER's XsyevBatched instead of our eigen-solver (the reference)
  int         gemmGram{ -1 };      // the Gram stage by cuBLAS's DGEMM: -1 from kGemmGramFromSide on, 0 never, 1 always
};

/** What a run did: its plan and its solvers. */
struct LocalDenoiseCudaTrace
{
  std::size_t slabs{ 0 };
  std::size_t batches{ 0 };
  std::size_t batchSize{ 0 };
  std::size_t centrePlanesPerSlab{ 0 };
  bool        usedCusolver{ false };   // the reference solver ran (asked for, too large for ours, or after a failure)
  bool        usedGemmGram{ false };   // the Gram matrices came from cuBLAS's DGEMM (LaunchPatchGramByGemm)
};

SVDLR_CUDA_EXPORT void
RunLocalDenoiseCudaTuned(const SeriesView<const float> & input, const SeriesView<float> & output,
                         const LocalDenoiseMaps & maps, const LocalDenoiseOptions & options,
                         const std::array<std::size_t, 3> & patch, LocalDenoiseReport & report,
                         const LocalDenoiseCudaTuning & tuning, LocalDenoiseCudaTrace * trace,
                         const MagnitudeTransform * transform = nullptr);

} // namespace detail
} // namespace svdlr

#endif
