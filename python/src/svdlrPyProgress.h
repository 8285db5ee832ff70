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
#include <thread>
#include <utility>

namespace svdlr
{
namespace python
{

class ProgressRelay
{
public:
  /** Call with the GIL held, on the thread that will run the engine. */
  explicit ProgressRelay(nanobind::object callback)
    : m_Callback(std::move(callback))
    , m_HasCallback(!m_Callback.is_none())
    , m_OnMainThread(OnPythonMainThread())
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
  /** Whether this thread is Python's main thread, the only one whose PyErr_CheckSignals runs the handlers. */
  static bool
  OnPythonMainThread()
  {
    const nanobind::object threading = nanobind::module_::import_("threading");
    return nanobind::cast<unsigned long>(threading.attr("get_ident")()) ==
           nanobind::cast<unsigned long>(threading.attr("main_thread")().attr("ident"));
  }

  bool
  OnProgress(std::size_t done, std::size_t total)
  {
    // Off Python's main thread with no callback there is nothing to do with the GIL: PyErr_CheckSignals does nothing
    // there. Taking it anyway stalled each engine call about 5 ms a batch (the GIL's switch interval) behind the
    // threads that hold it: a batch pipeline's readers and writers, a Dask worker's event loop. On two GPUs the BIDS
    // App then ran no faster than on one.
    if (!m_HasCallback && !(m_OnMainThread && std::this_thread::get_id() == m_Thread))
    {
      return true;
    }
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
  bool                                  m_HasCallback;
  bool                                  m_OnMainThread;                        // constructed there
  std::thread::id                       m_Thread{ std::this_thread::get_id() }; // the constructing thread
  std::optional<nanobind::python_error> m_Pending;
};

} // namespace python
} // namespace svdlr

#endif
