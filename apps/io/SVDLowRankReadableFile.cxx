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
#include "SVDLowRankReadableFile.h"

#include "SVDLowRankImageFileErrors.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace svdlr_io
{
namespace
{

/** What a file that is not a regular file or folder is, in words. */
const char *
KindOf(mode_t mode)
{
  if (S_ISFIFO(mode))
  {
    return "a FIFO";
  }
  if (S_ISCHR(mode))
  {
    return "a character device";
  }
  if (S_ISBLK(mode))
  {
    return "a block device";
  }
  if (S_ISSOCK(mode))
  {
    return "a socket";
  }
  return "not a file";
}

std::string
Reason(int error, bool folderAllowed)
{
  switch (error)
  {
    case ENOENT:
    case ENOTDIR:
      return folderAllowed ? "no such file or folder" : "no such file";
    case EACCES:
    case EPERM:
      return "permission denied";
    case ELOOP:
      return "a symbolic link loop";
    default:
      return std::strerror(error);
  }
}

} // namespace

std::string
WhyUnreadable(const std::string & path, bool folderAllowed)
{
  struct stat status
  {};
  if (::stat(path.c_str(), &status) != 0)
  {
    return Reason(errno, folderAllowed);
  }
  if (S_ISDIR(status.st_mode))
  {
    if (!folderAllowed)
    {
      return "a folder, not a file";
    }
    return ::access(path.c_str(), R_OK | X_OK) == 0 ? std::string() : Reason(errno, true);
  }
  if (!S_ISREG(status.st_mode))
  {
    return std::string("not a regular file (") + KindOf(status.st_mode) + ")";
  }
  const int descriptor = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (descriptor < 0)
  {
    return Reason(errno, folderAllowed);
  }
  ::close(descriptor);
  return {};
}

void
CheckReadableFile(const std::string & path)
{
  const std::string why = WhyUnreadable(path);
  if (!why.empty())
  {
    throw UnreadableImageFile("cannot read '" + path + "': " + why);
  }
}

int
OpenRegularFile(const std::string & path)
{
  // O_NONBLOCK: opening a FIFO with no writer would wait for one. It changes nothing for a regular file.
  const int   descriptor = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat status
  {};
  if (descriptor >= 0 && (::fstat(descriptor, &status) != 0 || !S_ISREG(status.st_mode)))
  {
    ::close(descriptor);
    return -1;
  }
  return descriptor;
}

} // namespace svdlr_io
