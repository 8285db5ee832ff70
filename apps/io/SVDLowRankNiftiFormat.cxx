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

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <sstream>

namespace svdlr_io
{
namespace
{

// Offsets in the NIfTI-1 header (nifti1.h).
constexpr std::size_t XyztUnitsOffset = 123;
constexpr std::size_t DescripOffset = 148;
constexpr std::size_t DescripSize = 80;
constexpr std::size_t QformCodeOffset = 252;
constexpr std::size_t SformCodeOffset = 254;
constexpr std::size_t MagicOffset = 344;
constexpr unsigned char SpaceUnitBits = 0x07, TimeUnitBits = 0x38;

template <typename T>
T
Field(const unsigned char * header, std::size_t at, bool swapped)
{
  return StoredValue<T>(header + at, swapped);
}

template <typename T>
void
PutField(unsigned char * header, std::size_t at, T value, bool swapped)
{
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  if (swapped)
  {
    std::reverse(bytes, bytes + sizeof(T));
  }
  std::memcpy(header + at, bytes, sizeof(T));
}

/** niftilib's FIXED_FLOAT: a non-finite header value reads as 0. */
double
Fixed(double value)
{
  return std::isfinite(value) ? value : 0.0;
}

/** a * b, saturating instead of wrapping: a header may claim more than 2^64 bytes. */
std::uint64_t
Times(std::uint64_t a, std::uint64_t b)
{
  return a != 0 && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

/** Which header `bytes` start with: 1 or 2 (and its byte order), else 0. */
int
VersionOf(const unsigned char * bytes, std::size_t size, bool & swapped)
{
  if (size < kNifti1HeaderSize)
  {
    return 0;
  }
  const auto sizeofHdr = Field<std::int32_t>(bytes, 0, false);
  const auto swappedSize = Field<std::int32_t>(bytes, 0, true);
  swapped = sizeofHdr != 348 && sizeofHdr != 540;
  const std::int32_t native = swapped ? swappedSize : sizeofHdr;
  if (native == 348)
  {
    return 1;
  }
  return native == 540 && size >= 540 ? 2 : 0;
}

/** A NIfTI datatype code (nifti1.h) that ITK 5.2's reader reads, with its name and bits a voxel. */
struct NiftiDatatype
{
  int          code;
  const char * name;
  int          bits;
};
constexpr NiftiDatatype kReadDatatypes[] = {
  { 2, "uint8", 8 },           { 4, "int16", 16 },    { 8, "int32", 32 },    { 16, "float32", 32 },
  { 32, "complex64", 64 },     { 64, "float64", 64 }, { 128, "rgb24", 24 },  { 256, "int8", 8 },
  { 512, "uint16", 16 },       { 768, "uint32", 32 }, { 1024, "int64", 64 }, { 1280, "uint64", 64 },
  { 1792, "complex128", 128 }, { 2304, "rgba32", 32 }
};

/** Throws InvalidImageFile: `source`'s header has `problem`. */
[[noreturn]] void
ThrowInvalid(const std::string & source, const std::string & problem)
{
  throw InvalidImageFile((source.empty() ? std::string("a NIfTI file") : "'" + source + "'") +
                         " has an impossible NIfTI header: " + problem);
}

/** The judgement of ParseNiftiHeader (its header comment says what and why), on the fields as stored. */
void
CheckHeaderFields(const NiftiHeader & header, const std::int64_t (&dims)[8], const std::string & source)
{
  std::ostringstream problem;
  if (dims[0] < 1 || dims[0] > 7)
  {
    problem << "dim[0] is " << dims[0] << "; it must be 1 to 7";
    ThrowInvalid(source, problem.str());
  }
  for (int i = 1; i <= dims[0]; ++i)
  {
    if (dims[i] < 1)
    {
      problem << "dim[" << i << "] is " << dims[i] << "; each of dim[1] to dim[" << dims[0] << "] must be at least 1";
      ThrowInvalid(source, problem.str());
    }
  }
  const auto type = std::find_if(std::begin(kReadDatatypes), std::end(kReadDatatypes), [&](const NiftiDatatype & t) {
    return t.code == header.datatype;
  });
  if (type == std::end(kReadDatatypes))
  {
    problem << "datatype " << header.datatype << " is not a NIfTI data type ITK reads";
    ThrowInvalid(source, problem.str());
  }
  if (header.bitpix != type->bits)
  {
    problem << "bitpix is " << header.bitpix << ", but datatype " << header.datatype << " (" << type->name << ") has "
            << type->bits << " bits a voxel";
    ThrowInvalid(source, problem.str());
  }
  const double firstVoxel = header.version == 1 ? 352.0 : 544.0; // the header and its 4 extension bytes
  if (header.singleFile && !(header.storedVoxOffset >= firstVoxel))
  {
    problem << "vox_offset is " << header.storedVoxOffset << ", inside the header: the voxels of a single-file NIfTI-"
            << header.version << " start at byte " << firstVoxel << " or later";
    ThrowInvalid(source, problem.str());
  }
}

/** The geometry ITK's reader builds the image's spacing, origin and direction from: pixdim[1..dim[0]], and the qform
 * (quaternion and offset) and sform (three rows) where their codes say they hold one. A code outside NIfTI's (0 to
 * 5) or a NaN or Inf in a transform in use is refused: ITK 5.2's reader took a sform_code of 29793 with a NaN in
 * srow_y for a sform and spun in VNL's SVD for minutes (found by SVDLowRankNiftiFuzzer, docs/fuzzing.md). */
template <typename TReal, typename TCode>
void
CheckGeometryFields(const unsigned char * bytes, bool swapped, std::int64_t dimensions, std::size_t pixdim,
                    std::size_t qformCode, std::size_t quatern, std::size_t sformCode, std::size_t srow,
                    const std::string & source)
{
  std::ostringstream problem;
  // `count` values from `offset`, named name[first], name[first + 1], ...
  const auto finite = [&](std::size_t offset, int count, const char * name, int first) {
    for (int i = 0; i < count; ++i)
    {
      const double value = static_cast<double>(Field<TReal>(bytes, offset + i * sizeof(TReal), swapped));
      if (!std::isfinite(value))
      {
        problem << name << "[" << first + i << "] is " << value << "; the geometry must be finite";
        ThrowInvalid(source, problem.str());
      }
    }
  };
  finite(pixdim + sizeof(TReal), static_cast<int>(dimensions), "pixdim", 1);
  for (const auto & [offset, name] : { std::pair{ qformCode, "qform_code" }, std::pair{ sformCode, "sform_code" } })
  {
    const auto code = static_cast<std::int64_t>(Field<TCode>(bytes, offset, swapped));
    if (code < 0 || code > 5)
    {
      problem << name << " is " << code << "; NIfTI's codes are 0 to 5";
      ThrowInvalid(source, problem.str());
    }
  }
  if (Field<TCode>(bytes, qformCode, swapped) > 0)
  {
    finite(quatern, 6, "quatern_b..qoffset_z", 0);
  }
  if (Field<TCode>(bytes, sformCode, swapped) > 0)
  {
    finite(srow, 12, "srow_x..srow_z", 0);
  }
}

/** Whether `magic` has NIfTI's form: "n+" or "ni", a digit, a NUL. */
bool
HasNiftiMagicForm(const char * magic)
{
  return magic[0] == 'n' && (magic[1] == '+' || magic[1] == 'i') && std::isdigit(static_cast<unsigned char>(magic[2])) &&
         magic[3] == '\0';
}

/** Throws InvalidImageFile where a NIfTI magic stands where a header of its version keeps it, but sizeof_hdr is
 * neither 348 nor 540: niftilib goes by the magic, and ITK 5.2 then took such a file's geometry as it stands, NaN
 * included, and aborted in VNL (a NIfTI-1 magic behind sizeof_hdr 0x88e9015c, found by SVDLowRankNiftiFuzzer). */
void
CheckMagicWithoutItsSize(const unsigned char * bytes, std::size_t size, const std::string & source)
{
  const auto   stored = Field<std::int32_t>(bytes, 0, false);
  const char * first = reinterpret_cast<const char *>(bytes + MagicOffset);
  const char * second = reinterpret_cast<const char *>(bytes + 4);
  const bool   nifti1 = size >= kNifti1HeaderSize && HasNiftiMagicForm(first);
  if (nifti1 || HasNiftiMagicForm(second))
  {
    std::ostringstream problem;
    problem << "sizeof_hdr is " << stored << ", but its magic '" << std::string(nifti1 ? first : second, 3)
            << "' is NIfTI's, whose sizeof_hdr is 348 (NIfTI-1) or 540 (NIfTI-2)";
    ThrowInvalid(source, problem.str());
  }
}

/** Throws InvalidImageFile where `magic` has NIfTI's form ("n+" or "ni", a digit, a NUL) but is not that of the
 * header's version, `version` (from sizeof_hdr): niftilib reads the version from the magic and ITK 5.2 then takes
 * such a file's geometry as it stands, NaN included (a NIfTI-1 header with "n+2", sform_code 5 and a NaN in srow_y
 * made the tools abort in VNL, found by SVDLowRankNiftiFuzzer). Any other magic is no NIfTI's: ITK judges it as
 * Analyze 7.5 or not at all. */
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

} // namespace

std::uint64_t
NiftiHeader::Voxels() const
{
  std::uint64_t voxels = 1;
  for (int i = 0; i < dimensions; ++i)
  {
    voxels = Times(voxels, extents[i]);
  }
  return voxels;
}

std::uint64_t
NiftiHeader::DataBytes() const
{
  return Times(Voxels(), static_cast<std::uint64_t>(bitpix / 8));
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
    case 16: // DT_FLOAT32
    case 32: // DT_COMPLEX64
      return 4;
    case 64:   // DT_FLOAT64
    case 1792: // DT_COMPLEX128
      return 8;
    default:
      return 0;
  }
}

std::optional<NiftiHeader>
ParseNiftiHeader(const unsigned char * bytes, std::size_t size, const std::string & source)
{
  NiftiHeader header;
  std::int64_t dims[8] = {};
  header.version = VersionOf(bytes, size, header.swapped);
  if (header.version == 0 && size >= 8)
  {
    CheckMagicWithoutItsSize(bytes, size, source);
  }
  const bool swapped = header.swapped;
  if (header.version == 1)
  {
    const char * magic = reinterpret_cast<const char *>(bytes + MagicOffset);
    if (std::memcmp(magic, "n+1", 4) != 0 && std::memcmp(magic, "ni1", 4) != 0)
    {
      CheckMagicOfAnotherVersion(magic, 1, source);
      return std::nullopt;
    }
    header.singleFile = magic[1] == '+';
    for (int i = 0; i < 8; ++i)
    {
      dims[i] = Field<std::int16_t>(bytes, 40 + 2 * i, swapped);
    }
    header.intentCode = Field<std::int16_t>(bytes, 68, swapped);
    header.datatype = Field<std::int16_t>(bytes, 70, swapped);
    header.bitpix = Field<std::int16_t>(bytes, 72, swapped);
    const float offset = Field<float>(bytes, 108, swapped);
    header.storedVoxOffset = offset;
    // A float offset past what 64 bits hold (found by the fuzzer) means data far beyond any file: cast saturated.
    header.voxOffset =
      !(offset >= 352.0f) ? 352 : offset < 9.0e18f ? static_cast<std::uint64_t>(offset) : UINT64_MAX / 2;
    header.sclSlope = Fixed(Field<float>(bytes, 112, swapped));
    header.sclInter = Fixed(Field<float>(bytes, 116, swapped));
    header.xyztUnits = bytes[XyztUnitsOffset];
    header.qformCode = Field<std::int16_t>(bytes, QformCodeOffset, swapped);
    header.sformCode = Field<std::int16_t>(bytes, SformCodeOffset, swapped);
    const char * descrip = reinterpret_cast<const char *>(bytes + DescripOffset);
    header.description.assign(descrip, strnlen(descrip, DescripSize));
  }
  else if (header.version == 2)
  {
    const char * magic = reinterpret_cast<const char *>(bytes + 4);
    if (std::memcmp(magic, "n+2", 4) != 0 && std::memcmp(magic, "ni2", 4) != 0)
    {
      CheckMagicOfAnotherVersion(magic, 2, source);
      return std::nullopt;
    }
    header.singleFile = magic[1] == '+';
    for (int i = 0; i < 8; ++i)
    {
      dims[i] = Field<std::int64_t>(bytes, 16 + 8 * i, swapped);
    }
    header.datatype = Field<std::int16_t>(bytes, 12, swapped);
    header.bitpix = Field<std::int16_t>(bytes, 14, swapped);
    const std::int64_t offset = Field<std::int64_t>(bytes, 168, swapped);
    header.storedVoxOffset = static_cast<double>(offset);
    header.voxOffset = offset >= 544 ? static_cast<std::uint64_t>(offset) : 544;
    header.sclSlope = Fixed(Field<double>(bytes, 176, swapped));
    header.sclInter = Fixed(Field<double>(bytes, 184, swapped));
    header.qformCode = static_cast<short>(Field<std::int32_t>(bytes, 344, swapped));
    header.sformCode = static_cast<short>(Field<std::int32_t>(bytes, 348, swapped));
    header.xyztUnits = static_cast<unsigned char>(Field<std::int32_t>(bytes, 500, swapped));
    header.intentCode = Field<std::int32_t>(bytes, 504, swapped);
    const char * descrip = reinterpret_cast<const char *>(bytes + 240);
    header.description.assign(descrip, strnlen(descrip, DescripSize));
  }
  else
  {
    return std::nullopt;
  }
  CheckHeaderFields(header, dims, source);
  if (header.version == 1)
  {
    CheckGeometryFields<float, std::int16_t>(bytes, swapped, dims[0], 76, QformCodeOffset, 256, SformCodeOffset, 280,
                                             source);
  }
  else
  {
    CheckGeometryFields<double, std::int32_t>(bytes, swapped, dims[0], 104, 344, 352, 348, 400, source);
  }
  header.dimensions = static_cast<int>(dims[0]);
  for (int i = 1; i <= dims[0]; ++i)
  {
    header.extents[i - 1] = static_cast<std::uint64_t>(dims[i]);
  }
  return header;
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
  fields.timeUnits = header.xyztUnits & TimeUnitBits;
  return fields;
}

bool
PatchNiftiHeaderFields(unsigned char * header, const NiftiHeaderFields & fields)
{
  bool swapped = false;
  if (VersionOf(header, kNifti1HeaderSize, swapped) != 1 ||
      (std::memcmp(header + MagicOffset, "n+1", 4) != 0 && std::memcmp(header + MagicOffset, "ni1", 4) != 0))
  {
    return false;
  }
  PutField<std::int16_t>(header, QformCodeOffset, fields.qformCode, swapped);
  PutField<std::int16_t>(header, SformCodeOffset, fields.sformCode, swapped);
  std::fill_n(header + DescripOffset, DescripSize, 0);
  std::memcpy(header + DescripOffset, fields.description.data(), std::min(fields.description.size(), DescripSize - 1));
  header[XyztUnitsOffset] =
    static_cast<unsigned char>((header[XyztUnitsOffset] & SpaceUnitBits) | (fields.timeUnits & TimeUnitBits));
  return true;
}

} // namespace svdlr_io
