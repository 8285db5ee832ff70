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
#include "svdlrPyErrors.h"

#include <nanobind/nanobind.h>

namespace nb = nanobind;

namespace svdlr
{
namespace python
{

const char *
ErrorCodeName(ErrorCode code)
{
  switch (code)
  {
    case ErrorCode::InvalidArgument:
      return "InvalidArgument";
    case ErrorCode::NonFiniteInput:
      return "NonFiniteInput";
    case ErrorCode::BackendUnavailable:
      return "BackendUnavailable";
    case ErrorCode::DeviceFailure:
      return "DeviceFailure";
    case ErrorCode::OutOfMemory:
      return "OutOfMemory";
    case ErrorCode::NumericalFailure:
      return "NumericalFailure";
    case ErrorCode::Aborted:
      return "Aborted";
  }
  return "Unknown";
}

namespace
{

PyObject *
PythonExceptionType(ErrorCode code)
{
  switch (code)
  {
    case ErrorCode::InvalidArgument:
    case ErrorCode::NonFiniteInput:
      return PyExc_ValueError;
    case ErrorCode::Aborted:
      return PyExc_KeyboardInterrupt;
    case ErrorCode::BackendUnavailable:
    case ErrorCode::DeviceFailure:
    case ErrorCode::OutOfMemory:
    case ErrorCode::NumericalFailure:
      break;
  }
  return PyExc_RuntimeError;
}

} // namespace

void
RaiseEngineError(const Error & error)
{
  const nb::handle type(PythonExceptionType(error.Code()));
  nb::object       exception = type(nb::str(error.what()));
  exception.attr("error_code") = nb::str(ErrorCodeName(error.Code()));
  exception.attr("matrix_index") = error.Matrix() >= 0 ? nb::object(nb::int_(error.Matrix())) : nb::none();
  PyErr_SetObject(type.ptr(), exception.ptr());
  throw nb::python_error();
}

void
RaiseImageFileError(const svdlr_io::ImageFileError & error)
{
  const bool unusable = dynamic_cast<const svdlr_io::InvalidImageFile *>(&error) != nullptr ||
                        dynamic_cast<const svdlr_io::NonFiniteImageFile *>(&error) != nullptr ||
                        dynamic_cast<const svdlr_io::OverflowingImageFile *>(&error) != nullptr;
  PyErr_SetString(unusable ? PyExc_ValueError : PyExc_OSError, error.what());
  throw nb::python_error();
}

[[noreturn]] void
ThrowValueError(const std::string & message)
{
  throw nanobind::value_error(("svdlr: " + message).c_str());
}

} // namespace python
} // namespace svdlr
