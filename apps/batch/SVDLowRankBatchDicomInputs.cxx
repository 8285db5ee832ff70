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
#include "SVDLowRankBatchDicomInputs.h"

#include "SVDLowRankDicomSeries.h"

#include <filesystem>
#include <iostream>

namespace svdlr_batch
{
namespace fs = std::filesystem;

void
AddDicomSeries(const std::string & folder, std::vector<BatchInput> & inputs)
{
  const fs::path root(folder);
  std::vector<svdlr_io::DicomSeriesSummary> series;
  svdlr_io::DicomSearchNotes                notes;
  try
  {
    series = svdlr_io::FindDicomSeries({ root.string() }, &notes);
  }
  catch (const svdlr_io::DicomError & error)
  {
    // One unreadable folder fails alone (docs/batch.md): it is reported by name and the other folders go on.
    BatchInput failed;
    failed.source = VolumeSource::DicomSeries;
    failed.path = root.string();
    failed.relative = Generic(root.filename().empty() ? root.parent_path().filename() : root.filename());
    failed.problem = "cannot read the DICOM folder '" + root.string() + "': " + error.what();
    inputs.push_back(std::move(failed));
    return;
  }
  for (const std::string & file : notes.leftOut)
  {
    std::cerr << "note: left out " << file << "\n";
  }
  for (const auto & one : series)
  {
    BatchInput input;
    input.source = VolumeSource::DicomSeries;
    input.path = root.string();
    input.dicomFiles = one.files;
    input.seriesInstanceUID = one.seriesInstanceUID;
    input.seriesNumber = one.seriesNumber;
    input.seriesDescription = one.seriesDescription;
    // A series with unusable files fails alone, by name, and the others go on (docs/batch.md).
    input.problem = svdlr_io::DicomSeriesProblem(one);
    const std::string & first = one.files.empty() ? one.unusable.front().file : one.files.front();
    const fs::path      seriesFolder = fs::path(first).parent_path().lexically_relative(root);
    const std::string name = one.seriesNumber.empty() ? one.seriesInstanceUID : "series-" + one.seriesNumber;
    input.relative = Generic(seriesFolder / name);
    inputs.push_back(std::move(input));
  }
}

} // namespace svdlr_batch
