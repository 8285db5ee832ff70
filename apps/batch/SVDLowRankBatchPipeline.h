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
#ifndef SVDLowRankBatchPipeline_h
#define SVDLowRankBatchPipeline_h

// Many volumes in one process, as a producer-consumer pipeline (docs/batch.md draws it):
//
//   readers (threads)  --queue-->  solvers (one per GPU, or one CPU solver)  --queue-->  writers (threads)
//   decode a file into a          svdlr::Reconstruct in place on the buffer,              compress and write
//   leased (pinned) buffer        on the worker's device                                   atomically, give the
//                                                                                           buffer back
//
// While a GPU works on one volume, readers decode the next ones and writers compress the previous ones. The
// buffers' pool (HostBufferPool) bounds the memory of everything in flight. Outputs that exist are complete
// (they only ever appear by an atomic rename), so a re-run skips them: a run that was stopped resumes. A
// volume that fails is reported and skipped; the others finish.

#include "SVDLowRankBatchInputs.h"
#include "SVDLowRankReconstructionResult.h"

#include "svdlr/Engine.h"

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace svdlr_batch
{

enum class VolumeStatus
{
  Done,    // reconstructed and written
  Skipped, // its output exists from an earlier run
  Failed   // could not be read, reconstructed or written (message says why); nothing written
};

const char *
ToString(VolumeStatus status);

/** One row of the run's table: the volume's reconstruction result (the single-volume path's, too), and what
 * became of it. Times are seconds of the thread that did the step. */
struct VolumeResult : svdlr_io::ReconstructionResult
{
  VolumeStatus status{ VolumeStatus::Failed };
  std::string  message;
};

struct BatchOptions
{
  svdlr::RankPolicy policy{};
  svdlr::Backend    backend{ svdlr::Backend::Auto };
  svdlr::Solver     solver{ svdlr::Solver::Auto };
  std::vector<int>  devices;              // CUDA devices, one solver each; empty: every visible device
  unsigned          readers{ 0 };         // 0: a quarter of the hardware threads, at least 1
  unsigned          writers{ 0 };         // 0: the hardware threads the readers leave, at least 1
  std::size_t       memoryBudget{ 0 };    // bytes of volumes in flight; 0: 1 GiB or 1/8 of the RAM if less
  bool              overwrite{ false };   // redo volumes whose output exists
  int               compressionLevel{ 0 }; // the writers' (gzip 1-9 for .nii.gz); 0: ITK's default
  unsigned          threads{ 0 };          // the CPU solver's threads (--nthreads); 0: every core
  /** Called once per volume as it finishes (any status), from the pipeline's threads, one call at a time. */
  std::function<void(const VolumeResult &, std::size_t finished, std::size_t total)> onVolume;
};

struct BatchSummary
{
  std::vector<VolumeResult> volumes; // in input order
  std::size_t               done{ 0 };
  std::size_t               skipped{ 0 };
  std::size_t               failed{ 0 };
  double                    wallSeconds{ 0 };
  svdlr::Backend            backend{ svdlr::Backend::CPU };
  std::vector<int>          devices; // the GPUs used; empty on the CPU
  unsigned                  readers{ 0 };
  unsigned                  writers{ 0 };
  bool                      pinned{ false };    // every buffer was pinned host memory
  std::size_t               peakBytes{ 0 };     // most buffer memory leased at once
  double                    solverBusy{ 0 };    // share of the wall time the solvers spent in the engine
  std::string               notes;              // e.g. why the CPU was used
};

/** Runs the pipeline over `inputs`, writing under `outputRoot` with names from OutputPathFor and MethodTag.
 * Never throws for one volume's failure; throws svdlr::Error for options the engine refuses before any work
 * (a CUDA device that does not exist). */
BatchSummary
RunBatch(const std::vector<BatchInput> & inputs, const std::string & outputRoot, const BatchOptions & options);

/** The devices and backend a run would use, resolved from `options` (every visible device when none is
 * named; the CPU when Auto finds no usable device). Throws svdlr::Error for a named device that is unusable. */
void
ResolveBackend(const BatchOptions & options, svdlr::Backend & backend, std::vector<int> & devices,
               std::string & notes);

} // namespace svdlr_batch

#endif
