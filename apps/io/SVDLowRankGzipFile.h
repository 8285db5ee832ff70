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
#ifndef SVDLowRankGzipFile_h
#define SVDLowRankGzipFile_h

// A gzip file written from bytes in memory: compressed in members on several threads (SVDLowRankGzip.h) and written
// in order, every write and the close checked. ITK-free, so that the tools' NIfTI writer (SVDLowRankNiftiWrite.h)
// and the Python extension's (python/src/svdlrPyNiftiIO.cpp) are one writer.

#include "SVDLowRankGzip.h"

#include <cstdint>
#include <string>
#include <vector>

namespace svdlr_io
{

/** A file descriptor closed on every path. */
struct OwnedDescriptor
{
  int fd{ -1 };
  OwnedDescriptor() = default;
  explicit OwnedDescriptor(int descriptor)
    : fd(descriptor)
  {}
  OwnedDescriptor(const OwnedDescriptor &) = delete;
  OwnedDescriptor &
  operator=(const OwnedDescriptor &) = delete;
  ~OwnedDescriptor();
};

/** Writes every byte to `fd` or returns errno (0 when all were written). */
int
WriteAllBytes(int fd, const unsigned char * data, std::size_t size);

/** Reads up to `size` bytes of `fd` from `offset` into `to`, fewer where the file ends first or a read fails (which
 * sets `*failed`, where given): how many. */
std::size_t
ReadAt(int fd, unsigned char * to, std::size_t size, std::uint64_t offset, bool * failed = nullptr);

/** What WriteGzipFile wrote: its size and the CRC-32 of its bytes, or why it failed. */
struct GzipFileWrite
{
  std::uint64_t bytes{ 0 };
  std::uint32_t crc{ 0 };
  std::string   failure; // "" when every byte was written and the file closed
};

/** Creates (or truncates) `path` and writes `parts` compressed at `level` on `threads` threads (CompressGzip). A
 * failure (a full disk, no permission) is returned, not thrown, so that the caller names the output it concerns. */
GzipFileWrite
WriteGzipFile(const std::string & path, const std::vector<ByteSpan> & parts, int level, unsigned threads);

/** Whether the file at `path` holds a gzip member's magic bytes at `offset` (false when it cannot be read there). */
bool
IsGzipAt(const std::string & path, std::uint64_t offset);

} // namespace svdlr_io

#endif
