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
// The CUDA backend's pipeline: batches of matrices round-robin over two streams, each with its own
// handles and buffers, so that while one batch is in the eigen-solver the next one is copied in and the
// previous one is reconstructed and copied out.
//
// Per batch (T = float or double, n = min(rows, cols)):
//   Launch  (stream s): host -> device through the staging ring; then, from a solver thread: T -> float64
//                       with a non-finite flag per matrix; Gram matrices (cuBLAS, float64); then
//                       exact solver:    eigen-decomposition of the n x n Gram matrices;
//                       subspace solver: subspace iteration and the w x w Rayleigh-Ritz matrices
//                                        (svdlrSubspaceIteration.h), and their eigen-decomposition,
//                                        then the a-posteriori check (svdlrSubspaceIteration.h)
//                       (cuSOLVER XsyevBatched, float64); eigenvalues, flags, redo flags and solver info ->
//                       pinned host memory.
//   Finish  (host, then stream s): check flags and info; singular values sqrt(max(eigenvalue, 0)) and
//                       per-matrix ranks (SelectRank); ranks -> device; leading eigenvectors (or Ritz
//                       vectors); the factor on the larger side (cuBLAS, float64); R = P Q^T by our tiled
//                       kernel into the T buffer; the matrices that failed the check are solved again with
//                       the exact solver first (ExactRedo), and their reconstructions overwrite the
//                       subspace solver's in the T buffer.
//   Retire  (host): device -> caller's buffer through the staging ring; progress.
// The host loop runs Retire(b - 2), Launch(b), Finish(b - 1): batches b and b - 2 share a slot, and
// Retire(b - 2) has drained it before Launch(b) reuses it.
//
// When the caller's matrices are already on the device (ReconstructOnDevice), only the two transfers
// differ (CopyIn, CopyOut): a device-to-device copy on the slot's stream replaces the staging ring, and
// every slot stream first waits for what the caller had queued on its own stream. Where the caller's memory is,
// and the copies that reach it directly, are in svdlrStagingRing.h; the slots and the ring, kept per device
// between runs, in svdlrCudaResourceCache.h.
#include "shared/svdlrBackends.h"
#include "shared/svdlrParallel.h"

#include "svdlrCudaCheck.h"
#include "svdlrCudaDevice.h"
#include "svdlrCudaPipeline.h"
#include "svdlrCudaResourceCache.h"
#include "svdlrEigenSolver.h"
#include "svdlrFactorKernels.cuh"
#include "svdlrLowRankProduct.h"
#include "svdlrStagingRing.h"
#include "svdlrSubspaceIteration.h"

#include <algorithm>
#include <array>
#include <climits>
#include <future>
#include <memory>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

namespace svdlr
{
namespace detail
{
namespace
{

// The status arrays that come back to the host after the solve: info | non-finite flags | redo flags.
constexpr std::size_t kCopiedStatusArrays = 3;

template <typename T>
std::size_t
SpanBytes(const MatrixBatch<T> & batch)
{
  return ((batch.count - 1) * batch.matrixStride + batch.MatrixSize()) * sizeof(T);
}

template <typename T>
class CudaPipeline
{
public:
  CudaPipeline(const MatrixBatch<const T> & input, const MatrixBatch<T> & output, const Options & options,
               Report & report, CudaPipelineTrace * trace, const CudaPipelineTuning & tuning,
               const CallerMemory & memory)
    : m_Input(input)
    , m_Output(output)
    , m_Options(options)
    , m_Report(report)
    , m_Trace(trace)
    , m_Memory(memory)
  {
    m_Geometry.rows = static_cast<std::int64_t>(input.rows);
    m_Geometry.cols = static_cast<std::int64_t>(input.cols);
    m_Geometry.elementBytes = sizeof(T);
    m_Geometry.convertsToDouble = !std::is_same_v<T, double>;
    m_Subspace = PlanSubspace(options, m_Geometry.rows, m_Geometry.cols, input.count, std::is_same_v<T, double>);
    m_Geometry.subspaceWidth = m_Subspace.width;
    m_CheckedRank = std::min<std::int64_t>(static_cast<std::int64_t>(options.policy.rank), m_Geometry.Small());
    m_TuningForceRedo = tuning.forceRedo;
    report.solver = m_Subspace.Used() ? Solver::Subspace : Solver::Exact;

    const unsigned workers = WorkerCount(options.threads);
    m_ParallelFor = ParallelForOrThreads(options.parallelFor, workers);

    // Streams, handles and buffers of an earlier run on this device, when there was one. Slot 0's handle
    // answers the workspace queries that the plan needs.
    m_Resources = CudaPipelineResourceCache<T>::Shared().Take(options.deviceId);
    if (m_Resources->slots.empty())
    {
      m_Resources->AddSlot();
    }
    std::size_t freeBytes = 0;
    std::size_t totalBytes = 0;
    SVDLR_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
    freeBytes += m_Resources->DeviceBytes(); // ours to reuse or free
    const std::size_t available = UsableDeviceBytes(freeBytes);
    m_Plan = PlanBatches(m_Geometry, input.count, options.maxMatricesPerBatch, available, [this](std::size_t batch) {
      return m_Resources->EigenWorkspace(m_Geometry.EigenSide(), batch).deviceBytes;
    });
    m_Resources->AllocateSlots(m_Geometry, input.count, freeBytes, options.deviceId, m_Plan);
    if (m_Trace != nullptr)
    {
      m_Trace->batches = m_Plan.batches;
      m_Trace->batchSize = m_Plan.batchSize;
    }
    if (m_Memory.onDevice)
    {
      WaitForCallerStream();
      return;
    }
    if (m_Memory.inputPinned && m_Memory.outputPinned)
    {
      return; // the copy engines reach the caller's memory directly: no staging
    }

    std::size_t lanes = 1;
    std::size_t chunkBytes = 1;
    StagingRing::Size(m_Plan.batchSize * MatrixBytes(), workers, lanes, chunkBytes);
    if (m_Resources->ring == nullptr || m_Resources->ringLanes != lanes || m_Resources->ringChunkBytes != chunkBytes)
    {
      m_Resources->ring.reset();
      m_Resources->ring = std::make_unique<StagingRing>(options.deviceId, lanes, chunkBytes);
      m_Resources->ringLanes = lanes;
      m_Resources->ringChunkBytes = chunkBytes;
    }
  }

  /** Waits for the solver threads, then for every stream, before the buffers go: on an exception, work may
   * still be in flight. After a successful run the resources go back to the cache for the next run. */
  ~CudaPipeline()
  {
    for (const auto & slot : m_Resources->slots)
    {
      if (slot->solved.valid())
      {
        slot->solved.wait();
      }
    }
    for (const auto & slot : m_Resources->slots)
    {
      if (slot->stream.Get() != nullptr)
      {
        (void)cudaStreamSynchronize(slot->stream.Get());
      }
    }
    if (m_Succeeded)
    {
      try
      {
        CudaPipelineResourceCache<T>::Shared().Put(std::move(m_Resources));
      }
      catch (...)
      {
        // Not cached (out of host memory): the resources are freed instead.
      }
    }
  }

  CudaPipeline(const CudaPipeline &) = delete;
  CudaPipeline &
  operator=(const CudaPipeline &) = delete;

  void
  Run()
  {
    const std::size_t batches = m_Plan.batches;
    for (std::size_t step = 0; step < batches + 2; ++step)
    {
      if (step >= 2)
      {
        Retire(step - 2);
      }
      if (step < batches)
      {
        Launch(step);
      }
      if (step >= 1 && step - 1 < batches)
      {
        Finish(step - 1);
      }
    }
    m_Succeeded = true;
  }

private:
  using Slot = CudaStreamSlot<T>;

  std::size_t
  MatrixBytes() const
  {
    return m_Geometry.Elements() * sizeof(T);
  }

  Slot &
  SlotOf(std::size_t batch)
  {
    return *m_Resources->slots[batch % m_Plan.slots]; // a cached set may hold more slots than this run uses
  }

  /** Orders every slot stream after the work the caller has queued on its stream (device input only). */
  void
  WaitForCallerStream()
  {
    const EventOwner callerQueued = CreateEvent();
    SVDLR_CUDA_CHECK(cudaEventRecord(callerQueued.Get(), m_Memory.stream));
    for (const auto & slot : m_Resources->slots)
    {
      SVDLR_CUDA_CHECK(cudaStreamWaitEvent(slot->stream.Get(), callerQueued.Get(), 0));
    }
  }

  /** The caller's matrices of the batch on `slot` -> slot.io (packed), enqueued on the slot's stream. */
  void
  CopyIn(Slot & slot)
  {
    const unsigned char * source =
      reinterpret_cast<const unsigned char *>(m_Input.data + slot.first * m_Input.matrixStride);
    const std::size_t sourceStride = m_Input.matrixStride * sizeof(T);
    if (m_Memory.onDevice || m_Memory.inputPinned)
    {
      CopyMatricesDirect(slot.io.Data(), MatrixBytes(), source, sourceStride, MatrixBytes(), slot.count,
                         slot.stream.Get());
      return;
    }
    const HostMatrices<const unsigned char> host{ source, slot.count, MatrixBytes(), sourceStride };
    m_Resources->ring->Upload(host, slot.io.Data(), slot.stream.Get(), m_ParallelFor);
  }

  /** slot.io -> the caller's matrices of the batch on `slot`, after the work queued on the slot's stream;
   * returns once they are there. */
  void
  CopyOut(Slot & slot)
  {
    unsigned char *   target = reinterpret_cast<unsigned char *>(m_Output.data + slot.first * m_Output.matrixStride);
    const std::size_t targetStride = m_Output.matrixStride * sizeof(T);
    if (m_Memory.onDevice || m_Memory.outputPinned)
    {
      CopyMatricesDirect(target, targetStride, slot.io.Data(), MatrixBytes(), MatrixBytes(), slot.count,
                         slot.stream.Get());
      SVDLR_CUDA_CHECK(cudaStreamSynchronize(slot.stream.Get()));
      return;
    }
    const HostMatrices<unsigned char> host{ target, slot.count, MatrixBytes(), targetStride };
    m_Resources->ring->Download(slot.io.Data(), host, slot.stream.Get(), m_ParallelFor);
  }

  /** Copy-in of batch `batch` on this thread, then its solve on a solver thread (EnqueueSolve). */
  void
  Launch(std::size_t batch)
  {
    Slot & slot = SlotOf(batch);
    slot.first = batch * m_Plan.batchSize;
    slot.count = std::min(m_Plan.batchSize, m_Input.count - slot.first);
    CopyIn(slot);

    // cusolverDnXsyevBatched blocks the calling thread for much of the solve (measured on the H100: for
    // 16 matrices of 1024^2 the call returns only when the solve is done). Enqueueing it from a thread of
    // its own keeps this thread free to copy the other batches in and out meanwhile.
    try
    {
      slot.solved = std::async(std::launch::async, [this, &slot] {
        const ScopedDevice device(m_Options.deviceId);
        EnqueueSolve(slot);
      });
    }
    catch (const std::system_error &)
    {
      EnqueueSolve(slot); // no thread to be had: enqueue from here, without the overlap
      slot.solved = {};
    }
  }

  SubspaceWorkspace
  SubspaceBuffers(Slot & slot) const
  {
    return SubspaceWorkspace::Within(slot.subspace.Data(), m_Geometry.Small(), m_Subspace.width, slot.count);
  }

  /** Conversion, Gram matrices, subspace iteration (subspace solver) and eigen-solve of the batch on `slot`,
   * and the copies of their results to pinned memory; runs on a solver thread, and uses only the slot's own
   * stream and handles. */
  void
  EnqueueSolve(Slot & slot)
  {
    const cudaStream_t stream = slot.stream.Get();
    const std::int64_t n = m_Geometry.EigenSide(); // the side of the matrices the eigen-solver gets

    const std::size_t planned = slot.statusStride;
    SVDLR_CUDA_CHECK(cudaMemsetAsync(slot.status.Data(), 0, kCopiedStatusArrays * planned * sizeof(int), stream));
    LaunchConvertAndFlagNonFinite<T>(
      slot.io.Data(), slot.Float64Input(), slot.Device(Slot::Flags), slot.count, m_Geometry.Elements(), stream);
    ComputeGramBatched(slot.cublas.Get(),
                       slot.Float64Input(),
                       slot.gram.Data(),
                       m_Geometry.rows,
                       m_Geometry.cols,
                       static_cast<std::int64_t>(slot.count));
    double * eigenMatrices = slot.gram.Data();
    if (m_Subspace.Used())
    {
      const SubspaceWorkspace buffers = SubspaceBuffers(slot);
      slot.ritzBasis = IterateSubspace(slot.cublas.Get(),
                                       stream,
                                       slot.gram.Data(),
                                       buffers,
                                       m_Geometry.Small(),
                                       m_Subspace.width,
                                       m_Subspace.iterations,
                                       static_cast<std::int64_t>(slot.count));
      eigenMatrices = buffers.small;
    }

    const EigenWorkspaceSize workspace =
      QueryEigenWorkspace(slot.cusolver.Get(), slot.cusolverParams.Get(), n, static_cast<std::int64_t>(slot.count));
    if (workspace.deviceBytes > slot.scratch.Size() || workspace.hostBytes > slot.hostWorkspace.size())
    {
      throw Error(ErrorCode::DeviceFailure,
                  "svdlr CUDA backend: cusolverDnXsyevBatched asks for more workspace for a batch of " +
                    std::to_string(slot.count) + " than for " + std::to_string(m_Plan.batchSize));
    }
    SolveSymmetricEigenBatched(slot.cusolver.Get(),
                               slot.cusolverParams.Get(),
                               eigenMatrices,
                               slot.eigenvalues.Data(),
                               slot.Device(Slot::Info),
                               n,
                               static_cast<std::int64_t>(slot.count),
                               slot.scratch.Data(),
                               workspace.deviceBytes,
                               slot.hostWorkspace.empty() ? nullptr : slot.hostWorkspace.data(),
                               workspace.hostBytes);

    SVDLR_CUDA_CHECK(cudaMemcpyAsync(slot.hostEigenvalues.Data(),
                                     slot.eigenvalues.Data(),
                                     slot.count * static_cast<std::size_t>(n) * sizeof(double),
                                     cudaMemcpyDeviceToHost,
                                     stream));
    if (m_Subspace.Used())
    {
      const SubspaceWorkspace buffers = SubspaceBuffers(slot);
      CheckSubspaceBatched(slot.cublas.Get(),
                           stream,
                           slot.gram.Data(),
                           slot.ritzBasis,
                           slot.ritzBasis == buffers.basis ? buffers.image : buffers.basis,
                           buffers.small,
                           slot.eigenvalues.Data(),
                           buffers,
                           m_Geometry.Small(),
                           m_Subspace.width,
                           m_CheckedRank,
                           static_cast<std::int64_t>(slot.count),
                           slot.Device(Slot::Redo));
    }
    // info, flags and redo flags are adjacent: one copy brings them all.
    SVDLR_CUDA_CHECK(cudaMemcpyAsync(slot.Host(Slot::Info),
                                     slot.Device(Slot::Info),
                                     kCopiedStatusArrays * planned * sizeof(int),
                                     cudaMemcpyDeviceToHost,
                                     stream));
    SVDLR_CUDA_CHECK(cudaEventRecord(slot.eigenReady.Get(), stream));
  }

  /** Waits for the eigenvalues of `batch`, checks the batch, picks the ranks, and enqueues the
   * reconstruction. */
  void
  Finish(std::size_t batch)
  {
    Slot &             slot = SlotOf(batch);
    const cudaStream_t stream = slot.stream.Get();
    const std::size_t  n = static_cast<std::size_t>(m_Geometry.Small());
    const std::size_t  eigenSide = static_cast<std::size_t>(m_Geometry.EigenSide());
    if (slot.solved.valid())
    {
      slot.solved.get(); // rethrows what the solver thread threw
    }
    SVDLR_CUDA_CHECK(cudaEventSynchronize(slot.eigenReady.Get()));

    const std::size_t kmax = CollectBatchResults(slot.Host(Slot::Flags),
                                                 slot.Host(Slot::Info),
                                                 slot.hostEigenvalues.Data(),
                                                 slot.first,
                                                 slot.count,
                                                 eigenSide,
                                                 static_cast<std::size_t>(m_Geometry.rows),
                                                 static_cast<std::size_t>(m_Geometry.cols),
                                                 m_Options.policy,
                                                 m_Report,
                                                 slot.Host(Slot::Ranks));
    SVDLR_CUDA_CHECK(cudaMemcpyAsync(
      slot.Device(Slot::Ranks), slot.Host(Slot::Ranks), slot.count * sizeof(int), cudaMemcpyHostToDevice, stream));

    // Matrices that failed the subspace solver's check: solved again now, while the batch's float64 copy is
    // intact, and written over the batch's reconstruction after it.
    const std::unique_ptr<ExactRedo<T>> redo = m_Subspace.Used() ? RedoFailedChecks(slot) : nullptr;

    const bool         tall = m_Geometry.cols <= m_Geometry.rows;
    double *           smallSide = tall ? slot.FactorQ() : slot.FactorP();
    double *           largeSide = tall ? slot.FactorP() : slot.FactorQ();
    const std::int64_t count = static_cast<std::int64_t>(slot.count);
    const std::int64_t components = static_cast<std::int64_t>(kmax);
    if (m_Subspace.Used())
    {
      ComputeRitzVectors(slot.cublas.Get(),
                         stream,
                         slot.ritzBasis,
                         SubspaceBuffers(slot),
                         smallSide,
                         static_cast<std::int64_t>(n),
                         m_Subspace.width,
                         components,
                         count);
    }
    else
    {
      LaunchExtractLeadingEigenvectors(
        slot.gram.Data(), smallSide, static_cast<std::int64_t>(n), components, count, stream);
    }
    ComputeLargeSideFactor(slot.cublas.Get(),
                           slot.Float64Input(),
                           smallSide,
                           largeSide,
                           m_Geometry.rows,
                           m_Geometry.cols,
                           components,
                           count);

    LowRankProductArguments<T> product;
    product.rows = m_Geometry.rows;
    product.cols = m_Geometry.cols;
    product.count = count;
    product.components = components;
    product.p = slot.FactorP();
    product.q = slot.FactorQ();
    product.ranks = slot.Device(Slot::Ranks);
    product.output = slot.io.Data();
    std::string why;
    if (!CanImplementLowRankProduct(product, why))
    {
      throw Error(ErrorCode::InvalidArgument, "svdlr CUDA backend: " + why);
    }
    SVDLR_CUDA_CHECK(LaunchTiledLowRankProduct(product, stream));
    if (redo != nullptr)
    {
      redo->Scatter();
    }
  }

  /** The matrices of the batch on `slot` that failed the subspace solver's check, solved with the exact
   * solver (ExactRedo); null, with nothing done and no wait, when all passed. */
  std::unique_ptr<ExactRedo<T>>
  RedoFailedChecks(Slot & slot)
  {
    if (m_Trace != nullptr)
    {
      const std::int64_t  w = m_Subspace.width;
      std::vector<double> data(slot.count * static_cast<std::size_t>(w + 1));
      SVDLR_CUDA_CHECK(cudaMemcpy(data.data(),
                                  SubspaceBuffers(slot).CheckData(m_Geometry.Small(), w, slot.count),
                                  data.size() * sizeof(double),
                                  cudaMemcpyDeviceToHost));
      m_Trace->subspaceCheck.insert(m_Trace->subspaceCheck.end(), data.begin(), data.end());
      const double * ritz = slot.hostEigenvalues.Data();
      m_Trace->ritzValues.insert(m_Trace->ritzValues.end(), ritz, ritz + slot.count * static_cast<std::size_t>(w));
      m_Trace->checkWidth = static_cast<std::size_t>(w);
    }
    std::vector<std::size_t> failed;
    for (std::size_t i = 0; i < slot.count; ++i)
    {
      if (slot.Host(Slot::Redo)[i] != 0 || m_TuningForceRedo)
      {
        failed.push_back(i);
      }
    }
    if (failed.empty())
    {
      return nullptr;
    }
    ExactRedoArguments<T> redo;
    redo.cublas = slot.cublas.Get();
    redo.cusolver = slot.cusolver.Get();
    redo.cusolverParams = slot.cusolverParams.Get();
    redo.stream = slot.stream.Get();
    redo.gram = slot.gram.Data();
    redo.a = slot.Float64Input();
    redo.output = slot.io.Data();
    redo.rows = m_Geometry.rows;
    redo.cols = m_Geometry.cols;
    redo.first = slot.first;
    auto exact = std::make_unique<ExactRedo<T>>(redo);
    exact->Solve(failed, m_Options.policy, m_Report);
    return exact;
  }

  /** Copies the reconstruction of `batch` to the caller's buffer and reports progress. */
  void
  Retire(std::size_t batch)
  {
    Slot & slot = SlotOf(batch);
    CopyOut(slot);
    m_Done += slot.count;
    ReportProgress(m_Options.progress, m_Done, m_Input.count, "matrices");
  }

  const MatrixBatch<const T> & m_Input;
  const MatrixBatch<T> &       m_Output;
  const Options &              m_Options;
  Report &                     m_Report;
  CudaPipelineTrace *          m_Trace;
  CallerMemory                 m_Memory;

  BatchGeometry                      m_Geometry;
  SubspacePlan                       m_Subspace;
  std::int64_t                       m_CheckedRank{ 0 };       // k of the subspace solver's check
  bool                               m_TuningForceRedo{ false }; // tests: every matrix fails the check
  BatchPlan                          m_Plan;
  ParallelFor                        m_ParallelFor;
  std::unique_ptr<CudaPipelineResources<T>> m_Resources;
  bool                                      m_Succeeded{ false };
  std::size_t                        m_Done{ 0 };
};

template <typename T>
void
RunPipeline(const MatrixBatch<const T> & input, const MatrixBatch<T> & output, const Options & options,
            Report & report, CudaPipelineTrace * trace, const CudaPipelineTuning & tuning, const CallerMemory & memory)
{
  if (input.count == 0)
  {
    return;
  }
  if (input.rows > static_cast<std::size_t>(INT_MAX) || input.cols > static_cast<std::size_t>(INT_MAX))
  {
    throw Error(ErrorCode::InvalidArgument,
                "svdlr CUDA backend: matrix dimensions above 2^31 - 1 are not supported, got " +
                  MatrixShapeText(input.rows, input.cols));
  }
  const ScopedDevice device(options.deviceId);
  const CallerMemory where =
    LocateCallerMemory(input.data, SpanBytes(input), output.data, SpanBytes(output), options.deviceId, memory);
  CudaPipeline<T> pipeline(input, output, options, report, trace, tuning, where);
  pipeline.Run();
}

} // namespace

template <typename T>
void
RunCudaInstrumented(const MatrixBatch<const T> & input, const MatrixBatch<T> & output, const Options & options,
                    Report & report, CudaPipelineTrace * trace, const CudaPipelineTuning & tuning)
{
  RunPipeline(input, output, options, report, trace, tuning, CallerMemory{});
}

template <typename T>
void
RunCudaOnDevice(const MatrixBatch<const T> & input, const MatrixBatch<T> & output, const Options & options,
                Report & report, void * stream)
{
  const CallerMemory memory{ true, static_cast<cudaStream_t>(stream) };
  RunPipeline(input, output, options, report, nullptr, CudaPipelineTuning{}, memory);
}

template <typename T>
void
RunCuda(const MatrixBatch<const T> & input, const MatrixBatch<T> & output, const Options & options, Report & report)
{
  RunCudaInstrumented(input, output, options, report, nullptr, CudaPipelineTuning{});
}

template void
RunCudaInstrumented<float>(const MatrixBatch<const float> &, const MatrixBatch<float> &, const Options &, Report &,
                           CudaPipelineTrace *, const CudaPipelineTuning &);
template void
RunCudaInstrumented<double>(const MatrixBatch<const double> &, const MatrixBatch<double> &, const Options &, Report &,
                            CudaPipelineTrace *, const CudaPipelineTuning &);
SVDLR_INSTANTIATE_RUN_CUDA;

} // namespace detail
} // namespace svdlr
