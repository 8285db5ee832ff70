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
#include "SVDLowRankNiftiFormat.h"

#include "SVDLowRankImageFileErrors.h"

// nifti_clib (Debian: libnifti2-dev), its include folder given to this file alone (CMake/SVDLowRankNifti.cmake): the
// header structs, their byte swapping and their conversion to a nifti_image are the library's. ITK 5.2 bundles the
// NIfTI-1 niftilib under the same names, so the archive is linked with its symbols hidden (--exclude-libs) and no file
// that includes ITK's nifti1_io.h includes this.
#include <nifti2_io.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <sstream>
#include <type_traits>

namespace svdlr_io
{
namespace
{

/** nifti_clib speaks to stderr on bad input; the tools' messages (ImageFileError) are the only ones users see. */
void
SilenceNiftiLibrary()
{
  static std::once_flag once;
  std::call_once(once, [] { nifti_set_debug_level(0); });
}

/** Which header `bytes` start with by its sizeof_hdr: 1 or 2 (and its byte order), else 0. The magic is judged apart
 * (nifti_header_version goes by both, and would take a NIfTI-2 sizeof_hdr in fewer than 540 bytes). */
int
VersionOf(const unsigned char * bytes, std::size_t size, bool & swapped)
{
  if (size < sizeof(nifti_1_header))
  {
    return 0;
  }
  std::int32_t stored = 0;
  std::memcpy(&stored, bytes, sizeof(stored));
  swapped = stored != 348 && stored != 540;
  if (swapped)
  {
    nifti_swap_4bytes(1, &stored);
  }
  if (stored == 348)
  {
    return 1;
  }
  return stored == 540 && size >= sizeof(nifti_2_header) ? 2 : 0;
}

/** The header struct of `bytes` in this machine's byte order (nifti_clib's swap_nifti_header). */
template <typename THeader>
THeader
NativeHeader(const unsigned char * bytes, bool swapped, int version)
{
  THeader header;
  std::memcpy(&header, bytes, sizeof(header));
  if (swapped)
  {
    swap_nifti_header(&header, version);
  }
  return header;
}

/** A NIfTI datatype code (nifti1.h) that ITK 5.2's reader reads, with its name and bits a voxel. */
struct NiftiDatatype
{
  int          code;
  const char * name;
  int          bits;
};
// clang-format off
constexpr NiftiDatatype kReadDatatypes[] = {
  { DT_UINT8, "uint8", 8 },        { DT_INT16, "int16", 16 },         { DT_INT32, "int32", 32 },
  { DT_FLOAT32, "float32", 32 },   { DT_COMPLEX64, "complex64", 64 }, { DT_FLOAT64, "float64", 64 },
  { DT_RGB24, "rgb24", 24 },       { DT_INT8, "int8", 8 },            { DT_UINT16, "uint16", 16 },
  { DT_UINT32, "uint32", 32 },     { DT_INT64, "int64", 64 },         { DT_UINT64, "uint64", 64 },
  { DT_COMPLEX128, "complex128", 128 }, { DT_RGBA32, "rgba32", 32 }
};
// clang-format on

/** How a message names `source`: quoted, or "a NIfTI file" when it has no name (bytes from memory). */
std::string
Named(const std::string & source)
{
  return source.empty() ? std::string("a NIfTI file") : "'" + source + "'";
}

/** Throws InvalidImageFile: `source`'s header has `problem`. */
[[noreturn]] void
ThrowInvalid(const std::string & source, const std::string & problem)
{
  throw InvalidImageFile(Named(source) + " has an impossible NIfTI header: " + problem);
}

/** The judgement of ParseNiftiHeader (its header comment says what and why), on the fields as stored: nifti_clib's
 * conversion would mend them (a dim below 1 read as 1, a non-finite pixdim as 1) and read the file as another. */
template <typename THeader>
void
CheckHeaderFields(const THeader & h, int version, const std::string & source)
{
  std::ostringstream problem;
  const auto         dims = [&h](int i) { return static_cast<std::int64_t>(h.dim[i]); };
  if (dims(0) < 1 || dims(0) > 7)
  {
    problem << "dim[0] is " << dims(0) << "; it must be 1 to 7";
    ThrowInvalid(source, problem.str());
  }
  for (int i = 1; i <= dims(0); ++i)
  {
    if (dims(i) < 1)
    {
      problem << "dim[" << i << "] is " << dims(i) << "; each of dim[1] to dim[" << dims(0) << "] must be at least 1";
      ThrowInvalid(source, problem.str());
    }
  }
  const int  datatype = h.datatype;
  const auto type = std::find_if(
    std::begin(kReadDatatypes), std::end(kReadDatatypes), [&](const NiftiDatatype & t) { return t.code == datatype; });
  if (type == std::end(kReadDatatypes))
  {
    problem << "datatype " << datatype << " is not a NIfTI data type ITK reads";
    ThrowInvalid(source, problem.str());
  }
  if (datatype == DT_RGB24 || datatype == DT_RGBA32)
  {
    // Colour is no MRI series, and ITK 5.2's reader wrote past its buffer on a big-endian RGBA32 file (found by
    // SVDLowRankNiftiFuzzer): refused here, whatever the byte order.
    throw InvalidImageFile(Named(source) + " holds " + type->name +
                           " colour voxels: the tools read grey values, one a voxel and volume");
  }
  if (h.bitpix != type->bits)
  {
    problem << "bitpix is " << h.bitpix << ", but datatype " << datatype << " (" << type->name << ") has " << type->bits
            << " bits a voxel";
    ThrowInvalid(source, problem.str());
  }
  const double firstVoxel = sizeof(THeader) + 4.0; // the header and its 4 extension bytes
  const double voxOffset = static_cast<double>(h.vox_offset);
  if (NIFTI_ONEFILE(h) && !(voxOffset >= firstVoxel))
  {
    problem << "vox_offset is " << voxOffset << ", inside the header: the voxels of a single-file NIfTI-" << version
            << " start at byte " << firstVoxel << " or later";
    ThrowInvalid(source, problem.str());
  }
}

/** The largest magnitude of a geometry field (mm, or a quaternion's part): a sform of finite values from 1e-43 to 1e38
 * (rows like 1.05, -1.7e38, 0, 0) kept ITK 5.2's VNL SVD, in float, iterating past 25 s (found by
 * SVDLowRankNiftiFuzzer); 1e10 mm is 10,000 km, and its square stays far inside a float. */
constexpr double kMostGeometryMagnitude = 1e10;

/** Throws InvalidImageFile where one of `count` geometry values from `values`, named name[first], name[first + 1], ...,
 * is NaN, infinite or beyond kMostGeometryMagnitude. */
template <typename TValue>
void
CheckGeometryValues(const TValue * values, int count, const char * name, int first, const std::string & source)
{
  for (int i = 0; i < count; ++i)
  {
    const double value = static_cast<double>(values[i]);
    if (!(std::fabs(value) <= kMostGeometryMagnitude)) // NaN too
    {
      std::ostringstream problem;
      problem << name << "[" << first + i << "] is " << value << "; the geometry must be finite and within +-1e10";
      ThrowInvalid(source, problem.str());
    }
  }
}

/** The geometry ITK's reader builds the image's spacing, origin and direction from: pixdim[1..dim[0]], and the qform
 * (quaternion and offset) and sform (three rows) where their codes say they hold one. A code outside NIfTI's (0 to 5)
 * or a NaN or Inf in a transform in use is refused: ITK 5.2's reader took a sform_code of 29793 with a NaN in srow_y
 * for a sform and spun in VNL's SVD for minutes (found by SVDLowRankNiftiFuzzer, docs/fuzzing.md). */
template <typename THeader>
void
CheckGeometryFields(const THeader & h, const std::string & source)
{
  std::ostringstream problem;
  CheckGeometryValues(h.pixdim + 1, h.dim[0], "pixdim", 1, source);
  for (const auto & [code, name] : { std::pair{ static_cast<std::int64_t>(h.qform_code), "qform_code" },
                                     std::pair{ static_cast<std::int64_t>(h.sform_code), "sform_code" } })
  {
    if (code < 0 || code > 5)
    {
      problem << name << " is " << code << "; NIfTI's codes are 0 to 5";
      ThrowInvalid(source, problem.str());
    }
  }
  if (h.qform_code > 0)
  {
    const decltype(h.quatern_b) quaternion[] = { h.quatern_b, h.quatern_c, h.quatern_d,
                                                 h.qoffset_x, h.qoffset_y, h.qoffset_z };
    CheckGeometryValues(quaternion, 6, "quatern_b..qoffset_z", 0, source);
  }
  if (h.sform_code > 0)
  {
    CheckGeometryValues(h.srow_x, 4, "srow_x..srow_z", 0, source);
    CheckGeometryValues(h.srow_y, 4, "srow_x..srow_z", 4, source);
    CheckGeometryValues(h.srow_z, 4, "srow_x..srow_z", 8, source);
  }
}

/** The judgement of an Analyze 7.5 header (NIfTI-1's size, no NIfTI magic), which ITK 5.2 reads through niftilib:
 * CheckHeaderFields' dims, datatype and bitpix, and finite pixdims (its spacing). Its other geometry fields are not
 * Analyze's and are not read. niftilib takes the byte order from dim[0], where VersionOf takes it from sizeof_hdr: a
 * header whose two disagree fails the dim[0] check here. ITK 5.2 read one such header (dim[0] 5 one way, sizeof_hdr
 * 348 the other; RGB24 with bitpix 0 and dims of 0) past the end of niftilib's buffer (found by SVDLowRankNiftiFuzzer). */
void
CheckAnalyzeFields(const nifti_1_header & h, const std::string & source)
{
  CheckHeaderFields(h, 1, source);
  CheckGeometryValues(h.pixdim + 1, h.dim[0], "pixdim", 1, source);
}

/** Whether `magic` has NIfTI's form: "n+" or "ni", a digit, a NUL. Wider than nifti_clib's NIFTI_VERSION (1 to 9), so
 * that "n+0" is refused as a NIfTI magic of no version rather than read as Analyze. */
bool
HasNiftiMagicForm(const char * magic)
{
  return magic[0] == 'n' && (magic[1] == '+' || magic[1] == 'i') &&
         std::isdigit(static_cast<unsigned char>(magic[2])) && magic[3] == '\0';
}

/** Throws InvalidImageFile where a NIfTI magic stands where a header of its version keeps it, but sizeof_hdr is neither
 * 348 nor 540: niftilib goes by the magic, and ITK 5.2 then took such a file's geometry as it stands, NaN included, and
 * aborted in VNL (a NIfTI-1 magic behind sizeof_hdr 0x88e9015c, found by SVDLowRankNiftiFuzzer). */
void
CheckMagicWithoutItsSize(const unsigned char * bytes, std::size_t size, const std::string & source)
{
  std::int32_t stored = 0;
  std::memcpy(&stored, bytes, sizeof(stored));
  const char * first = reinterpret_cast<const char *>(bytes + offsetof(nifti_1_header, magic));
  const char * second = reinterpret_cast<const char *>(bytes + offsetof(nifti_2_header, magic));
  const bool   nifti1 = size >= sizeof(nifti_1_header) && HasNiftiMagicForm(first);
  if (nifti1 || HasNiftiMagicForm(second))
  {
    std::ostringstream problem;
    problem << "sizeof_hdr is " << stored << ", but its magic '" << std::string(nifti1 ? first : second, 3)
            << "' is NIfTI's, whose sizeof_hdr is 348 (NIfTI-1) or 540 (NIfTI-2)";
    ThrowInvalid(source, problem.str());
  }
}

/** Throws InvalidImageFile where a header of NIfTI-2's size holds a NIfTI magic at NIfTI-1's place: ITK 5.2's
 * niftilib knows only NIfTI-1, goes by that magic and reads the bytes as a NIfTI-1 header, which the checks of a
 * NIfTI-2 header never saw (one with sform_code 2573 and a NaN in srow made the tools abort in VNL, found by
 * SVDLowRankNiftiFuzzer). A NIfTI-2 header keeps its qform_code there, which no NIfTI magic can be. */
void
CheckNiftiOneMagicInANiftiTwoHeader(const unsigned char * bytes, const std::string & source)
{
  const char * magic = reinterpret_cast<const char *>(bytes + offsetof(nifti_1_header, magic));
  if (HasNiftiMagicForm(magic))
  {
    ThrowInvalid(source, "sizeof_hdr is NIfTI-2's (540), but the magic at NIfTI-1's place is '" +
                           std::string(magic, 3) + "', which ITK reads as a NIfTI-1 header");
  }
}

/** Throws InvalidImageFile where `magic` has NIfTI's form but is not that of the header's version, `version` (from
 * sizeof_hdr): niftilib reads the version from the magic and ITK 5.2 then takes such a file's geometry as it stands,
 * NaN included (a NIfTI-1 header with "n+2", sform_code 5 and a NaN in srow_y made the tools abort in VNL, found by
 * SVDLowRankNiftiFuzzer). Any other magic is no NIfTI's: ITK judges it as Analyze 7.5 or not at all. */
void
CheckMagicOfAnotherVersion(const char * magic, int version, const std::string & source)
{
  if (HasNiftiMagicForm(magic))
  {
    std::ostringstream problem;
    problem << "magic '" << std::string(magic, 3) << "' is not NIfTI-" << version << "'s, whose header (sizeof_hdr "
            << (version == 1 ? 348 : 540) << ") it has";
    ThrowInvalid(source, problem.str());
  }
}

/** The fields the tools use of the judged header `h` (this machine's byte order), through nifti_clib's conversion to a
 * nifti_image (nifti_convert_n1hdr2nim, nifti_convert_n2hdr2nim: non-finite scl_* read as 0, the units split).
 * vox_offset is taken as stored: the library casts NIfTI-1's float to an int, which a hostile header overflows. */
template <typename THeader>
NiftiHeader
FieldsOf(const THeader & h, int version, bool swapped)
{
  SilenceNiftiLibrary();
  nifti_image * converted = nullptr;
  if constexpr (std::is_same_v<THeader, nifti_1_header>)
  {
    converted = nifti_convert_n1hdr2nim(h, nullptr);
  }
  else
  {
    converted = nifti_convert_n2hdr2nim(h, nullptr);
  }
  const std::unique_ptr<nifti_image, void (*)(nifti_image *)> image(converted, nifti_image_free);
  if (!image) // only out of memory: the header was judged above
  {
    throw std::bad_alloc();
  }
  NiftiHeader header;
  header.version = version;
  header.swapped = swapped;
  header.singleFile = NIFTI_ONEFILE(h);
  header.dimensions = static_cast<int>(image->ndim);
  for (int i = 1; i <= header.dimensions; ++i)
  {
    header.extents[i - 1] = static_cast<std::uint64_t>(image->dim[i]);
  }
  header.datatype = image->datatype;
  header.bitpix = 8 * image->nbyper;
  header.sclSlope = image->scl_slope;
  header.sclInter = image->scl_inter;
  header.qformCode = static_cast<short>(image->qform_code);
  header.sformCode = static_cast<short>(image->sform_code);
  header.description = image->descrip;
  header.xyztUnits = static_cast<unsigned char>(h.xyzt_units); // whole: the library splits off the known bits
  return header;
}

/** ParseNiftiHeader for a header of `version` (1 or 2, from its sizeof_hdr), THeader its struct. */
template <typename THeader>
std::optional<NiftiHeader>
ParseHeaderOf(const unsigned char * bytes, bool swapped, int version, const std::string & source)
{
  const THeader h = NativeHeader<THeader>(bytes, swapped, version);
  if (NIFTI_VERSION(h) != version)
  {
    CheckMagicOfAnotherVersion(h.magic, version, source);
    if constexpr (std::is_same_v<THeader, nifti_1_header>)
    {
      CheckAnalyzeFields(h, source); // ITK reads it as Analyze 7.5
    }
    return std::nullopt;
  }
  CheckHeaderFields(h, version, source);
  CheckGeometryFields(h, source);
  NiftiHeader header = FieldsOf(h, version, swapped);
  header.storedVoxOffset = static_cast<double>(h.vox_offset);
  if constexpr (std::is_same_v<THeader, nifti_1_header>)
  {
    // A float offset past what 64 bits hold (found by the fuzzer) means data far beyond any file: cast saturated.
    const float offset = h.vox_offset;
    header.voxOffset = !(offset >= 352.0f) ? 352
                       : offset < 9.0e18f  ? static_cast<std::uint64_t>(offset)
                                           : UINT64_MAX / 2;
  }
  else
  {
    header.voxOffset = h.vox_offset >= 544 ? static_cast<std::uint64_t>(h.vox_offset) : 544;
  }
  return header;
}

} // namespace

std::uint64_t
NiftiHeader::Voxels() const
{
  std::uint64_t voxels = 1;
  for (int i = 0; i < dimensions; ++i)
  {
    voxels = SaturatingTimes(voxels, extents[i]);
  }
  return voxels;
}

std::uint64_t
NiftiHeader::DataBytes() const
{
  return SaturatingTimes(Voxels(), static_cast<std::uint64_t>(bitpix / 8));
}

std::uint64_t
NiftiHeader::StreamBytes() const
{
  const std::uint64_t data = DataBytes();
  return voxOffset > UINT64_MAX - data ? UINT64_MAX : voxOffset + data;
}

unsigned
NiftiHeader::FloatBytes() const
{
  switch (datatype)
  {
    case DT_FLOAT32:
    case DT_COMPLEX64:
      return 4;
    case DT_FLOAT64:
    case DT_COMPLEX128:
      return 8;
    default:
      return 0;
  }
}

std::optional<NiftiHeader>
ParseNiftiHeader(const unsigned char * bytes, std::size_t size, const std::string & source)
{
  bool      swapped = false;
  const int version = VersionOf(bytes, size, swapped);
  if (version == 1)
  {
    return ParseHeaderOf<nifti_1_header>(bytes, swapped, 1, source);
  }
  if (version == 2)
  {
    CheckNiftiOneMagicInANiftiTwoHeader(bytes, source);
    return ParseHeaderOf<nifti_2_header>(bytes, swapped, 2, source);
  }
  if (size >= 8)
  {
    CheckMagicWithoutItsSize(bytes, size, source);
  }
  return std::nullopt;
}

std::optional<NiftiHeaderFields>
HeaderFieldsOf(const NiftiHeader & header)
{
  if (header.version != 1)
  {
    return std::nullopt;
  }
  NiftiHeaderFields fields;
  fields.qformCode = header.qformCode;
  fields.sformCode = header.sformCode;
  fields.description = header.description;
  fields.timeUnits = static_cast<unsigned char>(XYZT_TO_TIME(header.xyztUnits));
  return fields;
}

bool
PatchNiftiHeaderFields(unsigned char * header, const NiftiHeaderFields & fields)
{
  bool swapped = false;
  if (VersionOf(header, sizeof(nifti_1_header), swapped) != 1)
  {
    return false;
  }
  nifti_1_header h = NativeHeader<nifti_1_header>(header, swapped, 1);
  if (NIFTI_VERSION(h) != 1)
  {
    return false;
  }
  h.qform_code = fields.qformCode;
  h.sform_code = fields.sformCode;
  std::fill(std::begin(h.descrip), std::end(h.descrip), '\0');
  std::memcpy(h.descrip, fields.description.data(), std::min(fields.description.size(), sizeof(h.descrip) - 1));
  h.xyzt_units = static_cast<char>(XYZT_TO_SPACE(h.xyzt_units) | XYZT_TO_TIME(fields.timeUnits));
  if (swapped)
  {
    swap_nifti_header(&h, 1); // back to the writer's byte order
  }
  std::memcpy(header, &h, sizeof(h));
  return true;
}

void
SetNifti1Extents(unsigned char * header, const std::vector<std::int16_t> & sizes)
{
  nifti_1_header h;
  std::memcpy(&h, header, sizeof(h));
  std::copy(sizes.begin(), sizes.begin() + std::min<std::size_t>(sizes.size(), 7), h.dim + 1);
  std::memcpy(header, &h, sizeof(h));
}

} // namespace svdlr_io
