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

// The tools' progress bar: one line on stderr, redrawn on each of a filter's progress events, shown only when
// stderr is a terminal (so that logs and tests see no control characters).

#include "itkCommand.h"
#include "itkProcessObject.h"

#include <cstdio>
#include <iostream>
#include <string>
#include <unistd.h>

namespace svdlr_tools
{

class ProgressBar
{
public:
  /** Observes `filter`'s ProgressEvent for as long as the bar lives. */
  explicit ProgressBar(itk::ProcessObject * filter)
    : m_Filter(filter)
    , m_Enabled(isatty(fileno(stderr)) != 0)
  {
    auto command = itk::SimpleConstMemberCommand<ProgressBar>::New();
    command->SetCallbackFunction(this, &ProgressBar::Show);
    m_Observer = m_Filter->AddObserver(itk::ProgressEvent(), command);
  }
  ~ProgressBar() { m_Filter->RemoveObserver(m_Observer); }
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
    const int   done = static_cast<int>(Width * progress);
    std::cerr << "\r[" << std::string(done, '#') << std::string(Width - done, ' ') << "] "
              << static_cast<int>(100 * progress) << "%" << std::flush;
  }

  /** Ends the bar's line, so that what follows starts on a line of its own. */
  void
  Finish() const
  {
    if (m_Enabled)
    {
      std::cerr << std::endl;
    }
  }

private:
  static constexpr int Width = 40;
  itk::ProcessObject * m_Filter;
  bool                 m_Enabled;
  unsigned long        m_Observer{ 0 };
};

} // namespace svdlr_tools

#endif
