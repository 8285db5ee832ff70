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
#include "SVDLowRankGzipFile.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <unistd.h>

namespace svdlr_io
{

OwnedDescriptor::~OwnedDescriptor()
{
  if (fd >= 0)
  {
    ::close(fd);
  }
}

bool
IsGzipAt(const std::string & path, std::uint64_t offset)
{
  std::ifstream file(path, std::ios::binary); // a folder or an unreadable file: false, no exception
  file.seekg(static_cast<std::streamoff>(offset));
  unsigned char magic[2] = {};
  return file.read(reinterpret_cast<char *>(magic), 2) && magic[0] == 0x1f && magic[1] == 0x8b;
}

int
WriteAllBytes(int fd, const unsigned char * data, std::size_t size)
{
  while (size > 0)
  {
    const ssize_t done = ::write(fd, data, size);
    if (done < 0)
    {
      if (errno == EINTR)
      {
        continue;
      }
      return errno;
    }
    data += done;
    size -= static_cast<std::size_t>(done);
  }
  return 0;
}

std::size_t
ReadAt(int fd, unsigned char * to, std::size_t size, std::uint64_t offset, bool * failed)
{
  std::size_t done = 0;
  while (done < size)
  {
    const ssize_t got = ::pread(fd, to + done, size - done, static_cast<off_t>(offset + done));
    if (got <= 0)
    {
      if (got < 0 && failed != nullptr)
      {
        *failed = true;
      }
      break; // 0: the file ended early
    }
    done += static_cast<std::size_t>(got);
  }
  return done;
}

GzipFileWrite
WriteGzipFile(const std::string & path, const std::vector<ByteSpan> & parts, int level, unsigned threads)
{
  GzipFileWrite   record;
  OwnedDescriptor out{ ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666) };
  if (out.fd < 0)
  {
    record.failure = "cannot open it: " + std::string(std::strerror(errno));
    return record;
  }
  const auto write = [&](const unsigned char * data, std::size_t size) {
    if (!record.failure.empty())
    {
      return; // the disk is full: the rest is not written
    }
    if (const int error = WriteAllBytes(out.fd, data, size))
    {
      record.failure = std::string("writing it failed: ") + std::strerror(error);
      return;
    }
    record.bytes += size;
    record.crc = Crc32(record.crc, data, size);
  };
  CompressGzip(parts, level, threads, write);
  const int closed = ::close(out.fd);
  out.fd = -1;
  if (closed != 0 && record.failure.empty())
  {
    record.failure = std::string("closing it failed: ") + std::strerror(errno);
  }
  return record;
}

} // namespace svdlr_io
