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
// Fuzz target: what the tool reads of a DICOM file before any pixel: the preamble test that decides whether a
// file is DICOM, the header up to the pixel data (DCMTK's parser, stopped at PixelData), the tags that group and
// list series, and the choice of a series by UID and by number (--list-series, --series).
#include "SVDLowRankDicomSeries.h"
#include "svdlrFuzzFiles.h"

extern "C" int
LLVMFuzzerInitialize(int *, char ***)
{
  svdlr_fuzz::InitializeQuietly();
  svdlr_io::SilenceDicomWarnings();
  return 0;
}

extern "C" int
LLVMFuzzerTestOneInput(const std::uint8_t * data, std::size_t size)
{
  static const svdlr_fuzz::ScratchFolder scratch("dicom-header");
  const std::string bytes(reinterpret_cast<const char *>(data), size);
  const std::string file = scratch.Fill({ bytes }, "slice", "")[0];
  try
  {
    svdlr_io::HasDicomPreamble(file);
    const auto series = svdlr_io::FindDicomSeries({ file });
    const std::string listing = svdlr_io::DescribeDicomSeries(series);
    for (const auto & one : series)
    {
      if (&svdlr_io::SelectDicomSeries(series, one.seriesInstanceUID) != &one && !one.seriesInstanceUID.empty())
      {
        svdlr_fuzz::Fail("--series UID picked another series");
      }
      if (one.files.size() != 1 || one.files[0] != file)
      {
        svdlr_fuzz::Fail("one file gave a series of other files");
      }
    }
    svdlr_io::SelectDicomSeries(series, "1");
  }
  catch (const svdlr_io::DicomError & error)
  {
    // An empty list has no file to name ("no DICOM image series found"); every other error is about the file.
    if (std::string(error.what()).rfind("no DICOM image series found", 0) != 0)
    {
      svdlr_fuzz::ExpectNamesThePath(error, file);
    }
  }
  catch (const std::exception & error)
  {
    svdlr_fuzz::Fail(std::string("not a DicomError: ") + error.what());
  }
  return 0;
}
