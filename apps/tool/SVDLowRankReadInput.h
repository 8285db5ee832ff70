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
#ifndef SVDLowRankReadInput_h
#define SVDLowRankReadInput_h

// How the denoiser reads an input image, whichever option names it (the series, the mask, the known-sigma map, a
// phase, an imaginary part, a noise scan): through apps/io's reader (svdlr_io::ReadImageFile), so that a NIfTI file
// checked up front is decompressed once, and with ITK's complaint turned into the tool's input error (exit code 3).

#include "SVDLowRankExitCodes.h"
#include "SVDLowRankNiftiRead.h"

#include <string>

namespace svdlr_tools
{

/** The image in `path`, which the error calls the `what` ("series", "mask"), through `header` when given (the
 * ImageIO that ReadImageHeader returned for it). Throws InputError. */
template <typename TImage>
typename TImage::Pointer
ReadInputImage(const std::string & path, const char * what, itk::ImageIOBase * header = nullptr)
{
  try
  {
    return svdlr_io::ReadImageFile<TImage>(path, header);
  }
  catch (const itk::ExceptionObject & error)
  {
    throw InputError(std::string("cannot read the ") + what + " '" + path + "': " + error.GetDescription());
  }
}

} // namespace svdlr_tools

#endif
