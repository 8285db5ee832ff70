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
#ifndef SVDLowRankNiftiFormat_h
#define SVDLowRankNiftiFormat_h

// The one reader of NIfTI-1 and NIfTI-2 headers in the tools and the Python extension: the raw checks (size, NaN and
// Inf), the fast .nii.gz reader and writer, and the header fields the tools carry from input to output all read a
// header through ParseNiftiHeader, and change one through PatchNiftiHeaderFields. nifti_clib (libnifti2) holds the
// header structs, swaps their bytes and converts them (nifti_convert_n1hdr2nim, nifti_convert_n2hdr2nim); ours is the
// judgement of a header before that conversion, which would mend what no sound file has (dimensions, datatype and
// bitpix, vox_offset, the geometry) and read the file as another. Its include folder stays in the .cxx: ITK's
// NiftiImageIO brings NIfTI-1's niftilib under the same names.

#include <algorithm>
#include <array>
#include <cstring>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace svdlr_io
{

/** a * b, saturating instead of wrapping: a header may claim more than 2^64 bytes. */
inline std::uint64_t
SaturatingTimes(std::uint64_t a, std::uint64_t b)
{
  return a != 0 && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

/** The value of type T stored at `bytes`, in the byte order of its writer (`swapped`: not this machine's). For voxels,
 * one at a time in the readers' loops, where it inlines (nifti_clib's nifti_swap_Nbytes swaps whole arrays in place,
 * and the decompressed file is shared read-only). */
template <typename T>
T
StoredValue(const unsigned char * bytes, bool swapped)
{
  unsigned char copy[sizeof(T)];
  std::memcpy(copy, bytes, sizeof(T));
  if (swapped)
  {
    std::reverse(copy, copy + sizeof(T));
  }
  T value;
  std::memcpy(&value, copy, sizeof(T));
  return value;
}

/** Enough bytes for either header: NIfTI-1's is 348 bytes, NIfTI-2's 540, each followed by 4 extension bytes. */
constexpr std::size_t kNiftiHeaderBytes = 544;
/** NIfTI-1's header size (sizeof_hdr). */
constexpr std::size_t kNifti1HeaderSize = 348;

/** The fields of a header the tools use, in this machine's byte order. */
struct NiftiHeader
{
  int                          version{ 1 };       // 1 or 2
  bool                         singleFile{ true }; // n+1 / n+2; false: ni1 / ni2 (a .hdr/.img pair)
  bool                         swapped{ false };   // written in the other byte order
  int                          dimensions{ 0 };    // dim[0], 1 to 7
  std::array<std::uint64_t, 7> extents{ { 1, 1, 1, 1, 1, 1, 1 } }; // dim[1..7], values below 1 read as 1 (niftilib)
  int                          datatype{ 0 };
  int                          bitpix{ 0 };
  std::uint64_t                voxOffset{ 0 }; // where the pixels start in the (decompressed) file
  double                       storedVoxOffset{ 0.0 }; // vox_offset as written (voxOffset reads one below 352 as 352)
  double                       sclSlope{ 0.0 }; // non-finite read as 0 (niftilib's FIXED_FLOAT)
  double                       sclInter{ 0.0 };
  short                        qformCode{ 0 };
  short                        sformCode{ 0 };
  std::string                  description; // descrip, at most 79 characters
  unsigned char                xyztUnits{ 0 };

  /** The number of voxels (the product of the extents), saturated at 2^64 - 1. */
  std::uint64_t
  Voxels() const;
  /** The bytes of pixel data the header promises, saturated at 2^64 - 1. */
  std::uint64_t
  DataBytes() const;
  /** The bytes of a single file's stream up to its last voxel (voxOffset + DataBytes()), saturated at 2^64 - 1. */
  std::uint64_t
  StreamBytes() const;
  /** 4 or 8 for floating-point voxels (real or complex), else 0. */
  unsigned
  FloatBytes() const;
};

/** The header in `bytes` (the first bytes of a decompressed NIfTI file), or std::nullopt for what is not a NIfTI-1 or
 * NIfTI-2 header (no NIfTI magic: ITK's readers judge such a file). Throws InvalidImageFile
 * (SVDLowRankImageFileErrors.h), naming `source` and the field, for a NIfTI header no sound file has, which niftilib
 * would read by guessing: dim[0] outside 1 to 7, any of dim[1] to dim[dim[0]] below 1 (niftilib reads 1, and the file's
 * data is then read as something else), a datatype that is not NIfTI's or one ITK cannot read, a bitpix that is not its
 * datatype's, or, in a single file, a vox_offset inside the header (its bytes would be read as voxels). */
std::optional<NiftiHeader>
ParseNiftiHeader(const unsigned char * bytes, std::size_t size, const std::string & source = {});

/** What a NIfTI output should inherit from its NIfTI input that ITK 5.2's NIfTI writer drops: it writes qform_code and
 * sform_code 1 (scanner) whatever the input had (an MNI-space image, code 4, comes out as scanner space), an empty
 * `descrip` and no time unit. */
struct NiftiHeaderFields
{
  short         qformCode{ 0 };
  short         sformCode{ 0 };
  std::string   description; // descrip, at most 79 characters
  unsigned char timeUnits{ 0 }; // the time bits of xyzt_units (NIFTI_UNITS_SEC 8, MSEC 16, USEC 24)
};

/** The fields a NIfTI-1 header carries over (NIfTI-2 headers are not written by the tools: std::nullopt). */
std::optional<NiftiHeaderFields>
HeaderFieldsOf(const NiftiHeader & header);

/** Sets `fields` in the NIfTI-1 header at `header` (348 bytes, in its own byte order); the geometry, the spatial unit
 * and everything else are left as they are. Returns false, changing nothing, when it is not a NIfTI-1 header. */
bool
PatchNiftiHeaderFields(unsigned char * header, const NiftiHeaderFields & fields);

/** Sets dim[1..sizes.size()] of the NIfTI-1 header at `header` (348 bytes, in this machine's byte order) to `sizes`,
 * each at most 32767; dim[0] and everything else are left as they are. */
void
SetNifti1Extents(unsigned char * header, const std::vector<std::int16_t> & sizes);

} // namespace svdlr_io

#endif
