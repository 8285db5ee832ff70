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
#ifndef SVDLowRankStagedOutput_h
#define SVDLowRankStagedOutput_h

// Outputs that appear whole or not at all: a folder is written under a hidden temporary sibling
// name and renamed into place by Commit(); if Commit() is never reached, the temporary is removed.

#include <stdexcept>
#include <string>

namespace svdlr_io
{

/** The output path is taken (a non-empty folder, or a file where a folder should go). */
class OutputInTheWay : public std::runtime_error
{
public:
  using std::runtime_error::runtime_error;
};

/** A hidden name beside `target` in the same folder, unique to this process: dir/.name.partial-PID. */
std::string
TemporarySiblingOf(const std::string & target);

/** Whether `inner` is `outer` or lies inside it (after resolving links and relative parts). */
bool
IsSameOrInside(const std::string & inner, const std::string & outer);

class StagedDirectory
{
public:
  /** Checks that `target` may be written (absent, an empty folder, or any folder when `overwrite`) and
   * creates the temporary folder. Throws OutputInTheWay or std::runtime_error. */
  StagedDirectory(const std::string & target, bool overwrite);
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory &) = delete;
  StagedDirectory &
  operator=(const StagedDirectory &) = delete;

  /** The temporary folder to write into. */
  const std::string &
  Path() const
  {
    return m_Temporary;
  }

  /** Moves the temporary folder to the target, replacing what was there. */
  void
  Commit();

private:
  std::string m_Target;
  std::string m_Temporary;
  bool        m_Committed{ false };
};

} // namespace svdlr_io

#endif
