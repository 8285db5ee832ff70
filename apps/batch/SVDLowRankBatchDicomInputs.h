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
#ifndef SVDLowRankBatchDicomInputs_h
#define SVDLowRankBatchDicomInputs_h

// The DICOM half of the batch input list (InputSelection::addDicomSeries): it needs DCMTK, which the list itself
// does not, so that the Python extension shares the list without it.

#include "SVDLowRankBatchInputs.h"

#include <string>
#include <vector>

namespace svdlr_batch
{

/** Each image series under `folder` as one input, named by the folder of its first file and its series number. A
 * folder that cannot be read, or a series with unusable files, is an input with its `problem` set: it fails alone,
 * by name, and the others go on (docs/batch.md). */
void
AddDicomSeries(const std::string & folder, std::vector<BatchInput> & inputs);

} // namespace svdlr_batch

#endif
