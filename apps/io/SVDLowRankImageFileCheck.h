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
#ifndef SVDLowRankImageFileCheck_h
#define SVDLowRankImageFileCheck_h

// Checks of image files below ITK, on their raw bytes, for what ITK 5.2's readers let through: a NIfTI file cut
// short is read with zeros for its missing bytes, and its NaN and Inf voxels become 0. The same checks verify what
// a writer left before it is renamed into place, since ITK's NIfTI writer reports a full disk only on stderr.

#include "SVDLowRankImageFileErrors.h"
#include "SVDLowRankNiftiFormat.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace svdlr_io
{

/** What CheckImageFile does beyond the completeness check. */
enum class ImageFileScan
{
  Structure,    // sizes only: the file size or the gzip trailer against the header (cheap)
  Values,       // every pixel read, NaN and Inf found (NIfTI only: other formats keep them through ITK)
  ValuesForRead // as Values, and a NIfTI file's bytes kept for the read that follows (SVDLowRankNiftiBytes.h): for
                // a caller that reads the file next through NiftiBytesImageIO (the tools; Python reads through ITK's
                // wheels, which would leave the bytes kept)
};

/** Throws an ImageFileError naming `path` (SVDLowRankImageFileErrors.h): UnreadableImageFile when it is not a regular
 * file that can be opened (CheckReadableFile); for a NIfTI file (.nii, .nii.gz) InvalidImageFile when its header is
 * impossible (ParseNiftiHeader); IncompleteImageFile, naming how many bytes are missing, when the pixel data of a
 * NIfTI, MHA/MHD or NRRD file is shorter than its header says; CorruptImageFile when its gzip stream fails its CRC-32
 * or size, or cannot be decoded. With ImageFileScan::Values also NonFiniteImageFile for a NaN or Inf voxel of a NIfTI
 * file and OverflowingImageFile for values beyond float32. Files of other formats, and headers that are not NIfTI, pass
 * the format checks: ITK's own reader judges them. ImageFileScan::ValuesForRead decompresses a NIfTI file once and
 * keeps it for the read that follows (SVDLowRankNiftiRead.h). Returns whether every value was scanned (a single-file
 * NIfTI file with ImageFileScan::Values or ValuesForRead): a caller then need not scan the image read. */
bool
CheckImageFile(const std::string & path, ImageFileScan scan = ImageFileScan::Structure);

/** Throws IncompleteImageFile: "'PATH' is truncated: [WHY; ]N bytes of WHAT are missing [from its data file 'DATAFILE']
 * (the header needs EXPECTED, the file holds PRESENT)"; the one wording of every truncation the checks find. */
[[noreturn]] void
ThrowMissingData(const std::string & path,
                 std::uint64_t       expected,
                 std::uint64_t       present,
                 const char *        what,
                 const std::string & dataFile = {},
                 const std::string & why = {});

struct GunzipCheck;

/** Returns when the gzip stream of `path`, decoded as `outcome` says, is complete with the `needed` bytes its header
 * declares; else throws: InvalidImageFile when it decompresses to more than `most` (TooLong), CorruptImageFile,
 * IncompleteImageFile when all `needed` bytes came out but the CRC-32 and size that verify them are cut off (a file
 * cut by its last 8 bytes), or (ThrowMissingData) when fewer than `needed` did. */
void
CheckGzipOutcome(const std::string & path, const GunzipCheck & outcome, std::uint64_t needed, std::uint64_t most);

/** The most bytes reading `path` can give: its size, or for a gzip file what DEFLATE can expand it to. A header that
 * promises more lies: what sizes memory from a header before the checks (a batch's budget) is bounded by this. */
std::uint64_t
MostBytesInFile(const std::string & path);

} // namespace svdlr_io

#endif
