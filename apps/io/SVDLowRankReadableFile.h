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
#ifndef SVDLowRankReadableFile_h
#define SVDLowRankReadableFile_h

// Whether an input path can be read, said as it is: the tools, the batch and Python's check_image_file ask here before
// anything opens the file, so that a FIFO never blocks an open, /dev/zero is never read without end, and a file that
// exists but cannot be read is not called missing.

#include <cctype>
#include <string>

namespace svdlr_io
{

/** Why `path` cannot be read as an input, or "" when it can: "no such file" ("no such file or folder" with
 * `folderAllowed`), "permission denied", "a symbolic link loop", "not a regular file (a FIFO)" and the like. With
 * `folderAllowed` a folder that can be listed is readable; without, a folder is refused too. Only a regular file is
 * opened (to see that it can be), and without blocking. */
std::string
WhyUnreadable(const std::string & path, bool folderAllowed = false);

/** Throws UnreadableImageFile (SVDLowRankImageFileErrors.h), "cannot read 'PATH': WHY", when WhyUnreadable says why. */
void
CheckReadableFile(const std::string & path);

/** `path` opened for reading when it is a regular file (never blocking on a FIFO), else -1; the caller closes it. */
int
OpenRegularFile(const std::string & path);

/** `text` in lower case (ASCII): how file names and header words are compared in any case. */
inline std::string
LowerCase(std::string text)
{
  for (auto & c : text)
  {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return text;
}

/** Whether `text` ends with `suffix`, in any case: EndsWithNoCase("brain.NII.GZ", ".nii.gz"). */
inline bool
EndsWithNoCase(const std::string & text, const std::string & suffix)
{
  return text.size() >= suffix.size() && LowerCase(text.substr(text.size() - suffix.size())) == LowerCase(suffix);
}

} // namespace svdlr_io

#endif
