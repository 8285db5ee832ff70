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
#ifndef svdlrPyArrays_h
#define svdlrPyArrays_h

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace svdlr
{
namespace python
{

/** A new C-ordered NumPy array of `ndim` dimensions (transpose it for another memory order); `data` receives its
 * buffer (left uninitialised). NumPy itself allocates it: it asks the kernel for huge pages on large arrays, so the
 * engine's first write into a fresh result takes a few hundred page faults instead of one per 4 KiB (12.7 ms of a
 * 22.7 ms W1 call on the H100 machine with `new[]`, docs/performance.md). Needs the GIL. */
template <typename T>
nanobind::object
NewNumpyArray(std::size_t ndim, const std::size_t * shape, T *& data)
{
  namespace nb = nanobind;
  nb::list dimensions;
  for (std::size_t i = 0; i < ndim; ++i)
  {
    dimensions.append(shape[i]);
  }
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, std::int64_t> ||
                std::is_same_v<T, std::uint16_t>);
  const char * dtype = std::is_same_v<T, float>          ? "float32"
                       : std::is_same_v<T, double>       ? "float64"
                       : std::is_same_v<T, std::int64_t> ? "int64"
                                                         : "uint16";
  nb::object array = nb::module_::import_("numpy").attr("empty")(nb::tuple(dimensions), dtype);
  data = static_cast<T *>(nb::cast<nb::ndarray<nb::numpy, T>>(array).data());
  return array;
}

} // namespace python
} // namespace svdlr

#endif
