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
#ifndef svdlrPyErrors_h
#define svdlrPyErrors_h

// The binding's own Python exceptions; the engine's and the tools' errors that leave a binding are translated for the
// whole module (svdlrPyModule.cpp's TranslateErrors). Call with the GIL held.

#include "svdlr/Engine.h"

#include <nanobind/nanobind.h>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace svdlr
{
namespace python
{

/** Raises ValueError("svdlr: " + message): a keyword's value the binding refuses before any engine call. */
[[noreturn]] void
ThrowValueError(const std::string & message);

/** The name of `code`, as in the C++ enum ("InvalidArgument", ...). */
const char *
ErrorCodeName(ErrorCode code);

/** Raises the Python exception `type(message)` with these attributes (name, value), e.g. the engine's `error_code`. */
[[noreturn]] void
RaisePythonError(PyObject * type, const std::string & message,
                 std::initializer_list<std::pair<const char *, nanobind::object>> attributes);

/** `value` when it lies in [minimum, maximum], else ValueError "<name> must be <rule>, got <value>": the range
 * checks the engine cannot do because its fields are unsigned. */
inline std::int64_t
CheckedRange(const char * name, std::int64_t value, const char * rule, std::int64_t minimum,
             std::int64_t maximum = std::numeric_limits<std::int64_t>::max())
{
  if (value < minimum || value > maximum)
  {
    ThrowValueError(std::string(name) + " must be " + rule + ", got " + std::to_string(value));
  }
  return value;
}

/** "a", "b" or "c": every name of a list (svdlr/DenoiseChoices.h's NameLists), quoted, for messages. */
std::string
QuotedNames(const std::vector<std::string> & names);
inline std::string
QuotedNames(std::string names) // already worded (svdlr/Names.h: "auto, cpu or cuda")
{
  return names;
}

/** Sets `value` to what `name` names, parsed by `parse` (svdlr/Names.h, svdlr/DenoiseChoices.h), when it is given;
 * ValueError "<option> must be <names>, got "<name>"" for a name it does not know, `names()` listing them (a
 * NameList, quoted, or a worded list), built only then. */
template <typename TValue, typename TNames>
void
ParseOption(const char * option, const std::optional<std::string> & name, bool (*parse)(const std::string &, TValue &),
            TNames names, TValue & value)
{
  if (name && !parse(*name, value))
  {
    ThrowValueError(std::string(option) + " must be " + QuotedNames(names()) + ", got \"" + *name + "\"");
  }
}

} // namespace python
} // namespace svdlr

#endif
