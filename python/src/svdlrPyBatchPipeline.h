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
#ifndef svdlrPyBatchPipeline_h
#define svdlrPyBatchPipeline_h

#include <nanobind/nanobind.h>

namespace svdlr
{
namespace python
{

/** Adds `batch_pipeline(inputs, outputs, read, work, write, *, backend, devices, readers, writers, memory_bytes,
 * overwrite, on_item)`: the batch pipeline of the tools (apps/batch/SVDLowRankBatchStages.h, compiled into the
 * extension) with Python's steps, for _denoise_batch.denoise_batch. */
void
DefineBatchPipeline(nanobind::module_ & module);

} // namespace python
} // namespace svdlr

#endif
