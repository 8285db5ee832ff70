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
#ifndef svdlr_SliceStack_h
#define svdlr_SliceStack_h

/* How an image becomes a stack of 2D slices for the engine, and what is said when that goes wrong: the rules the
 * ITK filter (itkSVDLowRankReconstructionImageFilter.hxx) and the Python package (python/src, exposed to
 * _filter.py) both follow. Header-only and ITK-free. Axes are numbered as ITK numbers them: 0 = x, the fastest
 * in memory; NumPy's axis of ITK axis a in a D-dimensional image is D - 1 - a. */

#include <cstddef>
#include <sstream>
#include <string>

namespace svdlr
{

/** A slice's columns run along columnAxis and its rows along rowAxis (the higher of its two axes); slices are
 * stacked along stackAxis. A 2D image is one slice: {0, 1, 0}. */
struct SliceAxes
{
  unsigned int columnAxis;
  unsigned int rowAxis;
  unsigned int stackAxis;
};

/** The axes of the slices of a 2D or 3D image cut normal to sliceDimension (ignored in 2D), which must be valid
 * (SliceDimensionProblem). */
constexpr SliceAxes
SliceAxesOf(unsigned int dimension, unsigned int sliceDimension)
{
  if (dimension == 2)
  {
    return { 0, 1, 0 };
  }
  return { sliceDimension == 0 ? 1u : 0u, sliceDimension == 2 ? 1u : 2u, sliceDimension };
}

/** The default slice axis: the last one (z of a volume, NumPy's axis 0). */
constexpr unsigned int
DefaultSliceDimension(unsigned int dimension)
{
  return dimension - 1;
}

/** What is wrong with cutting a `dimension`-D image normal to `sliceDimension`, in one sentence that calls the
 * parameter `parameterName` ("SliceDimension" in C++, "slice_dimension" in Python); empty when nothing is. Only 2D
 * and 3D images are sliced; a 2D image ignores the parameter. */
inline std::string
SliceDimensionProblem(const char * parameterName, unsigned int dimension, long long sliceDimension)
{
  std::ostringstream problem;
  if (dimension != 2 && dimension != 3)
  {
    problem << "expected a 2D or 3D image, got " << dimension << " dimensions";
  }
  else if (dimension == 3 && (sliceDimension < 0 || sliceDimension >= 3))
  {
    problem << parameterName << " must be 0, 1 or 2 for a 3D image, got " << sliceDimension;
  }
  return problem.str();
}

/** Whether the reconstruction runs in double rather than float: when the input or the output pixel is double. */
constexpr bool
WorksInDouble(bool inputIsDouble, bool outputIsDouble)
{
  return inputIsDouble || outputIsDouble;
}

/** The message for NaN or Inf in slice `slice` (counted from the start of the image's buffer; negative: not known)
 * of an image sliced as `axes` says. */
inline std::string
NonFiniteSliceMessage(unsigned int dimension, long long slice, const SliceAxes & axes)
{
  if (dimension == 2)
  {
    return "The input image contains NaN or Inf values";
  }
  std::ostringstream message;
  if (slice >= 0)
  {
    message << "Input slice " << slice;
  }
  else
  {
    message << "An input slice";
  }
  message << " along axis " << axes.stackAxis << " (" << "xyz"[axes.stackAxis % 3]
          << ") contains NaN or Inf values";
  return message.str();
}

} // namespace svdlr

#endif
