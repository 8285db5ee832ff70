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
#ifndef SVDLowRankBatchStages_h
#define SVDLowRankBatchStages_h

// The batch pipeline's rules, whatever its items are (volumes to reconstruct, series to denoise):
//
//   readers (threads)  --queue-->  workers (one per GPU, or one CPU worker)  --queue-->  writers (threads)
//
// An item whose outputs all exist is skipped (each appears only by an atomic rename, the main one last: a re-run
// resumes); one whose set is incomplete (a run killed between its renames) is redone, replacing what there is. An item that fails at any step is reported with its message and the others go
// on. The memory of the items in flight is bounded by one HostBufferPool. The readers scale with the workers, so
// that reading does not cap the GPUs. One BatchJob says what reading, working and writing mean for one kind of
// item; RunPipeline does the rest, the same for every kind. ITK-free: Python's extension compiles it too.

#include "SVDLowRankBatchBuffers.h"
#include "SVDLowRankReconstructionResult.h"

#include "svdlr/Engine.h"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace svdlr_batch
{

enum class VolumeStatus
{
  Done,    // processed and written
  Skipped, // its outputs exist from an earlier run
  Failed   // could not be read, processed or written (message says why); nothing written
};

const char *
ToString(VolumeStatus status);

/** One row of the run's table: the item's result (the single-item path's, too), and what became of it. Times are
 * seconds of the thread that did the step. */
struct VolumeResult : svdlr_io::ReconstructionResult
{
  std::size_t  index{ 0 }; // among the job's items
  VolumeStatus status{ VolumeStatus::Failed };
  std::string  message;
  bool         redo{ false }; // some of its outputs existed, not all: it is written again, replacing them
};

/** What every batch run takes, whatever its items. */
struct PipelineOptions
{
  svdlr::Backend   backend{ svdlr::Backend::Auto };
  std::vector<int> devices;           // CUDA devices, one worker each; empty: every visible device
  unsigned         readers{ 0 };      // 0: DefaultReaders
  unsigned         writers{ 0 };      // 0: the hardware threads the readers leave, at least 1
  std::size_t      memoryBudget{ 0 }; // bytes of items in flight; 0: DefaultBudget
  bool             overwrite{ false }; // redo items whose outputs exist
  /** Called once per item as it finishes (any status), from the pipeline's threads, one call at a time. */
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
  double                    solverBusy{ 0 };    // share of the wall time the workers spent in their work
  std::string               notes;              // e.g. why the CPU was used
};

/** An item between two stages: what a job's Read made, handed to its Work and then its Write. */
struct StagedItem
{
  virtual ~StagedItem() = default;
};

/** Where a worker runs: a CUDA device, or the CPU (device -1). */
struct Worker
{
  std::size_t    index{ 0 };
  svdlr::Backend backend{ svdlr::Backend::CPU };
  int            device{ -1 };
};

/** What one kind of batch does to each of its items. Read, Work and Write run on the pipeline's threads, each
 * item's steps one after the other; an exception from any of them fails that item alone, with its message. */
class BatchJob
{
public:
  virtual ~BatchJob() = default;
  virtual std::size_t
  Count() const = 0;
  /** The item as the report names it, and where its output goes (an output that exists is skipped). */
  virtual std::string
  InputName(std::size_t item) const = 0;
  virtual std::string
  OutputPath(std::size_t item) const = 0;
  /** Every output the item writes together, OutputPath first. The item is skipped only when all exist. */
  virtual std::vector<std::string>
  OutputSet(std::size_t item) const
  {
    return { OutputPath(item) };
  }
  /** Whether the items live in buffers leased from the pool (kept for reuse, pinned when the GPU runs), or in
   * memory of their own that reservations count (DefaultBudget differs). */
  virtual bool
  LeasesBuffers() const
  {
    return false;
  }
  /** Reads the item; memory it holds counts against `pool` (a lease, or a reservation for memory of its own). */
  virtual std::unique_ptr<StagedItem>
  Read(std::size_t item, HostBufferPool & pool, VolumeResult & result) = 0;
  virtual void
  Work(StagedItem & staged, const Worker & worker, VolumeResult & result) = 0;
  /** Writes the item atomically, then lets go of its memory. */
  virtual void
  Write(StagedItem & staged, std::size_t item, VolumeResult & result) = 0;
};

/** Runs `job`'s items through the pipeline. Never throws for one item's failure; throws svdlr::Error for options
 * refused before any work (a CUDA device that does not exist). */
BatchSummary
RunPipeline(BatchJob & job, const PipelineOptions & options);

/** The devices and backend a run would use, resolved from `options` (every visible device when none is named; the
 * CPU when Auto finds no usable device). Throws svdlr::Error for a named device that is unusable. */
void
ResolveBackend(const PipelineOptions & options, svdlr::Backend & backend, std::vector<int> & devices,
               std::string & notes);

} // namespace svdlr_batch

#endif
