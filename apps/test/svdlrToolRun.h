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
#ifndef svdlrToolRun_h
#define svdlrToolRun_h

// Runs a tool as a user would, in a given folder, and keeps its exit code, stdout and stderr; and lists a folder,
// so that a test can show that a failed run wrote nothing.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace svdlr_test
{

struct ToolRun
{
  int         exitCode{ -1 };
  std::string out;
  std::string err;
};

inline std::string
ReadText(const std::string & path)
{
  std::ifstream     file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

/** Runs `program arguments` in `folder` (a shell command line: quote paths with spaces); its output goes through
 * two files beside the folder, not inside it, so that the folder's listing shows only what the tool wrote. */
inline ToolRun
RunToolIn(const std::filesystem::path & folder, const std::string & program, const std::string & arguments)
{
  const std::string out = folder.string() + ".stdout", err = folder.string() + ".stderr";
  const std::string command =
    "cd '" + folder.string() + "' && '" + program + "' " + arguments + " > '" + out + "' 2> '" + err + "'";
  const int status = std::system(command.c_str());
  ToolRun   run;
  run.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = ReadText(out);
  run.err = ReadText(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return run;
}

/** The names of everything in `folder`, hidden entries included. */
inline std::set<std::string>
Listing(const std::filesystem::path & folder)
{
  std::set<std::string> names;
  for (const auto & entry : std::filesystem::directory_iterator(folder))
  {
    names.insert(entry.path().filename().string());
  }
  return names;
}

} // namespace svdlr_test

#endif
