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
#ifndef SVDLowRankFolderFiles_h
#define SVDLowRankFolderFiles_h

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace svdlr_io
{

/** A folder that a search under it could not list, and why: the caller says what would be missed. */
class UnlistableFolder : public std::runtime_error
{
public:
  UnlistableFolder(std::filesystem::path folder, const std::string & reason)
    : std::runtime_error("cannot list the folder '" + folder.generic_string() + "': " + reason)
    , m_Folder(std::move(folder))
    , m_Reason(reason)
  {}
  const std::filesystem::path &
  Folder() const
  {
    return m_Folder;
  }
  const std::string &
  Reason() const
  {
    return m_Reason;
  }

private:
  std::filesystem::path m_Folder;
  std::string           m_Reason;
};

/** Every file under `folder`, recursively, in no set order (callers sort the names they show): the one search the
 * batch's input folders and the DICOM search share. Hidden files and folders (a name that starts with '.') and
 * `exclude` (when given: the batch's output folder inside its input) are not looked at, and folders reached through a
 * link are not entered. A dangling link (an un-fetched git-annex or DataLad file) is listed, so that it fails by name
 * where it is read. A folder that cannot be listed throws UnlistableFolder naming it, rather than leaving its files out
 * without a word. */
std::vector<std::filesystem::path>
FilesUnder(const std::filesystem::path & folder, const std::filesystem::path & exclude = {});

} // namespace svdlr_io

#endif
