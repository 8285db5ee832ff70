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
// The local denoiser on the GPU (docs/denoising-cuda.md). The series goes through the device in slabs of z planes
// (svdlrLocalDenoisePlan.h), two slab slots in turn, on three streams:
//   upload stream:   host -> device through the pinned staging ring (svdlrLocalDenoiseResources.h);
//   compute stream:  unpack to compute layout; carry the previous slab's unfinished sums; per batch of patches:
//                    Gram matrices, eigenvalues, ranks, eigenvectors, approximations into the sums; finalise the
//                    planes no later patch touches, packed for the host (svdlrLocalDenoiseKernels.cuh);
//   download stream: device -> host, into the caller's output and maps.
// The host loop per slab s: Upload(s), Enqueue(s), then Retire(s - 1) (wait, download, progress), so that the GPU
// computes slab s while the host moves slabs s - 1 and s + 1. Output planes never overlap a later slab's input
// planes. The streams, handles and buffers come from the cache of an earlier run (svdlrLocalDenoiseResources.h) and
// go back to it after a successful run.
#include "svdlrCudaLocalDenoiser.h"

#include "noise/svdlrChooseRank.h"
#include "svdlrCudaCheck.h"
#include "svdlrCudaDevice.h"
#include "svdlrEigenSolver.h"
#include "denoise/svdlrLocalDenoiseBackends.h" // ShrinksOptimally, BackendPatchStride
#include "svdlrLocalDenoiseKernels.cuh"
#include "svdlrLocalDenoisePlan.h"
#include "svdlrLocalDenoiseResources.h"
#include "shared/svdlrParallel.h"
#include "denoise/svdlrPatchCentres.h"
#include "svdlrSmallEigenSolver.h"
#include "denoise/svdlrSpherePatch.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace svdlr
{
namespace detail
{
namespace
{

class CudaLocalDenoiser
{
public:
  CudaLocalDenoiser(const SeriesView<const float> & input, const SeriesView<float> & output,
                    const LocalDenoiseMaps & maps, const LocalDenoiseOptions & options,
                    const std::array<std::size_t, 3> & patch, const LocalDenoiseCudaTuning & tuning,
                    LocalDenoiseCudaTrace * trace, const MagnitudeTransform * transform)
    : m_Input(input)
    , m_Maps(maps)
    , m_Options(options)
    , m_Tuning(tuning)
    , m_Trace(trace)
    , m_Workers(WorkerCount(options.threads))
    , m_ParallelFor(ParallelForOrThreads(options.parallelFor, options.threads)) // 0: the share at each call
    , m_SphereOrder(options.patchShape == PatchShape::Sphere ? SphereOffsetOrder(patch) : std::vector<PatchOffset>{})
    , m_Geometry(GeometryOf(input, patch, options, m_SphereOrder))
    , m_N(m_Geometry.GramSide())
    , m_MaxVectors(MaxVectorsFor(options.policy, m_N))
    , m_UseCusolver(tuning.cusolver || !SmallEigenSolver::CanImplement(m_N, 1))
    , m_UseGemmGram(UsesGemmGram(tuning, m_N))
    , m_MapsOnly(output.data == nullptr)
    , m_Rule(RankRuleFor(options, m_Geometry))
    , m_Transfers(input, output, m_Geometry, m_ParallelFor)
    , m_Transform(transform, input.VoxelCount())
  {
    m_Shape.nx = m_Geometry.nx;
    m_Shape.ny = m_Geometry.ny;
    m_Shape.nz = m_Geometry.nz;
    m_Shape.volumes = m_Geometry.volumes;
    m_Shape.ex = m_Geometry.ex;
    m_Shape.ey = m_Geometry.ey;
    m_Shape.ez = m_Geometry.ez;
    m_Shape.patchVoxels = m_Geometry.sphereVoxels;
    m_Shape.overlap = IsOverlapAggregation(options.aggregation);
    m_Shape.maxVectors = m_MaxVectors;
    m_Shape.maps = maps.noiseSigma != nullptr || maps.rank != nullptr;
  }

  /** After Run(): the device memory its buffers took. */
  std::size_t
  DeviceBytes() const
  {
    return m_DeviceBytes;
  }

  /** Runs the whole series; returns the number of patches. */
  std::size_t
  Run()
  {
    ScopedDevice device(m_Options.deviceId);
    m_Resources = LocalDenoiseResourceCache::Shared().Take(m_Options.deviceId);
    try
    {
      Setup();
      m_DeviceBytes = m_Resources->DeviceBytes() + m_Transform.Bytes();
      for (std::size_t s = 0; s < m_Plan.slabs.size(); ++s)
      {
        Upload(s);
        Enqueue(s);
        if (s > 0)
        {
          Retire(s - 1);
        }
      }
      Retire(m_Plan.slabs.size() - 1);
      SVDLR_CUDA_CHECK(cudaStreamSynchronize(m_Resources->compute.Get()));
    }
    catch (...)
    {
      // Nothing may still run on buffers about to be freed; a failed set is not cached.
      m_Resources->Quiesce();
      LocalDenoiseResourceCache::FreeOnItsDevice(std::move(m_Resources));
      throw;
    }
    LocalDenoiseResourceCache::Shared().Put(std::move(m_Resources));
    if (m_Trace != nullptr)
    {
      m_Trace->usedCusolver = m_UseCusolver;
      m_Trace->usedGemmGram = m_UseGemmGram;
    }
    return m_TotalPatches;
  }

private:
  // -------------------------------------------------------------------------------------------------------------
  // Setup: the patches, the plan, the buffers, the fixed inputs and the staging ring.

  void
  Setup()
  {
    GroupCentresByPlane();
    const std::size_t voxels = static_cast<std::size_t>(m_Geometry.nz * PlaneVoxels());
    const std::size_t fixedBytes =
      FixedBytes(voxels, m_Options.mask != nullptr, m_Options.noiseSigma != nullptr, m_SphereOrder.size());
    PlanSlabsAndBatches(fixedBytes + m_Transform.Bytes());
    ReserveBuffers(fixedBytes);
    UploadFixedInputs();
    SizeStagingRing();
  }

  /** The patches, grouped by the plane of their centre (x fastest within a plane). */
  void
  GroupCentresByPlane()
  {
    const std::array<std::size_t, 3> patch{ static_cast<std::size_t>(m_Geometry.ex),
                                            static_cast<std::size_t>(m_Geometry.ey),
                                            static_cast<std::size_t>(m_Geometry.ez) };
    const std::vector<std::uint8_t>  bitmap =
      PatchCentres(m_Input.size, patch, BackendPatchStride(m_Options, patch), m_Options.mask);
    const std::int64_t planeVoxels = PlaneVoxels();
    m_PlaneCentreStart.assign(static_cast<std::size_t>(m_Geometry.nz) + 1, 0);
    m_Centres.clear();
    for (std::int64_t z = 0; z < m_Geometry.nz; ++z)
    {
      m_PlaneCentreStart[z] = static_cast<std::int64_t>(m_Centres.size());
      for (std::int64_t v = z * planeVoxels; v < (z + 1) * planeVoxels; ++v)
      {
        if (bitmap[static_cast<std::size_t>(v)])
        {
          m_Centres.push_back(v);
        }
      }
    }
    m_PlaneCentreStart[m_Geometry.nz] = static_cast<std::int64_t>(m_Centres.size());
    m_TotalPatches = m_Centres.size();
  }

  /** Memory: what is free, plus what the cached buffers hold (they are reused or replaced), less the reserve
   * (UsableDeviceBytes), capped by the caller's limit, less the run's fixed buffers. */
  std::size_t
  AvailableBytes(std::size_t fixedBytes) const
  {
    std::size_t usable = m_Tuning.availableBytes;
    if (usable == 0)
    {
      std::size_t freeBytes = 0, totalBytes = 0;
      SVDLR_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
      usable = UsableDeviceBytes(freeBytes + m_Resources->DeviceBytes());
    }
    return PlanBudgetBytes(usable, m_Options.deviceMemoryLimit, fixedBytes);
  }

  void
  PlanSlabsAndBatches(std::size_t fixedBytes)
  {
    const std::size_t available = AvailableBytes(fixedBytes);
    // cuSOLVER's XsyevBatched failed (CUSOLVER_STATUS_INTERNAL_ERROR, H100, CUDA 13.0) on 65,536 matrices of 65 x 65,
    // whose float64 data passes 2^31 bytes: its batches stay under 2^30 bytes of matrices.
    std::size_t batchCap = m_Options.maxPatchesPerBatch;
    if (m_UseCusolver)
    {
      const std::size_t limit =
        std::max<std::size_t>(1, (std::size_t{ 1 } << 30) / (static_cast<std::size_t>(m_N * m_N) * sizeof(double)));
      batchCap = batchCap > 0 ? std::min(batchCap, limit) : limit;
    }
    m_Plan = PlanLocalDenoise(m_Shape, available, batchCap, [this](std::int64_t b) { return SolverBytes(b); });
    if (m_Plan.batch == 0)
    {
      const std::size_t limit = m_Options.deviceMemoryLimit;
      const std::size_t needed = fixedBytes + SmallestPlanBytes(m_Shape, [this](std::int64_t b) { return SolverBytes(b); });
      if (limit > 0 && needed > limit)
      {
        throw Error(ErrorCode::InvalidArgument,
                    "svdlr: the device memory limit of " + MiB(limit) + " is below the " + MiB(needed) +
                      " that the local denoiser needs for one plane of this series and one patch");
      }
      throw Error(ErrorCode::OutOfMemory,
                  "svdlr: not even one plane of the series and one patch fit in the " + MiB(available) +
                    " of device memory available to the local denoiser");
    }
    if (m_Trace != nullptr)
    {
      m_Trace->slabs = m_Plan.slabs.size();
      m_Trace->batchSize = static_cast<std::size_t>(m_Plan.batch);
      m_Trace->centrePlanesPerSlab = static_cast<std::size_t>(m_Plan.centrePlanes);
    }
  }

  /** Device buffers, kept when the cached ones are large enough (and, under a memory limit, not larger), and
   * carved into their pieces. */
  void
  ReserveBuffers(std::size_t fixedBytes)
  {
    const bool limited = m_Options.deviceMemoryLimit > 0;
    const auto reserve = [limited](DeviceBuffer<unsigned char> & buffer, std::size_t bytes) {
      SVDLR_CUDA_CHECK(limited && buffer.Size() > bytes ? buffer.TryAllocate(bytes) : buffer.TryReserve(bytes));
    };
    for (auto & slot : m_Resources->slots)
    {
      reserve(slot, m_Plan.slabBytes / 2);
    }
    reserve(m_Resources->batch, m_Plan.batchBytes);
    reserve(m_Resources->fixed, fixedBytes);
    for (int slot = 0; slot < 2; ++slot)
    {
      m_Slab[slot] = CarveSlab(m_Resources->slots[slot].Data(), WindowPlanes(), PlaneVoxels(), m_Geometry.volumes);
    }
    m_Batch = CarveBatch(m_Resources->batch.Data(), m_Plan.batch, m_N, m_MaxVectors, SolverBytes(m_Plan.batch));
    if (m_UseCusolver)
    {
      m_Resources->cusolverHostWorkspace.resize(CusolverWorkspace(m_Plan.batch).hostBytes);
    }
    const std::size_t voxels = static_cast<std::size_t>(m_Geometry.nz * PlaneVoxels());
    m_Fixed = CarveFixed(
      m_Resources->fixed.Data(), voxels, m_Options.mask != nullptr, m_Options.noiseSigma != nullptr, m_SphereOrder.size());
    m_Geometry.sphereOrder = m_Fixed.sphereOrder;
  }

  /** The status flags' initial values, the mask, the σ map, a sphere's offset table and a magnitude transform, on
   * the device. */
  void
  UploadFixedInputs()
  {
    const std::size_t        voxels = static_cast<std::size_t>(m_Geometry.nz * PlaneVoxels());
    const cudaStream_t       compute = m_Resources->compute.Get();
    const unsigned long long initial[2] = { ULLONG_MAX, 0ull };
    SVDLR_CUDA_CHECK(cudaMemcpyAsync(m_Fixed.flags, initial, sizeof(initial), cudaMemcpyHostToDevice, compute));
    if (m_Fixed.mask != nullptr)
    {
      SVDLR_CUDA_CHECK(cudaMemcpyAsync(m_Fixed.mask, m_Options.mask, voxels, cudaMemcpyHostToDevice, compute));
    }
    if (m_Fixed.sigma != nullptr)
    {
      SVDLR_CUDA_CHECK(
        cudaMemcpyAsync(m_Fixed.sigma, m_Options.noiseSigma, voxels * sizeof(float), cudaMemcpyHostToDevice, compute));
    }
    if (m_Fixed.sphereOrder != nullptr)
    {
      SVDLR_CUDA_CHECK(cudaMemcpyAsync(m_Fixed.sphereOrder, m_SphereOrder.data(),
                                       m_SphereOrder.size() * sizeof(PatchOffset), cudaMemcpyHostToDevice, compute));
    }
    // Those copies are from pageable memory; finish them before the host buffers can go away.
    SVDLR_CUDA_CHECK(cudaStreamSynchronize(compute));
    m_Transform.Upload(compute);
  }

  /** The staging ring, sized for the largest slab transfer; the cached one is kept when it is large enough. */
  void
  SizeStagingRing()
  {
    const std::size_t transferBytes =
      static_cast<std::size_t>(WindowPlanes() * PlaneVoxels() * m_Geometry.volumes) * sizeof(float);
    std::size_t lanes = 0, chunkBytes = 0;
    StagingRing::Size(transferBytes, m_Workers, lanes, chunkBytes);
    if (m_Resources->ring == nullptr || m_Resources->ringLanes < lanes || m_Resources->ringChunkBytes < chunkBytes)
    {
      m_Resources->ring.reset();
      m_Resources->ring = std::make_unique<StagingRing>(m_Options.deviceId, lanes, chunkBytes);
      m_Resources->ringLanes = lanes;
      m_Resources->ringChunkBytes = chunkBytes;
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // Per slab: Upload (upload stream), Enqueue (compute stream), Retire (host, download stream).

  void
  Upload(std::size_t s)
  {
    const SlabExtent & e = m_Plan.slabs[s];
    const int          slot = static_cast<int>(s % 2);
    const cudaStream_t stream = m_Resources->upload.Get();
    StagingRing &      ring = *m_Resources->ring;
    m_Transfers.UploadInput(e.windowFirst, e.windowLast - e.windowFirst, m_Slab[slot].packedIn, ring, stream);

    const std::int64_t firstCentre = m_PlaneCentreStart[e.centreFirst];
    const std::int64_t centres = m_PlaneCentreStart[e.centreLast] - firstCentre;
    if (centres > 0)
    {
      const std::int64_t * list = m_Centres.data() + firstCentre;
      ring.Upload(OneHostBlock(list, static_cast<std::size_t>(centres)), m_Slab[slot].centres, stream, m_ParallelFor);
    }
    SVDLR_CUDA_CHECK(cudaEventRecord(m_Resources->uploaded[slot].Get(), stream));
  }

  void
  Enqueue(std::size_t s)
  {
    const SlabExtent & e = m_Plan.slabs[s];
    const int          slot = static_cast<int>(s % 2);
    const SlabWindow   window{ e.windowFirst, e.windowLast - e.windowFirst };
    const cudaStream_t compute = m_Resources->compute.Get();
    SlabBuffers &      b = m_Slab[slot];

    SVDLR_CUDA_CHECK(cudaStreamWaitEvent(compute, m_Resources->uploaded[slot].Get(), 0));
    LaunchUnpackSlab(
      b.packedIn, m_Transfers.InputLayout(), b.slab, m_Geometry, window, m_Transform.View(), m_Fixed.flags, compute);
    PrepareSums(s, window);

    const std::int64_t patches = m_PlaneCentreStart[e.centreLast] - m_PlaneCentreStart[e.centreFirst];
    for (std::int64_t first = 0; first < patches; first += m_Plan.batch)
    {
      const PatchBatch batch{ b.centres + first, std::min(m_Plan.batch, patches - first) };
      EnqueueBatch(batch, window, b);
      if (m_Trace != nullptr)
      {
        ++m_Trace->batches;
      }
    }

    LaunchFinaliseSlab(b.slab, b.sums, m_Geometry, window, e.outFirst, e.outLast - e.outFirst, m_Fixed.mask,
                       m_Transform.View(), m_Transfers.OutputLayout(), m_MapsOnly ? nullptr : b.packedOut,
                       m_Maps.noiseSigma != nullptr ? b.sigmaMap : nullptr,
                       m_Maps.rank != nullptr ? b.rankMap : nullptr, compute);
    SVDLR_CUDA_CHECK(cudaMemcpyAsync(m_Resources->hostFlags.Data() + 2 * slot, m_Fixed.flags,
                                     2 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, compute));
    SVDLR_CUDA_CHECK(cudaEventRecord(m_Resources->computed[slot].Get(), compute));
  }

  /** Slab s's sums: the previous slab's unfinished planes carried to the front, zeros after them. */
  void
  PrepareSums(std::size_t s, const SlabWindow & window)
  {
    const int          slot = static_cast<int>(s % 2);
    const cudaStream_t compute = m_Resources->compute.Get();
    const std::int64_t planeVoxels = PlaneVoxels();
    const std::int64_t nv = m_Geometry.volumes;
    SlabBuffers &      b = m_Slab[slot];
    std::int64_t       carried = 0;
    if (s > 0)
    {
      const SlabExtent &  previous = m_Plan.slabs[s - 1];
      const SlabBuffers & from = m_Slab[1 - slot];
      carried = previous.windowLast - previous.outLast;
      const std::int64_t offset = (previous.outLast - previous.windowFirst) * planeVoxels;
      const std::size_t  voxels = static_cast<std::size_t>(carried * planeVoxels);
      if (voxels > 0)
      {
        SVDLR_CUDA_CHECK(cudaMemcpyAsync(b.sums.values, from.sums.values + offset * nv,
                                         m_MapsOnly ? 0 : voxels * static_cast<std::size_t>(nv) * sizeof(double),
                                         cudaMemcpyDeviceToDevice, compute));
        SVDLR_CUDA_CHECK(cudaMemcpyAsync(
          b.sums.weights, from.sums.weights + offset, voxels * sizeof(double), cudaMemcpyDeviceToDevice, compute));
        SVDLR_CUDA_CHECK(cudaMemcpyAsync(
          b.sums.sigma, from.sums.sigma + offset, voxels * sizeof(double), cudaMemcpyDeviceToDevice, compute));
        SVDLR_CUDA_CHECK(cudaMemcpyAsync(
          b.sums.rank, from.sums.rank + offset, voxels * sizeof(double), cudaMemcpyDeviceToDevice, compute));
      }
    }
    const std::size_t done = static_cast<std::size_t>(carried * planeVoxels);
    const std::size_t rest = static_cast<std::size_t>((window.planes - carried) * planeVoxels);
    SVDLR_CUDA_CHECK(cudaMemsetAsync(b.sums.values + done * static_cast<std::size_t>(nv), 0,
                                     m_MapsOnly ? 0 : rest * static_cast<std::size_t>(nv) * sizeof(double), compute));
    SVDLR_CUDA_CHECK(cudaMemsetAsync(b.sums.weights + done, 0, rest * sizeof(double), compute));
    SVDLR_CUDA_CHECK(cudaMemsetAsync(b.sums.sigma + done, 0, rest * sizeof(double), compute));
    SVDLR_CUDA_CHECK(cudaMemsetAsync(b.sums.rank + done, 0, rest * sizeof(double), compute));
  }

  /** One batch of patches: Gram matrices, eigen-solve and ranks, approximations into the slab's sums. */
  void
  EnqueueBatch(const PatchBatch & batch, const SlabWindow & window, const SlabBuffers & slab)
  {
    const cudaStream_t compute = m_Resources->compute.Get();
    if (m_UseGemmGram) // its staging is the solver's workspace, which is free until the solve
    {
      LaunchPatchGramByGemm(slab.slab, m_Geometry, window, batch, m_Batch.gram, m_Batch.solver, m_Batch.solverBytes,
                            m_Resources->Cublas(), compute);
    }
    else
    {
      LaunchPatchGram(slab.slab, m_Geometry, window, batch, m_Batch.gram, compute);
    }
    const BasisView basis = m_UseCusolver ? SolveWithCusolver(batch) : SolveWithOwnSolver(batch);
    SlabSums        sums = slab.sums;
    sums.values = m_MapsOnly ? nullptr : sums.values; // the maps' sums alone
    LaunchPatchApproximation(slab.slab, m_Geometry, window, batch, basis, m_Batch.ranks, m_Batch.sigmas,
                             m_Batch.weights, static_cast<int>(m_MaxVectors), m_Options.aggregation, sums, compute);
  }

  /** cuSOLVER's XsyevBatched: every eigenvector (none for the maps alone), in place of the Gram matrices (ascending),
   * then the ranks. */
  BasisView
  SolveWithCusolver(const PatchBatch & batch)
  {
    SolveSymmetricEigenBatched(m_Resources->Cusolver(),
                               m_Resources->CusolverParams(),
                               m_Batch.gram,
                               m_Batch.eigenvalues,
                               m_Batch.info,
                               m_N,
                               batch.count,
                               m_Batch.solver,
                               m_Batch.solverBytes,
                               m_Resources->cusolverHostWorkspace.data(),
                               m_Resources->cusolverHostWorkspace.size(),
                               m_MapsOnly ? CUSOLVER_EIG_MODE_NOVECTOR : CUSOLVER_EIG_MODE_VECTOR);
    ChooseRanks(batch);
    return { m_Batch.gram, m_N * m_N, true };
  }

  /** Our solver: eigenvalues first, then the ranks, then only the eigenvectors the ranks keep (none for the maps
   * alone). */
  BasisView
  SolveWithOwnSolver(const PatchBatch & batch)
  {
    const cudaStream_t          compute = m_Resources->compute.Get();
    SmallEigenSolver::Arguments arguments;
    arguments.n = m_N;
    arguments.count = batch.count;
    arguments.matrices = m_Batch.gram;
    arguments.eigenvalues = m_Batch.eigenvalues;
    arguments.vectors = m_Batch.vectors;
    arguments.maxVectors = m_MaxVectors;
    arguments.vectorCounts = m_Batch.ranks;
    arguments.info = m_Batch.info;
    arguments.workspace = m_Batch.solver;
    arguments.workspaceBytes = m_Batch.solverBytes;
    SmallEigenSolver::RunEigenvalues(arguments, compute);
    ChooseRanks(batch);
    if (!m_MapsOnly)
    {
      SmallEigenSolver::RunEigenvectors(arguments, compute);
    }
    return { m_Batch.vectors, m_N * m_MaxVectors, false };
  }

  void
  ChooseRanks(const PatchBatch & batch)
  {
    LaunchChoosePatchRanks(m_Batch.eigenvalues, m_Fixed.sigma, batch, m_Geometry, m_Rule,
                           static_cast<int>(m_MaxVectors), m_Batch.info, m_Fixed.flags + 1, m_Batch.ranks,
                           m_Batch.sigmas, m_Batch.weights, m_Resources->compute.Get());
  }

  /** Waits for slab s, checks its flags, and moves its final planes and maps to the caller; progress. */
  void
  Retire(std::size_t s)
  {
    const SlabExtent & e = m_Plan.slabs[s];
    const int          slot = static_cast<int>(s % 2);
    SVDLR_CUDA_CHECK(cudaEventSynchronize(m_Resources->computed[slot].Get()));
    ThrowOnFlags(m_Resources->hostFlags.Data() + 2 * slot);

    const std::int64_t planes = e.outLast - e.outFirst;
    if (planes > 0)
    {
      const cudaStream_t stream = m_Resources->download.Get();
      StagingRing &      ring = *m_Resources->ring;
      SVDLR_CUDA_CHECK(cudaStreamWaitEvent(stream, m_Resources->computed[slot].Get(), 0));
      if (!m_MapsOnly)
      {
        m_Transfers.DownloadOutput(e.outFirst, planes, m_Slab[slot].packedOut, ring, stream);
      }
      m_Transfers.DownloadMaps(e.outFirst, planes, m_Slab[slot].sigmaMap, m_Slab[slot].rankMap, m_Maps, ring, stream);
    }
    m_Done += static_cast<std::size_t>(m_PlaneCentreStart[e.centreLast] - m_PlaneCentreStart[e.centreFirst]);
    ReportProgress(m_Options.progress, m_Done, m_TotalPatches, "patches");
  }

  /** flags: a slab's (first non-finite voxel, solver failures), as the compute stream left them. */
  void
  ThrowOnFlags(const unsigned long long * flags) const
  {
    if (flags[0] != ULLONG_MAX)
    {
      const std::size_t voxel = static_cast<std::size_t>(flags[0]);
      const std::size_t plane = static_cast<std::size_t>(PlaneVoxels());
      throw Error(ErrorCode::NonFiniteInput,
                  "svdlr: the input holds NaN or Inf at voxel " + std::to_string(voxel) + " (x " +
                    std::to_string(voxel % m_Input.size[0]) + ", y " + std::to_string(voxel % plane / m_Input.size[0]) +
                    ", z " + std::to_string(voxel / plane) + ")",
                  static_cast<std::ptrdiff_t>(voxel));
    }
    if (flags[1] != 0)
    {
      throw OwnSolverFailed{};
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // Sizes.

  /** "12.3 MiB", or "900 bytes" below 1 MiB, so that a limit and a need never read alike. */
  static std::string
  MiB(std::size_t bytes)
  {
    if (bytes < (std::size_t{ 1 } << 20))
    {
      return std::to_string(bytes) + " bytes";
    }
    char text[32];
    std::snprintf(text, sizeof(text), "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
    return text;
  }

  std::int64_t
  PlaneVoxels() const
  {
    return m_Geometry.PlaneVoxels();
  }

  /** Planes a slab window holds at most. */
  std::int64_t
  WindowPlanes() const
  {
    return std::min(m_Geometry.nz, m_Plan.centrePlanes + m_Geometry.ez - 1);
  }

  EigenWorkspaceSize
  CusolverWorkspace(std::int64_t batch)
  {
    return QueryEigenWorkspace(m_Resources->Cusolver(), m_Resources->CusolverParams(), m_N, batch,
                               m_MapsOnly ? CUSOLVER_EIG_MODE_NOVECTOR : CUSOLVER_EIG_MODE_VECTOR);
  }

  std::size_t
  SolverBytes(std::int64_t batch)
  {
    const std::size_t solver =
      m_UseCusolver ? CusolverWorkspace(batch).deviceBytes : SmallEigenSolver::WorkspaceBytes(m_N, batch, m_MaxVectors);
    const std::size_t perPatch = GemmGramStagingBytesPerPatch(m_Geometry);
    const std::size_t staged = std::min<std::size_t>(batch, std::max<std::size_t>(1, kGemmGramStagingBytes / perPatch));
    return m_UseGemmGram ? std::max(solver, staged * perPatch) : solver;
  }

  const SeriesView<const float> & m_Input;
  const LocalDenoiseMaps &        m_Maps;
  const LocalDenoiseOptions &     m_Options;
  const LocalDenoiseCudaTuning    m_Tuning;
  LocalDenoiseCudaTrace *         m_Trace;
  const unsigned                  m_Workers; // the staging ring's most lanes: the threads it may take at its start
  const ParallelFor               m_ParallelFor;

  const std::vector<PatchOffset> m_SphereOrder; // spheres: the offsets in the order patches take them
  DenoiseGeometry                m_Geometry;    // its sphereOrder set once the fixed buffers are carved
  const std::int64_t    m_N;          // the Gram matrices' side
  const std::int64_t    m_MaxVectors; // eigenvectors kept per patch at most
  const bool            m_UseCusolver;
  const bool            m_UseGemmGram;
  const bool            m_MapsOnly; // a σ pass: an output view with null data; no eigenvectors, values or output
  const PatchRankRule   m_Rule;
  LocalDenoiseShape     m_Shape;
  SlabTransfers         m_Transfers;
  DeviceMagnitudeTransform m_Transform; // none: its View() has no σ map

  std::vector<std::int64_t> m_Centres;          // linear voxel indices, by plane
  std::vector<std::int64_t> m_PlaneCentreStart; // (nz + 1): where plane z's centres start in m_Centres
  std::size_t               m_TotalPatches{ 0 };
  std::size_t               m_Done{ 0 };
  std::size_t               m_DeviceBytes{ 0 }; // the buffers' device memory (cached ones larger than needed whole)
  LocalDenoisePlan          m_Plan;

  std::unique_ptr<LocalDenoiseResources> m_Resources;
  SlabBuffers                            m_Slab[2];
  BatchBuffers                           m_Batch;
  FixedBuffers                           m_Fixed;
};

} // namespace

std::size_t
RunCudaLocalDenoiser(const SeriesView<const float> & input, const SeriesView<float> & output,
                     const LocalDenoiseMaps & maps, const LocalDenoiseOptions & options,
                     const std::array<std::size_t, 3> & patch, const LocalDenoiseCudaTuning & tuning,
                     LocalDenoiseCudaTrace * trace, const MagnitudeTransform * transform, std::size_t * deviceBytes)
{
  CudaLocalDenoiser denoiser(input, output, maps, options, patch, tuning, trace, transform);
  const std::size_t patches = denoiser.Run();
  if (deviceBytes != nullptr)
  {
    *deviceBytes = denoiser.DeviceBytes();
  }
  return patches;
}

} // namespace detail
} // namespace svdlr
