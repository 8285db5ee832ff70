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
// DenoiseLocalLowRank on the GPU (docs/denoising-cuda.md). The series goes through the device in slabs of z planes
// (svdlrLocalDenoisePlan.h), two slab slots in turn, on three streams:
//   upload stream:   host -> device through the pinned staging ring (the caller's memory is never pinned);
//   compute stream:  unpack to compute layout; carry the previous slab's unfinished sums; per batch of patches:
//                    Gram matrices, eigenvalues, ranks, eigenvectors, approximations into the sums; finalise the
//                    planes no later patch touches, packed for the host;
//   download stream: device -> host, into the caller's output and maps.
// The host loop per slab s: upload(s), enqueue(s), then retire(s - 1) (wait, download, progress), so that the GPU
// computes slab s while the host moves slabs s - 1 and s + 1. Output planes never overlap a later slab's input
// planes; in place, the output is still held aside until the run has succeeded, so that a failed run leaves the
// input intact for the CPU fallback (svdlrLocalDenoiseBackends.h).
#include "svdlrLocalDenoiseCuda.h"

#include "svdlrCudaCheck.h"
#include "svdlrCudaDevice.h"
#include "svdlrCudaHandles.h"
#include "svdlrCudaPipelineTrace.h"
#include "svdlrDeviceBuffer.h"
#include "svdlrEigenSolver.h"
#include "svdlrLocalDenoiseKernels.cuh"
#include "svdlrLocalDenoisePlan.h"
#include "svdlrChooseRank.h"
#include "svdlrParallel.h"
#include "svdlrPatchCentres.h"
#include "svdlrProgress.h"
#include "svdlrSmallEigenSolver.h"
#include "svdlrStagingRing.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace svdlr
{
namespace detail
{
namespace
{

// Left free, as the slice pipeline does (svdlrCudaPipeline.cu): cuBLAS/cuSOLVER internals, the context's growth.
constexpr std::size_t kReservedBytes = std::size_t{ 256 } << 20;
constexpr std::size_t kReservedFraction = 20;
constexpr std::size_t kAlignment = 256;

std::size_t
Aligned(std::size_t bytes)
{
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

/** Our solver gave up on some patch (QL did not converge): the run is redone with cuSOLVER where that is safe. */
struct OwnSolverFailed
{};

/** Typed pieces of one device allocation. */
class Carver
{
public:
  explicit Carver(unsigned char * base)
    : m_Base(base)
  {}
  template <typename T>
  T *
  Take(std::size_t count)
  {
    T * at = reinterpret_cast<T *>(m_Base + m_Used);
    m_Used += Aligned(count * sizeof(T));
    return at;
  }
  std::size_t
  Used() const
  {
    return m_Used;
  }

private:
  unsigned char * m_Base;
  std::size_t     m_Used{ 0 };
};

/** Per-stage GPU time on one stream, for the trace only: a timing event after each stage; the time since the
 * previous event is the stage's. */
class StageClock
{
public:
  enum Stage
  {
    Unpack,
    Gram,
    Tridiagonal,
    Eigenvalues,
    Ranks,
    Eigenvectors,
    Approximation,
    Finalise,
    Stages
  };

  StageClock() = default;
  ~StageClock()
  {
    for (const auto & mark : m_Marks)
    {
      (void)cudaEventDestroy(mark.event);
    }
  }
  StageClock(const StageClock &) = delete;
  StageClock &
  operator=(const StageClock &) = delete;

  void
  Mark(Stage stage, cudaStream_t stream)
  {
    cudaEvent_t event = nullptr;
    SVDLR_CUDA_CHECK(cudaEventCreate(&event));
    m_Marks.push_back({ event, stage });
    SVDLR_CUDA_CHECK(cudaEventRecord(event, stream));
  }

  /** After the stream is done: milliseconds per stage. */
  std::array<double, Stages>
  Elapsed() const
  {
    std::array<double, Stages> total{};
    for (std::size_t i = 1; i < m_Marks.size(); ++i)
    {
      float milliseconds = 0;
      SVDLR_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, m_Marks[i - 1].event, m_Marks[i].event));
      total[m_Marks[i].stage] += milliseconds;
    }
    return total;
  }

private:
  struct MarkAt
  {
    cudaEvent_t event;
    Stage       stage;
  };
  std::vector<MarkAt> m_Marks;
};

/** One slab slot's device buffers, carved from the slot's allocation (SlabSlotBytes). */
struct SlabBuffers
{
  float *         packedIn{ nullptr };
  float *         slab{ nullptr };
  SlabSums        sums;
  float *         packedOut{ nullptr };
  float *         sigmaMap{ nullptr };
  std::uint16_t * rankMap{ nullptr };
  std::int64_t *  centres{ nullptr };
};

SlabBuffers
CarveSlab(unsigned char * base, std::int64_t planes, std::int64_t planeVoxels, std::int64_t volumes)
{
  const std::size_t voxels = static_cast<std::size_t>(planes * planeVoxels);
  const std::size_t elements = voxels * static_cast<std::size_t>(volumes);
  Carver            carve(base);
  SlabBuffers       b;
  b.packedIn = carve.Take<float>(elements);
  b.slab = carve.Take<float>(elements);
  b.sums.values = carve.Take<double>(elements);
  b.sums.counts = carve.Take<unsigned>(voxels);
  b.sums.sigma = carve.Take<double>(voxels);
  b.sums.rank = carve.Take<double>(voxels);
  b.packedOut = carve.Take<float>(elements);
  // The maps share one piece (SlabSlotBytes): σ first, the ranks after it.
  unsigned char * maps = carve.Take<unsigned char>(voxels * (sizeof(float) + sizeof(std::uint16_t)));
  b.sigmaMap = reinterpret_cast<float *>(maps);
  b.rankMap = reinterpret_cast<std::uint16_t *>(maps + voxels * sizeof(float));
  b.centres = carve.Take<std::int64_t>(voxels);
  return b;
}

/** The buffers of one batch, carved from the batch allocation (BatchBytes, in the same order). */
struct BatchBuffers
{
  double *        gram{ nullptr };
  double *        vectors{ nullptr };
  double *        eigenvalues{ nullptr };
  double *        weights{ nullptr };
  double *        sigmas{ nullptr };
  int *           ranks{ nullptr };
  int *           info{ nullptr };
  unsigned char * scratch{ nullptr };
  unsigned char * solver{ nullptr };
  std::size_t     solverBytes{ 0 };
};

/** What the local denoiser keeps between runs on one device: creating streams, handles and pinned staging and
 * allocating device memory costs milliseconds (docs/performance.md), like the slice pipeline's cache. */
struct LocalDenoiseResources
{
  int                          deviceId{ -1 };
  StreamOwner                  compute;
  StreamOwner                  upload;
  StreamOwner                  download;
  EventOwner                   uploaded[2];
  EventOwner                   computed[2];
  CusolverOwner                cusolver;
  CusolverParamsOwner          cusolverParams;
  std::unique_ptr<StagingRing> ring;
  std::size_t                  ringLanes{ 0 };
  std::size_t                  ringChunkBytes{ 0 };
  DeviceBuffer<unsigned char>  slots[2];
  DeviceBuffer<unsigned char>  batch;
  DeviceBuffer<unsigned char>  fixed; // flags, mask, σ map
  PinnedBuffer<unsigned long long> hostFlags; // (2 slots, 2): first non-finite voxel, solver failures
  std::vector<unsigned char>   cusolverHostWorkspace;

  void
  Create(int device)
  {
    deviceId = device;
    compute = CreateStream();
    upload = CreateStream();
    download = CreateStream();
    for (int slot = 0; slot < 2; ++slot)
    {
      uploaded[slot] = CreateEvent();
      computed[slot] = CreateEvent();
    }
    cusolver = CreateCusolver(compute.Get());
    cusolverParams = CreateCusolverParams();
    hostFlags.Allocate(4);
  }

  std::size_t
  DeviceBytes() const
  {
    return slots[0].Bytes() + slots[1].Bytes() + batch.Bytes() + fixed.Bytes();
  }

  /** Waits for everything this set may still be doing (after an error), ignoring failures. */
  void
  Quiesce() noexcept
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
};

std::mutex &
CacheMutex()
{
  static std::mutex mutex;
  return mutex;
}

std::vector<std::unique_ptr<LocalDenoiseResources>> &
Cache()
{
  static std::vector<std::unique_ptr<LocalDenoiseResources>> cache;
  return cache;
}

std::unique_ptr<LocalDenoiseResources>
TakeResources(int deviceId)
{
  {
    const std::lock_guard<std::mutex> lock(CacheMutex());
    auto &                            cache = Cache();
    for (auto it = cache.begin(); it != cache.end(); ++it)
    {
      if ((*it)->deviceId == deviceId)
      {
        auto taken = std::move(*it);
        cache.erase(it);
        return taken;
      }
    }
  }
  auto fresh = std::make_unique<LocalDenoiseResources>();
  fresh->Create(deviceId);
  return fresh;
}

void
FreeOnItsDevice(std::unique_ptr<LocalDenoiseResources> resources) noexcept
{
  if (resources == nullptr)
  {
    return;
  }
  try
  {
    const ScopedDevice device(resources->deviceId);
    resources.reset();
  }
  catch (...)
  {
    resources.reset();
  }
}

void
ReleaseAtExit()
{
  ReleaseLocalDenoiseResources();
}

void
GiveBackResources(std::unique_ptr<LocalDenoiseResources> resources)
{
  // Registered on first use, after the CUDA runtime's own exit handlers, so that it runs before them.
  static const int registered = std::atexit(ReleaseAtExit);
  (void)registered;
  std::unique_ptr<LocalDenoiseResources> replaced;
  {
    const std::lock_guard<std::mutex> lock(CacheMutex());
    for (auto & entry : Cache())
    {
      if (entry->deviceId == resources->deviceId)
      {
        replaced = std::exchange(entry, std::move(resources));
        break;
      }
    }
    if (resources != nullptr)
    {
      Cache().push_back(std::move(resources));
    }
  }
  FreeOnItsDevice(std::move(replaced));
}

/** How a view's elements lie in host memory, and whether a slab of it is one block per volume (VolumesOuter) or
 * one block (VolumesInner) that the staging ring can copy as it is. */
struct HostLayout
{
  PackedLayout packed{ PackedLayout::VolumesOuter };
  bool         direct{ false };
};

template <typename T>
HostLayout
LayoutOf(const SeriesView<T> & view)
{
  const auto &         s = view.strides;
  const std::ptrdiff_t nx = static_cast<std::ptrdiff_t>(view.size[0]);
  const std::ptrdiff_t ny = static_cast<std::ptrdiff_t>(view.size[1]);
  const std::ptrdiff_t nz = static_cast<std::ptrdiff_t>(view.size[2]);
  const std::ptrdiff_t nv = static_cast<std::ptrdiff_t>(view.volumes);
  if (s[0] == 1 && s[1] == nx && s[2] == nx * ny && s[3] >= nx * ny * nz)
  {
    return { PackedLayout::VolumesOuter, true };
  }
  if (s[3] == 1 && s[0] == nv && s[1] == nv * nx && s[2] == nv * nx * ny)
  {
    return { PackedLayout::VolumesInner, true };
  }
  return { std::abs(s[3]) >= std::abs(s[0]) ? PackedLayout::VolumesOuter : PackedLayout::VolumesInner, false };
}

class CudaLocalDenoiser
{
public:
  CudaLocalDenoiser(const SeriesView<const float> & input, const SeriesView<float> & output,
                    const LocalDenoiseMaps & maps, const LocalDenoiseOptions & options,
                    const std::array<std::size_t, 3> & patch, const LocalDenoiseCudaTuning & tuning,
                    LocalDenoiseCudaTrace * trace)
    : m_Input(input)
    , m_Output(output)
    , m_Maps(maps)
    , m_Options(options)
    , m_Tuning(tuning)
    , m_Trace(trace)
    , m_InLayout(LayoutOf(input))
    , m_OutLayout(LayoutOf(output))
    , m_Workers(WorkerCount(options.threads))
  {
    m_Geometry.nx = static_cast<std::int64_t>(input.size[0]);
    m_Geometry.ny = static_cast<std::int64_t>(input.size[1]);
    m_Geometry.nz = static_cast<std::int64_t>(input.size[2]);
    m_Geometry.volumes = static_cast<std::int64_t>(input.volumes);
    m_Geometry.ex = static_cast<std::int64_t>(patch[0]);
    m_Geometry.ey = static_cast<std::int64_t>(patch[1]);
    m_Geometry.ez = static_cast<std::int64_t>(patch[2]);
    m_N = m_Geometry.GramSide();
    m_UseCusolver = tuning.cusolver || !SmallEigenSolver::CanImplement(m_N, 1);

    const RankPolicy & policy = options.policy;
    m_MaxVectors = policy.kind == RankPolicy::Kind::FixedRank
                     ? std::max<std::int64_t>(1, std::min<std::int64_t>(static_cast<std::int64_t>(policy.rank), m_N))
                     : m_N;
    m_Rule.policy = policy;
    m_Rule.optimalShrinkage = options.shrinkage == Shrinkage::OptimalFrobenius;
    if (NeedsMarchenkoPasturMedian(policy, options.noiseSigma != nullptr))
    {
      m_Rule.median = MarchenkoPasturMedian(
        NoiseAspectRatio(static_cast<int>(m_Geometry.PatchVoxels()), static_cast<int>(m_Geometry.volumes)));
    }

    m_Shape.nx = m_Geometry.nx;
    m_Shape.ny = m_Geometry.ny;
    m_Shape.nz = m_Geometry.nz;
    m_Shape.volumes = m_Geometry.volumes;
    m_Shape.ex = m_Geometry.ex;
    m_Shape.ey = m_Geometry.ey;
    m_Shape.ez = m_Geometry.ez;
    m_Shape.overlap = options.aggregation == PatchAggregation::OverlapAverage;
    m_Shape.maxVectors = m_MaxVectors;
    m_Shape.maps = maps.noiseSigma != nullptr || maps.rank != nullptr;

    m_ParallelFor = ParallelForOrThreads(options.parallelFor, m_Workers);
  }

  /** Runs the whole series; returns the number of patches. */
  std::size_t
  Run()
  {
    const auto   start = std::chrono::steady_clock::now();
    ScopedDevice device(m_Options.deviceId);
    m_Resources = TakeResources(m_Options.deviceId);
    try
    {
      {
        TraceSpan span(m_Trace ? &m_Trace->setup : nullptr);
        Setup();
      }
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
      if (m_Trace != nullptr)
      {
        const auto gpu = m_Clock.Elapsed();
        m_Trace->gpuUnpack += gpu[StageClock::Unpack];
        m_Trace->gpuGram += gpu[StageClock::Gram];
        m_Trace->gpuTridiagonal += gpu[StageClock::Tridiagonal];
        m_Trace->gpuEigenvalues += gpu[StageClock::Eigenvalues];
        m_Trace->gpuRanks += gpu[StageClock::Ranks];
        m_Trace->gpuEigenvectors += gpu[StageClock::Eigenvectors];
        m_Trace->gpuApproximation += gpu[StageClock::Approximation];
        m_Trace->gpuFinalise += gpu[StageClock::Finalise];
      }
    }
    catch (...)
    {
      // Nothing may still run on buffers about to be freed; a failed set is not cached.
      m_Resources->Quiesce();
      FreeOnItsDevice(std::move(m_Resources));
      throw;
    }
    GiveBackResources(std::move(m_Resources));
    if (m_Trace != nullptr)
    {
      m_Trace->usedCusolver = m_UseCusolver;
      m_Trace->total += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    }
    return m_TotalPatches;
  }

private:
  std::int64_t
  PlaneVoxels() const
  {
    return m_Geometry.PlaneVoxels();
  }

  std::size_t
  SolverBytes(std::int64_t batch)
  {
    if (m_UseCusolver)
    {
      return QueryEigenWorkspace(m_Resources->cusolver.Get(), m_Resources->cusolverParams.Get(), m_N, batch)
        .deviceBytes;
    }
    return SmallEigenSolver::WorkspaceBytes(m_N, batch, m_MaxVectors);
  }

  void
  Setup()
  {
    // The patches, grouped by the plane of their centre (x fastest within a plane).
    const std::vector<std::uint8_t> bitmap =
      PatchCentres(m_Input.size,
                   { static_cast<std::size_t>(m_Geometry.ex), static_cast<std::size_t>(m_Geometry.ey),
                     static_cast<std::size_t>(m_Geometry.ez) },
                   m_Options.patchStride,
                   m_Options.mask);
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

    // Memory: what is free, plus what the cached buffers hold (they are reused or replaced), less a reserve and the
    // run's fixed buffers.
    const std::size_t voxels = static_cast<std::size_t>(m_Geometry.nz * planeVoxels);
    const std::size_t fixedBytes = Aligned(4 * sizeof(unsigned long long)) +
                                   (m_Options.mask != nullptr ? Aligned(voxels) : 0) +
                                   (m_Options.noiseSigma != nullptr ? Aligned(voxels * sizeof(float)) : 0);
    std::size_t available = m_Tuning.availableBytes;
    if (available == 0)
    {
      std::size_t freeBytes = 0, totalBytes = 0;
      SVDLR_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
      freeBytes += m_Resources->DeviceBytes();
      const std::size_t reserve = kReservedBytes + freeBytes / kReservedFraction;
      available = freeBytes > reserve ? freeBytes - reserve : 0;
    }
    available = available > fixedBytes ? available - fixedBytes : 0;
    const std::size_t scratchPerPatch =
      PatchApproximationScratchBytes(m_Geometry, m_Shape.overlap, static_cast<int>(m_MaxVectors));
    // cuSOLVER's XsyevBatched failed (CUSOLVER_STATUS_INTERNAL_ERROR, H100, CUDA 13.0) on 65,536 matrices of 65 x 65,
    // whose float64 data passes 2^31 bytes: its batches stay under 2^30 bytes of matrices.
    std::size_t batchCap = m_Options.maxPatchesPerBatch;
    if (m_UseCusolver)
    {
      const std::size_t limit =
        std::max<std::size_t>(1, (std::size_t{ 1 } << 30) / (static_cast<std::size_t>(m_N * m_N) * sizeof(double)));
      batchCap = batchCap > 0 ? std::min(batchCap, limit) : limit;
    }
    m_Plan = PlanLocalDenoise(
      m_Shape, available, batchCap, [this](std::int64_t b) { return SolverBytes(b); }, scratchPerPatch);
    if (m_Plan.batch == 0)
    {
      throw Error(ErrorCode::OutOfMemory,
                  "svdlr: not even one plane of the series and one patch fit in the " + std::to_string(available >> 20) +
                    " MiB of device memory available to the local denoiser");
    }
    if (m_Trace != nullptr)
    {
      m_Trace->slabs = m_Plan.slabs.size();
      m_Trace->batchSize = static_cast<std::size_t>(m_Plan.batch);
      m_Trace->centrePlanesPerSlab = static_cast<std::size_t>(m_Plan.centrePlanes);
    }

    // Device buffers, kept when the cached ones are large enough.
    const std::size_t slotBytes = m_Plan.slabBytes / 2;
    for (auto & slot : m_Resources->slots)
    {
      SVDLR_CUDA_CHECK(slot.TryReserve(slotBytes));
    }
    SVDLR_CUDA_CHECK(m_Resources->batch.TryReserve(m_Plan.batchBytes));
    SVDLR_CUDA_CHECK(m_Resources->fixed.TryReserve(fixedBytes));
    const std::int64_t windowPlanes = std::min(m_Geometry.nz, m_Plan.centrePlanes + m_Geometry.ez - 1);
    for (int slot = 0; slot < 2; ++slot)
    {
      m_Slab[slot] = CarveSlab(m_Resources->slots[slot].Data(), windowPlanes, planeVoxels, m_Geometry.volumes);
    }
    CarveBatch();
    Carver fixed(m_Resources->fixed.Data());
    m_DeviceFlags = fixed.Take<unsigned long long>(4);
    m_DeviceMask = m_Options.mask != nullptr ? fixed.Take<std::uint8_t>(voxels) : nullptr;
    m_DeviceSigma = m_Options.noiseSigma != nullptr ? fixed.Take<float>(voxels) : nullptr;
    const cudaStream_t compute = m_Resources->compute.Get();
    const unsigned long long initial[2] = { ULLONG_MAX, 0ull };
    SVDLR_CUDA_CHECK(cudaMemcpyAsync(m_DeviceFlags, initial, sizeof(initial), cudaMemcpyHostToDevice, compute));
    if (m_DeviceMask != nullptr)
    {
      SVDLR_CUDA_CHECK(cudaMemcpyAsync(m_DeviceMask, m_Options.mask, voxels, cudaMemcpyHostToDevice, compute));
    }
    if (m_DeviceSigma != nullptr)
    {
      SVDLR_CUDA_CHECK(
        cudaMemcpyAsync(m_DeviceSigma, m_Options.noiseSigma, voxels * sizeof(float), cudaMemcpyHostToDevice, compute));
    }
    // Those copies are from pageable memory; finish them before the host buffers can go away.
    SVDLR_CUDA_CHECK(cudaStreamSynchronize(compute));

    // The staging ring, sized for the largest slab transfer.
    const std::size_t transferBytes =
      static_cast<std::size_t>(windowPlanes * planeVoxels * m_Geometry.volumes) * sizeof(float);
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

  void
  CarveBatch()
  {
    const std::size_t b = static_cast<std::size_t>(m_Plan.batch);
    const std::size_t n = static_cast<std::size_t>(m_N);
    const std::size_t k = static_cast<std::size_t>(m_MaxVectors);
    Carver            carve(m_Resources->batch.Data());
    m_Batch.gram = carve.Take<double>(b * n * n);
    m_Batch.vectors = carve.Take<double>(b * n * k);
    m_Batch.eigenvalues = carve.Take<double>(b * n);
    m_Batch.weights = carve.Take<double>(b * k);
    m_Batch.sigmas = carve.Take<double>(b);
    m_Batch.ranks = carve.Take<int>(b);
    m_Batch.info = carve.Take<int>(b);
    m_Batch.scratch = carve.Take<unsigned char>(
      b * PatchApproximationScratchBytes(m_Geometry, m_Shape.overlap, static_cast<int>(m_MaxVectors)));
    m_Batch.solverBytes = SolverBytes(m_Plan.batch);
    m_Batch.solver = carve.Take<unsigned char>(m_Batch.solverBytes);
    if (m_UseCusolver)
    {
      m_Resources->cusolverHostWorkspace.resize(
        QueryEigenWorkspace(m_Resources->cusolver.Get(), m_Resources->cusolverParams.Get(), m_N, m_Plan.batch)
          .hostBytes);
    }
  }

  SlabWindow
  Window(const SlabExtent & e) const
  {
    return { e.windowFirst, e.windowLast - e.windowFirst };
  }

  /** Host rows of a view for planes [first, first + planes) in `layout` order, for element-wise packing. */
  template <typename TBody>
  void
  ForEachRow(PackedLayout layout, std::int64_t first, std::int64_t planes, TBody && body)
  {
    const std::int64_t ny = m_Geometry.ny;
    const std::int64_t nv = m_Geometry.volumes;
    if (layout == PackedLayout::VolumesOuter)
    {
      m_ParallelFor(static_cast<std::size_t>(nv * planes), [&](std::size_t unit) {
        const std::int64_t t = static_cast<std::int64_t>(unit) / planes;
        const std::int64_t z = static_cast<std::int64_t>(unit) % planes;
        for (std::int64_t y = 0; y < ny; ++y)
        {
          body(t, first + z, y, ((t * planes + z) * ny + y) * m_Geometry.nx);
        }
      });
    }
    else
    {
      m_ParallelFor(static_cast<std::size_t>(planes), [&](std::size_t z) {
        for (std::int64_t y = 0; y < ny; ++y)
        {
          body(-1, first + static_cast<std::int64_t>(z), y, ((static_cast<std::int64_t>(z) * ny + y) * m_Geometry.nx) * nv);
        }
      });
    }
  }

  void
  Upload(std::size_t s)
  {
    TraceSpan          span(m_Trace ? &m_Trace->upload : nullptr);
    const SlabExtent & e = m_Plan.slabs[s];
    const int          slot = static_cast<int>(s % 2);
    const std::int64_t planes = e.windowLast - e.windowFirst;
    const std::int64_t planeVoxels = PlaneVoxels();
    const std::int64_t nv = m_Geometry.volumes;
    const std::size_t  elements = static_cast<std::size_t>(planes * planeVoxels * nv);
    const cudaStream_t stream = m_Resources->upload.Get();
    StagingRing &      ring = *m_Resources->ring;
    const auto &       st = m_Input.strides;

    if (m_InLayout.direct)
    {
      const auto * base = reinterpret_cast<const unsigned char *>(m_Input.data + e.windowFirst * st[2]);
      HostMatrices<const unsigned char> source;
      source.data = base;
      if (m_InLayout.packed == PackedLayout::VolumesOuter)
      {
        source.count = static_cast<std::size_t>(nv);
        source.matrixBytes = static_cast<std::size_t>(planes * planeVoxels) * sizeof(float);
        source.strideBytes = static_cast<std::size_t>(st[3]) * sizeof(float);
      }
      else
      {
        source.count = 1;
        source.matrixBytes = elements * sizeof(float);
        source.strideBytes = source.matrixBytes;
      }
      ring.Upload(source, m_Slab[slot].packedIn, stream, m_ParallelFor);
    }
    else
    {
      // Any other strides: gather into a packed host copy first.
      m_HostScratch.resize(elements);
      float * packed = m_HostScratch.data();
      ForEachRow(m_InLayout.packed, e.windowFirst, planes, [&](std::int64_t t, std::int64_t z, std::int64_t y, std::int64_t at) {
        const float * row = m_Input.data + z * st[2] + y * st[1];
        for (std::int64_t x = 0; x < m_Geometry.nx; ++x)
        {
          if (t >= 0)
          {
            packed[at + x] = row[x * st[0] + t * st[3]];
          }
          else
          {
            for (std::int64_t v = 0; v < nv; ++v)
            {
              packed[at + x * nv + v] = row[x * st[0] + v * st[3]];
            }
          }
        }
      });
      HostMatrices<const unsigned char> source{ reinterpret_cast<const unsigned char *>(packed), 1,
                                                elements * sizeof(float), elements * sizeof(float) };
      ring.Upload(source, m_Slab[slot].packedIn, stream, m_ParallelFor);
    }

    const std::int64_t firstCentre = m_PlaneCentreStart[e.centreFirst];
    const std::int64_t centres = m_PlaneCentreStart[e.centreLast] - firstCentre;
    if (centres > 0)
    {
      const std::size_t                 bytes = static_cast<std::size_t>(centres) * sizeof(std::int64_t);
      HostMatrices<const unsigned char> list{ reinterpret_cast<const unsigned char *>(m_Centres.data() + firstCentre),
                                              1, bytes, bytes };
      ring.Upload(list, m_Slab[slot].centres, stream, m_ParallelFor);
    }
    SVDLR_CUDA_CHECK(cudaEventRecord(m_Resources->uploaded[slot].Get(), stream));
  }

  void
  Enqueue(std::size_t s)
  {
    TraceSpan          span(m_Trace ? &m_Trace->enqueue : nullptr);
    const SlabExtent & e = m_Plan.slabs[s];
    const int          slot = static_cast<int>(s % 2);
    const SlabWindow   window = Window(e);
    const cudaStream_t compute = m_Resources->compute.Get();
    const std::int64_t planeVoxels = PlaneVoxels();
    const std::int64_t nv = m_Geometry.volumes;
    SlabBuffers &      b = m_Slab[slot];

    if (m_Trace != nullptr && s == 0)
    {
      m_Clock.Mark(StageClock::Unpack, compute); // the origin
    }
    SVDLR_CUDA_CHECK(cudaStreamWaitEvent(compute, m_Resources->uploaded[slot].Get(), 0));
    LaunchUnpackSlab(b.packedIn, m_InLayout.packed, b.slab, m_Geometry, window, m_DeviceFlags, compute);

    // The sums: the previous slab's unfinished planes carried to the front, zeros after them.
    std::int64_t carried = 0;
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
                                         voxels * static_cast<std::size_t>(nv) * sizeof(double),
                                         cudaMemcpyDeviceToDevice, compute));
        SVDLR_CUDA_CHECK(cudaMemcpyAsync(
          b.sums.counts, from.sums.counts + offset, voxels * sizeof(unsigned), cudaMemcpyDeviceToDevice, compute));
        SVDLR_CUDA_CHECK(cudaMemcpyAsync(
          b.sums.sigma, from.sums.sigma + offset, voxels * sizeof(double), cudaMemcpyDeviceToDevice, compute));
        SVDLR_CUDA_CHECK(cudaMemcpyAsync(
          b.sums.rank, from.sums.rank + offset, voxels * sizeof(double), cudaMemcpyDeviceToDevice, compute));
      }
    }
    {
      const std::size_t done = static_cast<std::size_t>(carried * planeVoxels);
      const std::size_t rest = static_cast<std::size_t>((window.planes - carried) * planeVoxels);
      SVDLR_CUDA_CHECK(cudaMemsetAsync(b.sums.values + done * static_cast<std::size_t>(nv), 0,
                                       rest * static_cast<std::size_t>(nv) * sizeof(double), compute));
      SVDLR_CUDA_CHECK(cudaMemsetAsync(b.sums.counts + done, 0, rest * sizeof(unsigned), compute));
      SVDLR_CUDA_CHECK(cudaMemsetAsync(b.sums.sigma + done, 0, rest * sizeof(double), compute));
      SVDLR_CUDA_CHECK(cudaMemsetAsync(b.sums.rank + done, 0, rest * sizeof(double), compute));
    }

    MarkStage(StageClock::Unpack);
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

    LaunchFinaliseSlab(b.slab, b.sums, m_Geometry, window, e.outFirst, e.outLast - e.outFirst, m_DeviceMask,
                       m_OutLayout.packed, b.packedOut, m_Maps.noiseSigma != nullptr ? b.sigmaMap : nullptr,
                       m_Maps.rank != nullptr ? b.rankMap : nullptr, compute);
    MarkStage(StageClock::Finalise);
    SVDLR_CUDA_CHECK(cudaMemcpyAsync(m_Resources->hostFlags.Data() + 2 * slot, m_DeviceFlags,
                                     2 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, compute));
    SVDLR_CUDA_CHECK(cudaEventRecord(m_Resources->computed[slot].Get(), compute));
  }

  void
  EnqueueBatch(const PatchBatch & batch, const SlabWindow & window, const SlabBuffers & slab)
  {
    const cudaStream_t compute = m_Resources->compute.Get();
    const int          maxVectors = static_cast<int>(m_MaxVectors);
    LaunchPatchGram(slab.slab, m_Geometry, window, batch, m_Batch.gram, compute);
    MarkStage(StageClock::Gram);
    BasisView basis;
    if (m_UseCusolver)
    {
      SolveSymmetricEigenBatched(m_Resources->cusolver.Get(),
                                 m_Resources->cusolverParams.Get(),
                                 m_Batch.gram,
                                 m_Batch.eigenvalues,
                                 m_Batch.info,
                                 m_N,
                                 batch.count,
                                 m_Batch.solver,
                                 m_Batch.solverBytes,
                                 m_Resources->cusolverHostWorkspace.data(),
                                 m_Resources->cusolverHostWorkspace.size());
      MarkStage(StageClock::Eigenvalues);
      LaunchChoosePatchRanks(m_Batch.eigenvalues, m_DeviceSigma, batch, m_Geometry, m_Rule, maxVectors, m_Batch.info,
                             m_DeviceFlags + 1, m_Batch.ranks, m_Batch.sigmas, m_Batch.weights, compute);
      MarkStage(StageClock::Ranks);
      basis = { m_Batch.gram, m_N * m_N, true };
    }
    else
    {
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
      arguments.tuning = m_Tuning.eigen;
      SmallEigenSolver::RunTridiagonalization(arguments, compute);
      MarkStage(StageClock::Tridiagonal);
      SmallEigenSolver::RunTridiagonalEigenvalues(arguments, compute);
      MarkStage(StageClock::Eigenvalues);
      LaunchChoosePatchRanks(m_Batch.eigenvalues, m_DeviceSigma, batch, m_Geometry, m_Rule, maxVectors, m_Batch.info,
                             m_DeviceFlags + 1, m_Batch.ranks, m_Batch.sigmas, m_Batch.weights, compute);
      MarkStage(StageClock::Ranks);
      SmallEigenSolver::RunEigenvectors(arguments, compute);
      MarkStage(StageClock::Eigenvectors);
      basis = { m_Batch.vectors, m_N * m_MaxVectors, false };
    }
    LaunchPatchApproximation(slab.slab, m_Geometry, window, batch, basis, m_Batch.ranks, m_Batch.sigmas,
                             m_Batch.weights, maxVectors, m_Shape.overlap, m_Batch.scratch, slab.sums, compute);
    MarkStage(StageClock::Approximation);
  }

  void
  MarkStage(StageClock::Stage stage)
  {
    if (m_Trace != nullptr)
    {
      m_Clock.Mark(stage, m_Resources->compute.Get());
    }
  }

  void
  Retire(std::size_t s)
  {
    TraceSpan          span(m_Trace ? &m_Trace->download : nullptr);
    const SlabExtent & e = m_Plan.slabs[s];
    const int          slot = static_cast<int>(s % 2);
    SVDLR_CUDA_CHECK(cudaEventSynchronize(m_Resources->computed[slot].Get()));
    const unsigned long long * flags = m_Resources->hostFlags.Data() + 2 * slot;
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

    const std::int64_t planes = e.outLast - e.outFirst;
    if (planes > 0)
    {
      const cudaStream_t stream = m_Resources->download.Get();
      SVDLR_CUDA_CHECK(cudaStreamWaitEvent(stream, m_Resources->computed[slot].Get(), 0));
      DownloadOutput(e.outFirst, planes, m_Slab[slot], stream);
      const std::size_t voxels = static_cast<std::size_t>(planes * PlaneVoxels());
      const std::size_t offset = static_cast<std::size_t>(e.outFirst * PlaneVoxels());
      if (m_Maps.noiseSigma != nullptr)
      {
        HostMatrices<unsigned char> target{ reinterpret_cast<unsigned char *>(m_Maps.noiseSigma + offset), 1,
                                            voxels * sizeof(float), voxels * sizeof(float) };
        m_Resources->ring->Download(m_Slab[slot].sigmaMap, target, stream, m_ParallelFor);
      }
      if (m_Maps.rank != nullptr)
      {
        HostMatrices<unsigned char> target{ reinterpret_cast<unsigned char *>(m_Maps.rank + offset), 1,
                                            voxels * sizeof(std::uint16_t), voxels * sizeof(std::uint16_t) };
        m_Resources->ring->Download(m_Slab[slot].rankMap, target, stream, m_ParallelFor);
      }
    }
    m_Done += static_cast<std::size_t>(m_PlaneCentreStart[e.centreLast] - m_PlaneCentreStart[e.centreFirst]);
    ReportProgress(m_Options.progress, m_Done, m_TotalPatches, "patches");
  }

  void
  DownloadOutput(std::int64_t first, std::int64_t planes, const SlabBuffers & b, cudaStream_t stream)
  {
    const std::int64_t planeVoxels = PlaneVoxels();
    const std::int64_t nv = m_Geometry.volumes;
    const std::size_t  elements = static_cast<std::size_t>(planes * planeVoxels * nv);
    const auto &       so = m_Output.strides;
    StagingRing &      ring = *m_Resources->ring;
    if (m_OutLayout.direct)
    {
      HostMatrices<unsigned char> target;
      target.data = reinterpret_cast<unsigned char *>(m_Output.data + first * so[2]);
      if (m_OutLayout.packed == PackedLayout::VolumesOuter)
      {
        target.count = static_cast<std::size_t>(nv);
        target.matrixBytes = static_cast<std::size_t>(planes * planeVoxels) * sizeof(float);
        target.strideBytes = static_cast<std::size_t>(so[3]) * sizeof(float);
      }
      else
      {
        target.count = 1;
        target.matrixBytes = elements * sizeof(float);
        target.strideBytes = target.matrixBytes;
      }
      ring.Download(b.packedOut, target, stream, m_ParallelFor);
      return;
    }
    m_HostScratch.resize(elements);
    float *                     packed = m_HostScratch.data();
    HostMatrices<unsigned char> target{ reinterpret_cast<unsigned char *>(packed), 1, elements * sizeof(float),
                                        elements * sizeof(float) };
    ring.Download(b.packedOut, target, stream, m_ParallelFor);
    ForEachRow(m_OutLayout.packed, first, planes, [&](std::int64_t t, std::int64_t z, std::int64_t y, std::int64_t at) {
      float * row = m_Output.data + z * so[2] + y * so[1];
      for (std::int64_t x = 0; x < m_Geometry.nx; ++x)
      {
        if (t >= 0)
        {
          row[x * so[0] + t * so[3]] = packed[at + x];
        }
        else
        {
          for (std::int64_t v = 0; v < nv; ++v)
          {
            row[x * so[0] + v * so[3]] = packed[at + x * nv + v];
          }
        }
      }
    });
  }

  const SeriesView<const float> & m_Input;
  const SeriesView<float> &       m_Output;
  const LocalDenoiseMaps &        m_Maps;
  const LocalDenoiseOptions &     m_Options;
  const LocalDenoiseCudaTuning    m_Tuning;
  LocalDenoiseCudaTrace *         m_Trace;
  const HostLayout                m_InLayout;
  const HostLayout                m_OutLayout;
  const unsigned                  m_Workers;
  ParallelFor                     m_ParallelFor;

  DenoiseGeometry   m_Geometry;
  LocalDenoiseShape m_Shape;
  PatchRankRule     m_Rule;
  std::int64_t      m_N{ 0 };
  std::int64_t      m_MaxVectors{ 0 };
  bool              m_UseCusolver{ false };

  std::vector<std::int64_t> m_Centres;          // linear voxel indices, by plane
  std::vector<std::int64_t> m_PlaneCentreStart; // (nz + 1): where plane z's centres start in m_Centres
  std::size_t               m_TotalPatches{ 0 };
  std::size_t               m_Done{ 0 };
  LocalDenoisePlan          m_Plan;

  std::unique_ptr<LocalDenoiseResources> m_Resources;
  SlabBuffers                            m_Slab[2];
  BatchBuffers                           m_Batch;
  unsigned long long *                   m_DeviceFlags{ nullptr };
  std::uint8_t *                         m_DeviceMask{ nullptr };
  float *                                m_DeviceSigma{ nullptr };
  std::vector<float>                     m_HostScratch;
  StageClock                             m_Clock; // trace only
};

} // namespace

namespace
{

/** Runs the denoiser, and once more with cuSOLVER's eigen-solver if ours gave up on a patch. */
void
RunWithFallback(const SeriesView<const float> & input, const SeriesView<float> & output, const LocalDenoiseMaps & maps,
                const LocalDenoiseOptions & options, const std::array<std::size_t, 3> & patch,
                LocalDenoiseReport & report, const LocalDenoiseCudaTuning & tuning, LocalDenoiseCudaTrace * trace)
{
  try
  {
    CudaLocalDenoiser denoiser(input, output, maps, options, patch, tuning, trace);
    report.patches = denoiser.Run();
    return;
  }
  catch (const OwnSolverFailed &)
  {
    // Our QL iteration did not converge on some patch (LAPACK's dsteqr has the same kind of limit). The input is
    // untouched (RunLocalDenoiseCudaTuned keeps in-place output aside), so the series is redone with cuSOLVER.
    if (tuning.cusolver)
    {
      throw Error(ErrorCode::NumericalFailure, "svdlr: cuSOLVER's eigen-solver did not converge on a patch");
    }
  }
  LocalDenoiseCudaTuning reference = tuning;
  reference.cusolver = true;
  CudaLocalDenoiser denoiser(input, output, maps, options, patch, reference, trace);
  report.patches = denoiser.Run();
}

} // namespace

void
RunLocalDenoiseCudaTuned(const SeriesView<const float> & input, const SeriesView<float> & output,
                         const LocalDenoiseMaps & maps, const LocalDenoiseOptions & options,
                         const std::array<std::size_t, 3> & patch, LocalDenoiseReport & report,
                         const LocalDenoiseCudaTuning & tuning, LocalDenoiseCudaTrace * trace)
{
  const bool inPlace = static_cast<const void *>(input.data) == static_cast<const void *>(output.data);
  if (!inPlace)
  {
    RunWithFallback(input, output, maps, options, patch, report, tuning, trace);
    return;
  }
  // In place, the output is held aside and written only once the whole run has succeeded: an error part way
  // (after which Auto falls back to the CPU, which reads the input) must leave the input as it was.
  const std::size_t voxels = input.VoxelCount();
  std::vector<float> held(voxels * input.volumes);
  const auto         nx = static_cast<std::ptrdiff_t>(input.size[0]);
  const auto         ny = static_cast<std::ptrdiff_t>(input.size[1]);
  const SeriesView<float> aside{ held.data(), input.size, input.volumes,
                                 { 1, nx, nx * ny, static_cast<std::ptrdiff_t>(voxels) } };
  RunWithFallback(input, aside, maps, options, patch, report, tuning, trace);
  const auto & so = output.strides;
  const auto   copyPlane = [&](std::size_t unit) {
    const std::size_t t = unit / input.size[2];
    const std::size_t z = unit % input.size[2];
    const float *     from = held.data() + t * voxels + z * input.size[0] * input.size[1];
    for (std::size_t y = 0; y < input.size[1]; ++y)
    {
      float * row = output.data + static_cast<std::ptrdiff_t>(t) * so[3] + static_cast<std::ptrdiff_t>(z) * so[2] +
                    static_cast<std::ptrdiff_t>(y) * so[1];
      for (std::size_t x = 0; x < input.size[0]; ++x)
      {
        row[static_cast<std::ptrdiff_t>(x) * so[0]] = *from++;
      }
    }
  };
  const std::size_t units = input.volumes * input.size[2];
  if (options.parallelFor)
  {
    options.parallelFor(units, copyPlane);
  }
  else
  {
    StdThreadParallelFor(WorkerCount(options.threads), units, copyPlane);
  }
}

void
RunLocalDenoiseCuda(const SeriesView<const float> & input, const SeriesView<float> & output,
                    const LocalDenoiseMaps & maps, const LocalDenoiseOptions & options,
                    const std::array<std::size_t, 3> & patch, LocalDenoiseReport & report)
{
  RunLocalDenoiseCudaTuned(input, output, maps, options, patch, report, LocalDenoiseCudaTuning{}, nullptr);
}

void
ReleaseLocalDenoiseResources() noexcept
{
  std::vector<std::unique_ptr<LocalDenoiseResources>> taken;
  {
    const std::lock_guard<std::mutex> lock(CacheMutex());
    taken = std::move(Cache());
    Cache().clear();
  }
  for (auto & resources : taken)
  {
    FreeOnItsDevice(std::move(resources));
  }
}

} // namespace detail
} // namespace svdlr
