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

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace svdlr_io
{

/** An image file whose pixel data is shorter than its header says, or whose compressed stream is cut. */
class IncompleteImageFile : public std::runtime_error
{
public:
  using std::runtime_error::runtime_error;
};

/** An image file holding NaN or Inf where the tools need finite values. */
class NonFiniteImageFile : public std::runtime_error
{
public:
  using std::runtime_error::runtime_error;
};

/** What CheckImageFile does beyond the completeness check. */
enum class ImageFileScan
{
  Structure,    // sizes only: the file size or the gzip trailer against the header (cheap)
  Values,       // every pixel read, NaN and Inf found (NIfTI only: other formats keep them through ITK)
  ValuesForRead // as Values, and a NIfTI file's bytes kept for the read that follows (SVDLowRankNiftiBytes.h): for
                // a caller that reads the file next through NiftiBytesImageIO (the tools; Python reads through ITK's
                // wheels, which would leave the bytes kept)
};

/** Throws IncompleteImageFile, naming `path` and how many bytes are missing, when the pixel data of a NIfTI
 * (.nii, .nii.gz), MHA/MHD or NRRD file is shorter than its header says; with ImageFileScan::Values also throws
 * NonFiniteImageFile for a NaN or Inf voxel of a floating-point NIfTI file. Files of other formats, and headers
 * it does not understand, pass: ITK's own reader judges them. ImageFileScan::ValuesForRead decompresses a NIfTI file
 * once and keeps it for the read that follows (SVDLowRankNiftiRead.h). Returns whether every value was scanned (a
 * single-file NIfTI file with ImageFileScan::Values or ValuesForRead): a caller then need not scan the image read. */
bool
CheckImageFile(const std::string & path, ImageFileScan scan = ImageFileScan::Structure);

/** The first `count` bytes of the file's stream (decompressed when gzip), fewer when it is shorter. */
std::vector<unsigned char>
ReadDecompressedHead(const std::string & path, std::size_t count);

/** Whether CheckImageFile understands the format `path`'s extension names (NIfTI, MHA/MHD, NRRD). */
bool
HasCheckedImageFormat(const std::string & path);

} // namespace svdlr_io

#endif
