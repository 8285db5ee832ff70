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
#ifndef SVDLowRankNiftiHeader_h
#define SVDLowRankNiftiHeader_h

// Keeps what a NIfTI output should inherit from its NIfTI input that ITK 5.2's NIfTI writer drops: it writes
// qform_code and sform_code 1 (scanner) whatever the input had (an MNI-space image, code 4, comes out as scanner
// space), an empty `descrip` and no time unit. ITK's reader does put the input's codes in the image's metadata
// dictionary (qform_code, sform_code, their *_name), but 5.2's writer ignores them; so the tools read these few
// fields from the input's header and set them in the written file's header, before it is renamed into place.

#include "SVDLowRankNiftiFormat.h"

#include <optional>
#include <string>

namespace svdlr_tools
{

using svdlr_io::NiftiHeaderFields; // apps/io's one reader of NIfTI headers

/** The fields of the NIfTI-1 file `path` (.nii or .nii.gz); std::nullopt for any other file. */
std::optional<NiftiHeaderFields>
ReadNiftiHeaderFields(const std::string & path);

/** Sets `fields` in the header of the NIfTI-1 file `path`, in place for .nii, by rewriting it (decompressed and
 * compressed again in gzip members, svdlr_io::CompressGzip, at `compressionLevel`, 0: the default) for .nii.gz. The geometry, the spatial unit and the pixels are left as written. Throws
 * std::runtime_error when the file is not NIfTI-1 or cannot be rewritten. */
void
WriteNiftiHeaderFields(const std::string & path, const NiftiHeaderFields & fields, int compressionLevel = 0);

} // namespace svdlr_tools

#endif
