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
// The local denoiser's rank stage on the device (svdlrLocalDenoiseKernels.cuh): per patch, from its eigenvalues, the
// rank the policy keeps, σ and the shrinkage weights, as the CPU backend chooses them.
#include "svdlrLocalDenoiseKernels.cuh"

#include "svdlrCudaCheck.h"
#include "noise/svdlrChooseRank.h"
#include "svdlr/Engine.h"

namespace svdlr
{
namespace detail
{
namespace
{

constexpr int kScalarThreads = 128; // one thread per patch

// ---------------------------------------------------------------------------------------------------------------
// ChoosePatchRanks

/** One thread per patch: the rank rule every backend runs (ChoosePatchRank, svdlrChooseRank.h), then the weights of
 * PatchLowRank::Choose (svdlrPatchLowRank.cxx). */
__global__ void
__launch_bounds__(kScalarThreads)
  ChoosePatchRanksKernel(const double * __restrict__ eigenvalues, const float * __restrict__ knownSigma,
                         PatchBatch batch, DenoiseGeometry g, PatchRankRule rule, int maxVectors,
                         const int * __restrict__ info, unsigned long long * failures, int * __restrict__ ranks,
                         double * __restrict__ sigmas, double * __restrict__ weights)
{
  const std::int64_t b = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b >= batch.count)
  {
    return;
  }
  const int      n = static_cast<int>(g.GramSide());
  const int      m = static_cast<int>(g.PatchVoxels());
  const int      volumes = static_cast<int>(g.volumes);
  const double * lambda = eigenvalues + b * n;
  const double   sigmaGiven = knownSigma != nullptr ? static_cast<double>(knownSigma[batch.centres[b]]) : -1.0;
  const PatchNoiseShape shape = NoiseShapeOf(m, volumes, rule.removed);
  const NoiseRank       decided =
    ChoosePatchRank(rule.policy, rule.noiseEstimator, lambda, n, shape, sigmaGiven, rule.median);
  int rank = max(0, min(decided.rank, maxVectors));
  if (info != nullptr && info[b] != 0)
  {
    atomicAdd(failures, 1ull);
    rank = 0;
  }
  ranks[b] = rank;
  sigmas[b] = decided.sigma;
  for (int j = 0; j < rank; ++j)
  {
    // Component j belongs to the (j+1)-th largest eigenvalue.
    const double singular = sqrt(fmax(lambda[n - 1 - j], 0.0));
    double       weight = 1.0;
    if (rule.optimalShrinkage)
    {
      weight =
        singular > 0.0 ? OptimalFrobeniusShrinkage(singular, decided.sigma, shape.rows, shape.cols) / singular : 0.0;
    }
    weights[b * maxVectors + j] = weight;
  }
}

} // namespace

void
LaunchChoosePatchRanks(const double * eigenvalues, const float * knownSigma, const PatchBatch & batch,
                       const DenoiseGeometry & geometry, const PatchRankRule & rule, int maxVectors, const int * info,
                       unsigned long long * failures, int * ranks, double * sigmas, double * weights,
                       cudaStream_t stream)
{
  if (batch.count == 0)
  {
    return;
  }
  const unsigned blocks = static_cast<unsigned>((batch.count + kScalarThreads - 1) / kScalarThreads);
  ChoosePatchRanksKernel<<<blocks, kScalarThreads, 0, stream>>>(
    eigenvalues, knownSigma, batch, geometry, rule, maxVectors, info, failures, ranks, sigmas, weights);
  SVDLR_CUDA_CHECK_LAUNCH("ChoosePatchRanksKernel");
}

} // namespace detail
} // namespace svdlr
