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

#include <string>

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

} // namespace python
} // namespace svdlr

#endif
