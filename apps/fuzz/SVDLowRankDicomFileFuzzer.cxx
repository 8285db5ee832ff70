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
// Fuzz target: one DICOM file, as the tool reads `SVDLowRankReconstructImage slice.dcm ...`: the series found in it
// (FindDicomSeries), then its volume (ReadDicomSeries: headers, geometry checks, pixels through DCMTK's codecs).
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
  static const svdlr_fuzz::ScratchFolder scratch("dicom-file");
  const std::string bytes(reinterpret_cast<const char *>(data), size);
  const std::string file = scratch.Fill({ bytes }, "slice", ".dcm")[0];
  try
  {
    for (const auto & series : svdlr_io::FindDicomSeries({ file }))
    {
      const auto volume = svdlr_io::ReadDicomSeries(series);
      svdlr_fuzz::ExpectUsableVolume(volume.image.GetPointer());
    }
  }
  catch (const svdlr_io::DicomError & error)
  {
    svdlr_fuzz::ExpectNamesThePath(error, file);
  }
  catch (const std::exception & error)
  {
    svdlr_fuzz::Fail(std::string("not a DicomError: ") + error.what());
  }
  return 0;
}
