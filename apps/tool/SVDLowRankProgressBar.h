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
#ifndef SVDLowRankProgressBar_h
#define SVDLowRankProgressBar_h

// The tools' progress, on stderr from a filter's progress events: on a terminal, one bar redrawn in place; off a
// terminal (a pipeline's log), a line "progress: 40%" at most every svdlr::kProgressLineIntervalSeconds, so that
// logs see no control characters and a long run is not silent. Off altogether under --quiet or --json. StepTimer
// times the steps the summaries list.

#include "svdlr/Defaults.h"

#include "itkCommand.h"
#include "itkProcessObject.h"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <unistd.h>

namespace svdlr_tools
{

/** Adds the wall time from its construction to its destruction to `seconds` (exceptions included). */
class StepTimer
{
public:
  explicit StepTimer(double & seconds)
    : m_Seconds(seconds)
  {}
  ~StepTimer() { m_Seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - m_Start).count(); }
  StepTimer(const StepTimer &) = delete;
  StepTimer &
  operator=(const StepTimer &) = delete;

private:
  double &                                    m_Seconds;
  std::chrono::steady_clock::time_point m_Start{ std::chrono::steady_clock::now() };
};

class ProgressBar
{
public:
  /** Observes `filter`'s ProgressEvent for as long as the bar lives; shows nothing when not `enabled`. */
  explicit ProgressBar(itk::ProcessObject * filter, bool enabled = true)
    : m_Filter(filter)
    , m_Enabled(enabled)
    , m_Terminal(isatty(fileno(stderr)) != 0)
  {
    auto command = itk::SimpleConstMemberCommand<ProgressBar>::New();
    command->SetCallbackFunction(this, &ProgressBar::Show);
    m_Observer = m_Filter->AddObserver(itk::ProgressEvent(), command);
  }
  /** Ends the bar's line, so that what follows (an error too) starts on a line of its own. */
  ~ProgressBar()
  {
    m_Filter->RemoveObserver(m_Observer);
    if (m_Enabled && m_Terminal)
    {
      std::cerr << std::endl;
    }
  }
  ProgressBar(const ProgressBar &) = delete;
  ProgressBar &
  operator=(const ProgressBar &) = delete;

  void
  Show() const
  {
    if (!m_Enabled)
    {
      return;
    }
    const float progress = m_Filter->GetProgress();
    if (m_Terminal)
    {
      const int done = static_cast<int>(Width * progress);
      std::cerr << "\r[" << std::string(done, '#') << std::string(Width - done, ' ') << "] "
                << static_cast<int>(100 * progress) << "%" << std::flush;
      return;
    }
    const auto now = Clock::now();
    if (std::chrono::duration<double>(now - m_LastLine).count() >= svdlr::kProgressLineIntervalSeconds)
    {
      std::cerr << "progress: " << static_cast<int>(100 * progress) << "%" << std::endl;
      m_LastLine = now;
    }
  }

private:
  using Clock = std::chrono::steady_clock;
  static constexpr int       Width = 40;
  itk::ProcessObject *       m_Filter;
  bool                       m_Enabled;
  bool                       m_Terminal;
  unsigned long              m_Observer{ 0 };
  mutable Clock::time_point  m_LastLine{ Clock::now() }; // the start line came just before the work
};

/** Updates `filter` with a progress bar (when `enabled`), whose line is ended even when the update throws. Returns
 * the update's wall time in seconds. */
inline double
UpdateWithProgress(itk::ProcessObject * filter, bool enabled)
{
  const auto        start = std::chrono::steady_clock::now();
  const ProgressBar progress(filter, enabled);
  filter->Update();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace svdlr_tools

#endif
