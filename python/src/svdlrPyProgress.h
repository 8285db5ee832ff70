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
#ifndef svdlrPyProgress_h
#define svdlrPyProgress_h

// The engine's progress callback for a binding that runs the engine without the GIL: between batches it takes the
// GIL back to call the caller's progress function and Python's signal handlers, so that Ctrl-C (or an exception
// the caller's function raises) stops the work at the next batch boundary and is raised once the engine has
// unwound.

#include "svdlr/Engine.h"

#include <nanobind/nanobind.h>

#include <optional>
#include <utility>

namespace svdlr
{
namespace python
{

class ProgressRelay
{
public:
  explicit ProgressRelay(nanobind::object callback)
    : m_Callback(std::move(callback))
  {}

  ProgressCallback
  Callback()
  {
    return [this](std::size_t done, std::size_t total) { return this->OnProgress(done, total); };
  }

  /** Raises the exception that stopped the engine, if any. Call with the GIL held. */
  void
  RaisePending()
  {
    if (m_Pending)
    {
      nanobind::python_error pending = std::move(*m_Pending);
      m_Pending.reset();
      throw pending;
    }
  }

private:
  bool
  OnProgress(std::size_t done, std::size_t total)
  {
    nanobind::gil_scoped_acquire acquire;
    try
    {
      if (!m_Callback.is_none())
      {
        m_Callback(done, total);
      }
      if (PyErr_CheckSignals() != 0)
      {
        throw nanobind::python_error();
      }
      return true;
    }
    catch (nanobind::python_error & error)
    {
      m_Pending.emplace(std::move(error));
      return false;
    }
  }

  nanobind::object                      m_Callback;
  std::optional<nanobind::python_error> m_Pending;
};

} // namespace python
} // namespace svdlr

#endif
