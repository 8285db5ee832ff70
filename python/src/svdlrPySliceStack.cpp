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
#include "svdlrPyModule.h"

#include "svdlr/SliceStack.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <cctype>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>

namespace nb = nanobind;
using namespace nb::literals;

namespace svdlr
{
namespace python
{
namespace
{

/** The axes of the slices, or ValueError with the rule's sentence (Python spells the parameter slice_dimension). */
SliceAxes
CheckedSliceAxes(unsigned int dimension, std::optional<std::int64_t> sliceDimension)
{
  const long long   value = sliceDimension ? *sliceDimension : DefaultSliceDimension(dimension);
  const std::string problem = SliceDimensionProblem("slice_dimension", dimension, value);
  if (!problem.empty())
  {
    throw nb::value_error(("svdlr: " + problem).c_str());
  }
  return SliceAxesOf(dimension, static_cast<unsigned int>(value));
}

} // namespace

void
DefineSliceStack(nb::module_ & module)
{
  module.def(
    "slice_axes",
    [](unsigned int dimension, std::optional<std::int64_t> sliceDimension) {
      const SliceAxes axes = CheckedSliceAxes(dimension, sliceDimension);
      return std::make_tuple(axes.columnAxis, axes.rowAxis, axes.stackAxis);
    },
    "dimension"_a,
    "slice_dimension"_a = nb::none(),
    "(column_axis, row_axis, stack_axis) of the slices of a 2D or 3D image, in ITK's axis numbering (svdlr/SliceStack.h); "
    "slice_dimension None: the default (the last axis). ValueError when the image cannot be cut so.");
  module.def("works_in_double",
             &WorksInDouble,
             "input_is_double"_a,
             "output_is_double"_a,
             "Whether the reconstruction runs in float64 for these pixel types (svdlr/SliceStack.h).");
  module.def(
    "non_finite_slice_message",
    [](unsigned int dimension, long long slice, std::optional<std::int64_t> sliceDimension) {
      std::string message = NonFiniteSliceMessage(dimension, slice, CheckedSliceAxes(dimension, sliceDimension));
      message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
      return "svdlr: " + message;
    },
    "dimension"_a,
    "slice"_a,
    "slice_dimension"_a = nb::none(),
    "The message for NaN or Inf in a slice, as the ITK filter words it (svdlr/SliceStack.h).");
}

} // namespace python
} // namespace svdlr
