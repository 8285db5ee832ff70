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
// Fuzz target: a folder of up to 4 PNG slices (the input cut at svdlr_fuzz::kFileSeparator), as the tool reads
// `SVDLowRankReconstructImage slices/ ...`: the slices found and ordered, their pixel type from the first one,
// then the stack read at that type (ITK's PNG reader, libpng).
#include "SVDLowRankPngStack.h"
#include "svdlrFuzzFiles.h"

namespace
{
template <typename TPixel>
void
ReadStack(const std::vector<std::string> & files)
{
  svdlr_fuzz::ExpectUsableVolume(svdlr_io::ReadPngStack<TPixel>(files).GetPointer());
}
} // namespace

extern "C" int
LLVMFuzzerInitialize(int *, char ***)
{
  svdlr_fuzz::InitializeQuietly();
  return 0;
}

extern "C" int
LLVMFuzzerTestOneInput(const std::uint8_t * data, std::size_t size)
{
  static const svdlr_fuzz::ScratchFolder scratch("png-stack");
  scratch.Fill(svdlr_fuzz::SplitFiles(data, size, 4), "slice", ".png");
  try
  {
    const auto files = svdlr_io::FindPngSlices(scratch.Path());
    switch (svdlr_io::PngStackComponentType(files))
    {
      case itk::IOComponentEnum::UCHAR:
        ReadStack<unsigned char>(files);
        break;
      case itk::IOComponentEnum::USHORT:
        ReadStack<unsigned short>(files);
        break;
      default: // the tool refuses other types with its own message
        break;
    }
  }
  catch (const svdlr_io::PngStackError & error)
  {
    svdlr_fuzz::ExpectNamesThePath(error, scratch.Path());
  }
  catch (const std::exception & error)
  {
    svdlr_fuzz::Fail(std::string("not a PngStackError: ") + error.what());
  }
  return 0;
}
