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
#ifndef SVDLowRankImageFileErrors_h
#define SVDLowRankImageFileErrors_h

// What the raw checks of an input image file throw (SVDLowRankImageFileCheck.h, SVDLowRankNiftiBytes.h), one class for
// each thing that can be wrong with a file, all of them ImageFileError: the tools turn any of them into their input
// error (exit 3) with the message as it is, the batch into that volume's failure, and Python's binding into OSError
// (the file cannot be read as it is: unreadable, truncated, corrupt) or ValueError (it reads, but what it says cannot
// be used: an impossible header, NaN or Inf, values beyond float32). Every message names the file.

#include <stdexcept>

/** Declares the exception class `name`, derived from `base`, whose constructors are base's (they take the message):
 * the exceptions of the io and batch code, one class for each thing that callers (and Python) tell apart. */
#define SVDLR_DECLARE_ERROR(name, base)                                                                                \
  class name : public base                                                                                             \
  {                                                                                                                    \
  public:                                                                                                              \
    using Superclass = base;                                                                                           \
    using Superclass::Superclass;                                                                                      \
  }

namespace svdlr_io
{

/** Anything the raw checks refuse an input image file for. */
SVDLR_DECLARE_ERROR(ImageFileError, std::runtime_error);

/** A file that cannot be opened as one: missing, permission denied, a symbolic link loop, not a regular file. */
SVDLR_DECLARE_ERROR(UnreadableImageFile, ImageFileError);

/** An image file whose pixel data is shorter than its header says, or whose compressed stream is cut. */
SVDLR_DECLARE_ERROR(IncompleteImageFile, ImageFileError);

/** An image file whose bytes are damaged: a gzip member whose CRC-32 or size (ISIZE) does not match its data, or
 * compressed data that cannot be decoded. */
SVDLR_DECLARE_ERROR(CorruptImageFile, ImageFileError);

/** A header no sound file has (a dimension of 0 or less, voxels that overlap the header, a bitpix that is not its
 * datatype's), or data that goes on past what the header declares (a gzip bomb). */
SVDLR_DECLARE_ERROR(InvalidImageFile, ImageFileError);

/** An image file holding NaN or Inf where the tools need finite values. */
SVDLR_DECLARE_ERROR(NonFiniteImageFile, ImageFileError);

/** An image file of finite values that become Inf in float32, the type the tools compute in (a float64 beyond FLT_MAX,
 * an integer scaled by scl_slope past it). */
SVDLR_DECLARE_ERROR(OverflowingImageFile, ImageFileError);

} // namespace svdlr_io

#endif
