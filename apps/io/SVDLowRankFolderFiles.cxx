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
#include "SVDLowRankFolderFiles.h"

#include <system_error>

namespace svdlr_io
{
namespace fs = std::filesystem;

namespace
{
/** A name that starts with '.': .git and .datalad, macOS's ._IM0001.dcm and .DS_Store, a staged output's
 * temporaries. The searches for inputs do not look at them. */
bool
IsHiddenName(const fs::path & path)
{
  const std::string name = path.filename().string();
  return !name.empty() && name.front() == '.';
}

void
AddFilesUnder(const fs::path & folder, const fs::path & exclude, std::vector<fs::path> & files)
{
  std::error_code         error;
  fs::directory_iterator it(folder, error);
  for (; !error && it != fs::directory_iterator(); it.increment(error))
  {
    const fs::path & path = it->path();
    std::error_code  ignored; // a dangling link's status is an error; it is listed all the same
    if (IsHiddenName(path) || (!exclude.empty() && fs::equivalent(path, exclude, ignored)))
    {
      continue;
    }
    if (it->is_directory(ignored) && !it->is_symlink(ignored))
    {
      AddFilesUnder(path, exclude, files);
    }
    else if (it->is_regular_file(ignored) || (it->is_symlink(ignored) && !fs::exists(path, ignored)))
    {
      files.push_back(path);
    }
  }
  if (error)
  {
    throw UnlistableFolder(folder, error.message());
  }
}
} // namespace

std::vector<fs::path>
FilesUnder(const fs::path & folder, const fs::path & exclude)
{
  std::vector<fs::path> files;
  AddFilesUnder(folder, exclude, files);
  return files;
}

} // namespace svdlr_io
