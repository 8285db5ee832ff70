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
#include "SVDLowRankNiftiHeader.h"

#include "itk_zlib.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace svdlr_tools
{
namespace
{

// The NIfTI-1 header's layout (nifti1.h): 348 bytes, in the byte order of its writer.
constexpr std::size_t HeaderSize = 348;
constexpr std::size_t XyztUnitsOffset = 123;
constexpr std::size_t DescripOffset = 148;
constexpr std::size_t DescripSize = 80;
constexpr std::size_t QformCodeOffset = 252;
constexpr std::size_t SformCodeOffset = 254;
constexpr std::size_t MagicOffset = 344;
constexpr unsigned char SpaceUnitBits = 0x07, TimeUnitBits = 0x38;

using Header = std::array<unsigned char, HeaderSize>;

/** True when `header` is NIfTI-1; `swapped` says whether its byte order is not this machine's. */
bool
IsNifti1(const Header & header, bool & swapped)
{
  std::int32_t size = 0;
  std::memcpy(&size, header.data(), sizeof(size));
  const bool magic = std::memcmp(header.data() + MagicOffset, "n+1", 4) == 0 ||
                     std::memcmp(header.data() + MagicOffset, "ni1", 4) == 0;
  swapped = size != static_cast<std::int32_t>(HeaderSize);
  return magic && (size == static_cast<std::int32_t>(HeaderSize) || __builtin_bswap32(size) == HeaderSize);
}

short
ReadShort(const Header & header, std::size_t offset, bool swapped)
{
  std::uint16_t value = 0;
  std::memcpy(&value, header.data() + offset, sizeof(value));
  return static_cast<short>(swapped ? __builtin_bswap16(value) : value);
}

void
WriteShort(Header & header, std::size_t offset, short value, bool swapped)
{
  std::uint16_t bits = static_cast<std::uint16_t>(value);
  bits = swapped ? __builtin_bswap16(bits) : bits;
  std::memcpy(header.data() + offset, &bits, sizeof(bits));
}

void
Patch(Header & header, const NiftiHeaderFields & fields, const std::string & path)
{
  bool swapped = false;
  if (!IsNifti1(header, swapped))
  {
    throw std::runtime_error("'" + path + "' is not a NIfTI-1 file: its header cannot be completed");
  }
  WriteShort(header, QformCodeOffset, fields.qformCode, swapped);
  WriteShort(header, SformCodeOffset, fields.sformCode, swapped);
  std::fill_n(header.data() + DescripOffset, DescripSize, 0);
  std::memcpy(header.data() + DescripOffset, fields.description.data(),
              std::min(fields.description.size(), DescripSize - 1));
  header[XyztUnitsOffset] = static_cast<unsigned char>((header[XyztUnitsOffset] & SpaceUnitBits) |
                                                       (fields.timeUnits & TimeUnitBits));
}

bool
EndsWithGz(const std::string & path)
{
  return path.size() > 3 && (path.compare(path.size() - 3, 3, ".gz") == 0 || path.compare(path.size() - 3, 3, ".GZ") == 0);
}

} // namespace

std::optional<NiftiHeaderFields>
ReadNiftiHeaderFields(const std::string & path)
{
  gzFile file = gzopen(path.c_str(), "rb"); // reads plain files as they are
  if (file == nullptr)
  {
    return std::nullopt;
  }
  Header    header{};
  const int read = gzread(file, header.data(), static_cast<unsigned>(HeaderSize));
  gzclose(file);
  bool swapped = false;
  if (read != static_cast<int>(HeaderSize) || !IsNifti1(header, swapped))
  {
    return std::nullopt;
  }
  NiftiHeaderFields fields;
  fields.qformCode = ReadShort(header, QformCodeOffset, swapped);
  fields.sformCode = ReadShort(header, SformCodeOffset, swapped);
  const char * descrip = reinterpret_cast<const char *>(header.data() + DescripOffset);
  fields.description.assign(descrip, strnlen(descrip, DescripSize));
  fields.timeUnits = header[XyztUnitsOffset] & TimeUnitBits;
  return fields;
}

void
WriteNiftiHeaderFields(const std::string & path, const NiftiHeaderFields & fields, int compressionLevel)
{
  if (!EndsWithGz(path))
  {
    std::fstream file(path, std::ios::binary | std::ios::in | std::ios::out);
    Header       header{};
    file.read(reinterpret_cast<char *>(header.data()), HeaderSize);
    if (!file)
    {
      throw std::runtime_error("cannot read the header of '" + path + "'");
    }
    Patch(header, fields, path);
    file.seekp(0);
    file.write(reinterpret_cast<const char *>(header.data()), HeaderSize);
    file.flush();
    if (!file)
    {
      throw std::runtime_error("cannot write the header of '" + path + "'");
    }
    return;
  }
  // gzip has no room to edit in place: the file is streamed into a sibling with the header changed, which then
  // replaces it (the caller's file is itself a temporary name until it is renamed into place).
  const std::string rewritten = path + ".header";
  const std::string mode = compressionLevel > 0 ? "wb" + std::to_string(std::min(compressionLevel, 9)) : "wb";
  gzFile            in = gzopen(path.c_str(), "rb");
  gzFile            out = in != nullptr ? gzopen(rewritten.c_str(), mode.c_str()) : nullptr;
  bool              good = in != nullptr && out != nullptr;
  if (good)
  {
    Header header{};
    good = gzread(in, header.data(), static_cast<unsigned>(HeaderSize)) == static_cast<int>(HeaderSize);
    bool swapped = false; // Patch() reads the byte order again
    if (good && IsNifti1(header, swapped))
    {
      Patch(header, fields, path);
      good = gzwrite(out, header.data(), static_cast<unsigned>(HeaderSize)) == static_cast<int>(HeaderSize);
    }
    else
    {
      good = false;
    }
    std::vector<unsigned char> buffer(1 << 20);
    int                        count = 0;
    while (good && (count = gzread(in, buffer.data(), static_cast<unsigned>(buffer.size()))) > 0)
    {
      good = gzwrite(out, buffer.data(), static_cast<unsigned>(count)) == count;
    }
    good = good && count == 0;
  }
  if (in != nullptr)
  {
    gzclose(in);
  }
  if (out != nullptr && gzclose(out) != Z_OK)
  {
    good = false;
  }
  if (!good || std::rename(rewritten.c_str(), path.c_str()) != 0)
  {
    std::remove(rewritten.c_str());
    throw std::runtime_error("cannot rewrite '" + path + "' with the input's NIfTI header fields");
  }
}

} // namespace svdlr_tools
