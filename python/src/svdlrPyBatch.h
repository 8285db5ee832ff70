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
#ifndef svdlrPyBatch_h
#define svdlrPyBatch_h

#include <nanobind/nanobind.h>

namespace svdlr
{
namespace python
{

/** Adds the batch rules of SVDLowRankReconstructImage --batch (apps/batch/SVDLowRankBatchInputs.h), the one
 * implementation the Python batch layer (_batch.py) calls: `batch_default_patterns()`, `batch_bids_patterns()`,
 * `batch_find_inputs(paths, *, patterns, bids, exclude)` and `batch_output_path(relative, output_root, tag)`. The
 * output tag is svdlr::OutputTag's (`output_tag`, svdlrPyRankPolicy.h). */
void
DefineBatchRules(nanobind::module_ & module);

} // namespace python
} // namespace svdlr

#endif
