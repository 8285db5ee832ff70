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

// Turns the engine's errors into Python exceptions. Call with the GIL held.

#include "SVDLowRankImageFileErrors.h"
#include "svdlr/Engine.h"

namespace svdlr
{
namespace python
{

/** Raises the Python exception for `error`:
 *   InvalidArgument, NonFiniteInput                                   -> ValueError
 *   BackendUnavailable, DeviceFailure, OutOfMemory, NumericalFailure  -> RuntimeError
 *   Aborted                                                           -> KeyboardInterrupt
 * The exception carries two attributes: `error_code` (the ErrorCode's name, e.g. "NonFiniteInput") and
 * `matrix_index` (the offending matrix of the batch, or None), so that the Python layer can name the slice. */
[[noreturn]] void
RaiseEngineError(const Error & error);

/** Raises the Python exception for an input file the tools' checks refuse (SVDLowRankImageFileErrors.h): OSError when
 * the file cannot be read as it is (unreadable, truncated, corrupt), ValueError when what it says cannot be used (an
 * impossible header, NaN or Inf, values beyond float32). Call with the GIL held. */
[[noreturn]] void
RaiseImageFileError(const svdlr_io::ImageFileError & error);

/** Raises ValueError("svdlr: " + message): a keyword's value the binding refuses before any engine call. */
[[noreturn]] void
ThrowValueError(const std::string & message);

/** The name of `code`, as in the C++ enum ("InvalidArgument", ...). */
const char *
ErrorCodeName(ErrorCode code);

} // namespace python
} // namespace svdlr

#endif
