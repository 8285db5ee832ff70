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
// Fuzz target: a folder of up to 8 DICOM files (the input cut at svdlr_fuzz::kFileSeparator), as the tool reads
// `SVDLowRankReconstructImage dicom/ ...`: the series found in the folder, grouped and listed, each one's slices
// ordered along the normal and checked against a regular grid, then read.
#include "SVDLowRankDicomSeries.h"
#include "svdlrFuzzFiles.h"
#include "svdlrFuzzGdcmChild.h"

extern "C" int
LLVMFuzzerInitialize(int *, char ***)
{
  svdlr_fuzz::InitializeQuietly();
  svdlr_io::SilenceDicomWarnings();
  svdlr_fuzz::ContainGdcmChildren();
  return 0;
}

extern "C" int
LLVMFuzzerTestOneInput(const std::uint8_t * data, std::size_t size)
{
  static const svdlr_fuzz::ScratchFolder scratch("dicom-folder");
  scratch.Fill(svdlr_fuzz::SplitFiles(data, size, 8), "slice", ".dcm");
  try
  {
    const auto series = svdlr_io::FindDicomSeries({ scratch.Path() });
    svdlr_io::DescribeDicomSeries(series);
    for (const auto & one : series)
    {
      const auto volume = svdlr_io::ReadDicomSeries(one);
      svdlr_fuzz::ExpectUsableVolume(volume.image.GetPointer());
    }
  }
  catch (const svdlr_io::DicomError & error)
  {
    svdlr_fuzz::ExpectNamesThePath(error, scratch.Path());
  }
  catch (const std::exception & error)
  {
    svdlr_fuzz::Fail(std::string("not a DicomError: ") + error.what());
  }
  return 0;
}
