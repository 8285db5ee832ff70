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
#ifndef SVDLowRankOutputType_h
#define SVDLowRankOutputType_h

// --output-type same: a tool's float32 result back in the input's pixel type, rounded and clamped by the rule the
// filters apply to integer outputs (itk::SVDLowRankReconstructionDetail::ToPixel). float32 is the default of every
// mode (svdlr/Defaults.h says why); this is the one alternative.

#include "itkImage.h"
#include "SVDLowRankNiftiRead.h"
#include "SVDLowRankNiftiWrite.h"

#include "itkImageFileWriter.h"
#include "itkImageIOBase.h"
#include "itkSVDLowRankReconstructionImageFilter.h"

#include <cmath>
#include <cstddef>

namespace svdlr_tools
{

/** `image` (float pixels, or float components of a VectorImage) as TPixel; with `wholeNumbers` also rounded when
 * TPixel is real (a DICOM input, read as float from integer stored values). */
template <typename TPixel, typename TImage>
typename TImage::template Rebind<TPixel>::Type::Pointer
ConvertPixels(const TImage * image, bool wholeNumbers = false)
{
  using OutputImage = typename TImage::template Rebind<TPixel>::Type;
  auto converted = OutputImage::New();
  converted->CopyInformation(image);
  converted->SetRegions(image->GetLargestPossibleRegion());
  converted->SetNumberOfComponentsPerPixel(image->GetNumberOfComponentsPerPixel());
  converted->Allocate();
  const float *     from = image->GetBufferPointer();
  TPixel *          to = reinterpret_cast<TPixel *>(converted->GetBufferPointer());
  const std::size_t count =
    image->GetLargestPossibleRegion().GetNumberOfPixels() * image->GetNumberOfComponentsPerPixel();
  for (std::size_t i = 0; i < count; ++i)
  {
    to[i] = itk::SVDLowRankReconstructionDetail::ToPixel<TPixel>(wholeNumbers ? std::round(from[i]) : from[i]);
  }
  return converted;
}

/** Writes `image` (float) to `path` in the pixel type `component` names (float for types the tools do not read),
 * through svdlr_io::WriteImageFile with `settings`. */
template <typename TImage>
void
WriteInComponentType(const TImage *                       image,
                     const std::string &                  path,
                     itk::IOComponentEnum                 component,
                     const svdlr_io::ImageWriteSettings & settings = {})
{
  if (!svdlr_io::VisitComponentType<unsigned char, signed char, short, unsigned short, int, unsigned int, double>(
        component, [&](auto pixel) {
          svdlr_io::WriteImageFile(ConvertPixels<decltype(pixel)>(image).GetPointer(), path, settings);
        }))
  {
    svdlr_io::WriteImageFile(image, path, settings);
  }
}

} // namespace svdlr_tools

#endif
