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
// The batch pipeline of the command-line tools, run from Python: the same reader threads, one worker per GPU (or
// one CPU worker), writer threads, the same rules (an output that exists is skipped, an item that fails is reported
// and the others go on, the readers scale with the GPUs, a byte budget bounds what is in flight), with the steps
// given as Python callables. Each call into Python holds the GIL only for itself: the engine's calls inside the
// steps release it (denoise_local_low_rank does), and so do zlib and NumPy in reading and writing, so that the
// threads overlap as they do in the tools.
#include "svdlrPyModule.h"
#include "svdlrPyErrors.h"

#include "SVDLowRankBatchStages.h"

#include "svdlr/Names.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace nb = nanobind;
using namespace nb::literals;

namespace svdlr
{
namespace python
{
namespace
{

/** Runs `step` with the GIL held. A Python exception becomes a C++ one with its type and message (the Python objects
 * are let go here, under the GIL), which fails the item alone. */
template <typename TStep>
void
WithGil(TStep && step)
{
  nb::gil_scoped_acquire gil;
  try
  {
    step();
  }
  catch (nb::python_error & error)
  {
    const std::string type = nb::cast<std::string>(error.type().attr("__name__"));
    const std::string message = nb::cast<std::string>(nb::str(error.value()));
    throw std::runtime_error(type + ": " + message);
  }
}

/** What a Python step handed on; let go of with the GIL held, on whichever thread drops it. */
struct PythonStaged : svdlr_batch::StagedItem
{
  nb::object               value;
  svdlr_batch::BufferLease budget;
  ~PythonStaged() override
  {
    nb::gil_scoped_acquire gil;
    value.reset();
  }
};

double
FloatOr(const nb::dict & values, const char * key, double fallback)
{
  return values.contains(key) ? nb::cast<double>(values[key]) : fallback;
}

/** read(index) -> (staged, bytes in memory); work(staged, device) -> (staged, {rank_min, rank_max, sigma_min,
 * sigma_max}) with device -1 for the CPU; write(index, staged). */
class PythonJob : public svdlr_batch::BatchJob
{
public:
  PythonJob(std::vector<std::string> inputs, std::vector<std::vector<std::string>> outputs, nb::callable read,
            nb::callable work, nb::callable write)
    : m_Inputs(std::move(inputs))
    , m_Outputs(std::move(outputs))
    , m_Read(std::move(read))
    , m_Work(std::move(work))
    , m_Write(std::move(write))
  {
    if (m_Inputs.size() != m_Outputs.size())
    {
      throw nb::value_error("batch_pipeline: inputs and outputs differ in length");
    }
    if (std::any_of(m_Outputs.begin(), m_Outputs.end(), [](const auto & set) { return set.empty(); }))
    {
      throw nb::value_error("batch_pipeline: every item needs its output first in its set of outputs");
    }
  }

  std::size_t
  Count() const override
  {
    return m_Inputs.size();
  }
  std::string
  InputName(std::size_t item) const override
  {
    return m_Inputs[item];
  }
  std::string
  OutputPath(std::size_t item) const override
  {
    return m_Outputs[item].front();
  }
  std::vector<std::string>
  OutputSet(std::size_t item) const override
  {
    return m_Outputs[item];
  }
  std::unique_ptr<svdlr_batch::StagedItem>
  Read(std::size_t item, svdlr_batch::HostBufferPool & pool, svdlr_batch::VolumeResult &) override
  {
    auto        staged = std::make_unique<PythonStaged>();
    std::size_t bytes = 0;
    WithGil([&] {
      const auto got = nb::cast<nb::tuple>(m_Read(item));
      staged->value = got[0];
      bytes = nb::cast<std::size_t>(got[1]);
    });
    // Python's readers allocate their own arrays: the budget is counted once the size is known, so a reader holds
    // at most one item beyond it.
    staged->budget = pool.Reserve(bytes);
    return staged;
  }
  void
  Work(svdlr_batch::StagedItem & item, const svdlr_batch::Worker & worker, svdlr_batch::VolumeResult & result) override
  {
    auto & staged = static_cast<PythonStaged &>(item);
    WithGil([&] {
      const auto got = nb::cast<nb::tuple>(m_Work(staged.value, worker.device));
      staged.value = got[0];
      const auto values = nb::cast<nb::dict>(got[1]);
      result.rankMin = static_cast<std::size_t>(FloatOr(values, "rank_min", 0));
      result.rankMax = static_cast<std::size_t>(FloatOr(values, "rank_max", 0));
      result.sigmaMin = FloatOr(values, "sigma_min", std::nan(""));
      result.sigmaMax = FloatOr(values, "sigma_max", std::nan(""));
    });
  }
  void
  Write(svdlr_batch::StagedItem & item, std::size_t index, svdlr_batch::VolumeResult &) override
  {
    auto & staged = static_cast<PythonStaged &>(item);
    WithGil([&] { m_Write(index, staged.value); });
  }

private:
  std::vector<std::string> m_Inputs;
  std::vector<std::vector<std::string>> m_Outputs; // each item's set, its output first
  nb::callable                          m_Read;
  nb::callable                          m_Work;
  nb::callable                          m_Write;
};

nb::dict
RowOf(const svdlr_batch::VolumeResult & result)
{
  nb::dict row;
  row["index"] = result.index;
  row["input"] = result.input;
  row["output"] = result.output;
  row["status"] = svdlr_batch::ToString(result.status);
  row["message"] = result.message;
  row["rank_min"] = result.rankMin;
  row["rank_max"] = result.rankMax;
  row["sigma_min"] = result.sigmaMin;
  row["sigma_max"] = result.sigmaMax;
  row["device"] = result.device;
  row["read_seconds"] = result.readSeconds;
  row["work_seconds"] = result.solveSeconds;
  row["write_seconds"] = result.writeSeconds;
  return row;
}

nb::tuple
RunBatchPipeline(std::vector<std::string> inputs, std::vector<std::vector<std::string>> outputs, nb::callable read,
                 nb::callable work, nb::callable write, const std::string & backend, std::vector<int> devices,
                 unsigned readers, unsigned writers, std::size_t memoryBytes, bool overwrite, nb::object onItem)
{
  PythonJob                    job(std::move(inputs), std::move(outputs), std::move(read), std::move(work),
                std::move(write));
  svdlr_batch::PipelineOptions options;
  ParseOption("backend", backend, &ParseName, &BackendNames, options.backend);
  options.devices = std::move(devices);
  options.readers = readers;
  options.writers = writers;
  options.memoryBudget = memoryBytes;
  options.overwrite = overwrite;
  if (!onItem.is_none())
  {
    options.onVolume = [&onItem](const svdlr_batch::VolumeResult & result, std::size_t finished, std::size_t total) {
      nb::gil_scoped_acquire gil;
      try
      {
        onItem(RowOf(result), finished, total);
      }
      catch (nb::python_error & error)
      {
        error.discard_as_unraisable("svdlr batch_pipeline on_item"); // a report's error does not stop the run
      }
    };
  }
  svdlr_batch::BatchSummary summary;
  {
    nb::gil_scoped_release release;
    summary = svdlr_batch::RunPipeline(job, options);
  }
  nb::list rows;
  for (const auto & result : summary.volumes)
  {
    rows.append(RowOf(result));
  }
  nb::dict totals;
  totals["done"] = summary.done;
  totals["skipped"] = summary.skipped;
  totals["failed"] = summary.failed;
  totals["seconds"] = summary.wallSeconds;
  totals["backend"] = svdlr::Name(summary.backend);
  totals["devices"] = summary.devices;
  totals["readers"] = summary.readers;
  totals["writers"] = summary.writers;
  totals["peak_bytes"] = summary.peakBytes;
  totals["notes"] = summary.notes;
  return nb::make_tuple(rows, totals);
}

} // namespace

void
DefineBatchPipeline(nb::module_ & module)
{
  module.def("batch_pipeline", &RunBatchPipeline, "inputs"_a, "outputs"_a, "read"_a, "work"_a, "write"_a,
             nb::kw_only(), "backend"_a = "auto", "devices"_a = std::vector<int>{}, "readers"_a = 0u, "writers"_a = 0u,
             "memory_bytes"_a = std::size_t{ 0 }, "overwrite"_a = false, "on_item"_a = nb::none(),
             "Runs the tools' batch pipeline (docs/batch.md) over items named `inputs`, each written to its set of\n"
             "`outputs` (a list of paths per item, its main output first):\n"
             "read(index) -> (staged, bytes) on reader threads; work(staged, device) -> (staged, stats) on one\n"
             "thread per CUDA device (device -1: one CPU worker); write(index, staged) on writer threads. An item\n"
             "whose outputs all exist is skipped unless `overwrite` (one with only some is redone); an exception\n"
             "in a step fails that item alone.\n"
             "Returns (rows, totals).");
}

} // namespace python
} // namespace svdlr
