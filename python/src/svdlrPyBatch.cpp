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
// The batch rules are compiled into the extension from apps/batch (without DICOM: Python's batch takes image
// files), so that Python and the command-line tool cannot drift apart.
#include "svdlrPyModule.h"

#include "SVDLowRankBatchInputs.h"
#include "SVDLowRankInterruptCleanup.h"
#include "svdlr/OutputMaps.h"

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

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

/** (path, relative) of each volume found; FileNotFoundError for a path that does not exist, ValueError when
 * nothing is found or two volumes would share an output. */
std::vector<std::pair<std::string, std::string>>
FindInputs(const std::vector<std::string> & paths,
           const std::vector<std::string> & patterns,
           bool                             bids,
           const std::string &              exclude)
{
  svdlr_batch::InputSelection selection;
  selection.paths = paths;
  selection.patterns = patterns;
  selection.bids = bids;
  selection.exclude = exclude;
  std::vector<svdlr_batch::BatchInput> inputs;
  try
  {
    inputs = svdlr_batch::FindBatchInputs(selection);
  }
  catch (const svdlr_batch::MissingBatchInput & error)
  {
    PyErr_SetString(PyExc_FileNotFoundError, error.what());
    throw nb::python_error();
  }
  catch (const svdlr_batch::BatchInputError & error)
  {
    throw nb::value_error(error.what());
  }
  std::vector<std::pair<std::string, std::string>> found;
  for (const auto & input : inputs)
  {
    found.emplace_back(input.path, input.relative);
  }
  return found;
}

} // namespace

void
DefineBatchRules(nb::module_ & module)
{
  module.def("batch_default_patterns", &svdlr_batch::DefaultImagePatterns,
             "The patterns a folder search takes by default (NIfTI, NRRD, MetaImage, Analyze headers).");
  module.def("batch_bids_patterns", &svdlr_batch::BidsPatterns, "The patterns of a BIDS-like layout's anatomy.");
  module.def("batch_find_inputs", &FindInputs, "paths"_a, nb::kw_only(), "patterns"_a = std::vector<std::string>{},
             "bids"_a = false, "exclude"_a = "",
             "[(path, relative)] of the volumes among `paths`, in the tool's order (see _batch.find_volumes).");
  module.attr("BATCH_DENOISED_TAG") = svdlr_batch::DenoisedTag;
  module.attr("BATCH_SIGMA_MAP_TAG") = svdlr_batch::SigmaMapTag;
  module.attr("BATCH_RANK_MAP_TAG") = svdlr_batch::RankMapTag;
  module.def(
    "batch_output_path",
    [](const std::string & relative, const std::string & outputRoot, const std::string & tag) {
      svdlr_batch::BatchInput input;
      input.relative = relative;
      return svdlr_batch::OutputPathFor(input, outputRoot, tag);
    },
    "relative"_a, "output_root"_a, "tag"_a,
    "Where an image file found at `relative` goes under `output_root`: `_<tag>` before its extension.");
  module.def("remove_stale_partials_beside", &svdlr_io::RemoveStalePartialsBeside, "target"_a,
             "Removes the hidden partial outputs beside `target` (.NAME.partial-PID..., .STEM.partial-PID...) whose "
             "process no longer runs (killed with SIGKILL, a machine that lost power), as the tools do before each "
             "write; a running process's, this one's included, are kept.");
  module.def(
    "partial_name_parts",
    [](const std::string & name) {
      const svdlr_io::PartialFileName parts = svdlr_io::SplitForPartial(name);
      return std::make_pair(svdlr_io::PartialNameStart(parts.stem), parts.extension);
    },
    "name"_a,
    "How the tools name a partial output of the file `name`: (start, extension), the temporary being\n"
    "start + PID + ... + extension (\".STEM.partial-\", a long stem cut and tagged with its hash so that any legal\n"
    "name stays within 255 bytes; the extension that picks ITK's writer). One rule for the tools and Python.");
  // What the denoiser's maps hold, for their sidecars (svdlr/OutputMaps.h: the tool writes the same).
  nb::dict maps;
  for (const svdlr::OutputMap * map : { &svdlr::kNoiseMap, &svdlr::kRankMap })
  {
    nb::dict entry;
    entry["label"] = map->label;
    entry["description"] = map->description;
    entry["units"] = map->units;
    maps[map->label] = entry;
  }
  module.attr("OUTPUT_MAPS") = maps;
}

} // namespace python
} // namespace svdlr
