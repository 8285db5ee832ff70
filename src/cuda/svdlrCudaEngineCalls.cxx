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

// The engine's functions that the CUDA backend's code calls, defined in the backend as calls into the engine that
// loaded it (svdlrCudaBackendTable.h says why the backend holds no copy of them). The backend is linked with
// -z defs, so an engine function that its code starts to call fails its link until it is added here and to
// CudaHostTable.
#include "svdlrCudaEngineCalls.h"
#include "svdlr/CpuThreads.h"

#include "denoise/svdlrLocalDenoiseBackends.h"
#include "shared/svdlrParallel.h"
#include "denoise/svdlrPatchCentres.h"

#include <cstdio>
#include <cstdlib>

namespace svdlr
{
namespace
{
const detail::CudaHostTable * g_Engine = nullptr;

const detail::CudaHostTable &
Engine()
{
  if (g_Engine == nullptr)
  {
    // Only a program that links the backend and calls into it without the engine's loader gets here.
    std::fputs("svdlr: the CUDA backend was called before the engine loaded it (detail::LoadCudaBackend)\n", stderr);
    std::abort();
  }
  return *g_Engine;
}
} // namespace

RunningParallelJob::RunningParallelJob(ParallelJobKind kind) noexcept
  : m_Kind(kind)
  , m_OuterKind(Engine().openParallelJob(kind))
{}

RunningParallelJob::~RunningParallelJob()
{
  Engine().closeParallelJob(m_Kind, m_OuterKind);
}

std::size_t
PatchStrideUsed(const std::array<std::size_t, 3> & patchUsed, PatchShape shape, PatchAggregation aggregation,
                std::size_t requested)
{
  return Engine().patchStrideUsed(patchUsed, shape, aggregation, requested);
}

Shrinkage
ResolveShrinkage(Shrinkage requested, const RankPolicy & policy, bool knownSigma)
{
  return Engine().resolveShrinkage(requested, policy, knownSigma);
}

SpherePatch
SpherePatchUsed(const std::array<std::size_t, 3> & size, std::size_t volumes, double requestedRadius)
{
  return Engine().spherePatchUsed(size, volumes, requestedRadius);
}

namespace detail
{

void
UseEngineCalls(const CudaHostTable & host) noexcept
{
  g_Engine = &host;
}

unsigned
WorkerCount(unsigned threads)
{
  return Engine().workerCount(threads);
}

unsigned
WorkerCount(const Options & options)
{
  return WorkerCount(options.threads);
}

void
PoolParallelFor(unsigned threads, std::size_t n, const std::function<void(std::size_t)> & body)
{
  Engine().poolParallelFor(threads, n, body);
}

ParallelFor
ParallelForOrThreads(const ParallelFor & given, unsigned workers)
{
  return Engine().parallelForOrThreads(given, workers);
}

RankChoice
SelectRank(const RankPolicy & policy, const double * singularValuesDescending, std::size_t count, std::size_t rows,
           std::size_t cols)
{
  return Engine().selectRank(policy, singularValuesDescending, count, rows, cols);
}

void
SingularValuesFromGramEigenvalues(const double * ascending, std::size_t count, std::vector<double> & singularValues)
{
  Engine().singularValuesFromGramEigenvalues(ascending, count, singularValues);
}

std::vector<std::uint8_t>
PatchCentres(const std::array<std::size_t, 3> & size, const std::array<std::size_t, 3> & patch, std::size_t stride,
             const std::uint8_t * mask)
{
  return Engine().patchCentres(size, patch, stride, mask);
}

std::vector<PatchOffset>
SphereOffsetOrder(const std::array<std::size_t, 3> & extent)
{
  return Engine().sphereOffsetOrder(extent);
}

} // namespace detail
} // namespace svdlr
