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
#ifndef SVDLowRankNiftiHeaderRead_h
#define SVDLowRankNiftiHeaderRead_h

// The one way from a NIfTI file (or its bytes) to its header: the read of the header step, before the data is
// decompressed (SVDLowRankNiftiBytes.h), checked and converted (SVDLowRankNiftiVoxels.h).

#include "SVDLowRankNiftiFormat.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace svdlr_io
{

/** The NIfTI header of the file `path` (decompressed when gzip), judged by ParseNiftiHeader; std::nullopt when it is
 * not one. The one way from a NIfTI file to its header for the checks and the reader: a gzip stream too damaged or too
 * short to hold a header throws CorruptImageFile or IncompleteImageFile. */
std::optional<NiftiHeader>
ReadNiftiHeader(const std::string & path);

/** As ReadNiftiHeader, from a gzip file already in memory (`bytes`, the whole file `path`): the read that decompresses
 * the file next (LoadNiftiFile) takes its header from the same bytes, without opening the file again. */
std::optional<NiftiHeader>
ParseGzipNiftiHeader(const unsigned char * bytes, std::size_t size, const std::string & path);

/** The first `count` bytes of the file's stream (decompressed when gzip), fewer when it is shorter. */
std::vector<unsigned char>
ReadDecompressedHead(const std::string & path, std::size_t count);

} // namespace svdlr_io

#endif
