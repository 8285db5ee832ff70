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
#include "SVDLowRankImageFileCheck.h"
#include "SVDLowRankNiftiHeaderRead.h"

#include "SVDLowRankGzip.h"
#include "SVDLowRankGzipFile.h"
#include "SVDLowRankNiftiBytes.h"
#include "SVDLowRankNiftiFormat.h"
#include "SVDLowRankReadableFile.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

namespace svdlr_io
{
namespace
{
namespace fs = std::filesystem;

std::uint64_t
FileSize(const std::string & path)
{
  std::error_code error;
  const auto      size = fs::file_size(path, error);
  return error ? 0 : static_cast<std::uint64_t>(size);
}

/** A gzip stream ends with its uncompressed size modulo 2^32 (RFC 1952, ISIZE): a stream cut short ends in other
 * bytes, which match only by chance. */
bool
GzipTrailerMatches(const std::string & path, std::uint64_t expectedBytes)
{
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  const auto    size = static_cast<std::int64_t>(file.tellg());
  if (size < 18)
  {
    return false;
  }
  file.seekg(size - 4);
  unsigned char trailer[4] = {};
  file.read(reinterpret_cast<char *>(trailer), 4);
  const std::uint32_t stored = static_cast<std::uint32_t>(trailer[0]) | static_cast<std::uint32_t>(trailer[1]) << 8 |
                               static_cast<std::uint32_t>(trailer[2]) << 16 |
                               static_cast<std::uint32_t>(trailer[3]) << 24;
  // The size rule (SVDLowRankGzip.h): a member of at least expectedBytes with this ISIZE holds exactly that many.
  return GzipMemberSize(stored, expectedBytes) == expectedBytes;
}

/** The data `required` bytes long that starts at `offset` (a header's end) must be present: for a plain file its
 * size tells, for a gzip stream its trailer, else (or when the trailer disagrees) the stream decompressed whole. */
void
CheckDataPresent(const std::string & path,
                 std::uint64_t       offset,
                 std::uint64_t       required,
                 bool                offsetIsInStream,
                 std::uint64_t       mostBytes = UINT64_MAX)
{
  // offsetIsInStream: the header is part of the compressed stream (NIfTI), so the stream must hold offset + required.
  const std::uint64_t streamStart = offsetIsInStream ? 0 : offset;
  const std::uint64_t needed = offsetIsInStream && offset > UINT64_MAX - required ? UINT64_MAX
                               : offsetIsInStream                                 ? offset + required
                                                                                  : required;
  if (!IsGzipAt(path, streamStart))
  {
    const std::uint64_t size = FileSize(path);
    const std::uint64_t present = size > streamStart ? size - streamStart : 0;
    if (present < needed)
    {
      ThrowMissingData(path, needed, present, "pixel data");
    }
    return;
  }
  if (GzipTrailerMatches(path, needed))
  {
    return;
  }
  // The trailer disagrees: the stream decoded (and dropped) to see whether it is cut short, corrupt, or holds the data
  // in several members (the last trailer gives only the last member's size).
  std::ifstream                    file(path, std::ios::binary);
  const std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const std::size_t                start = static_cast<std::size_t>(std::min<std::uint64_t>(streamStart, bytes.size()));
  CheckGzipOutcome(path, CheckGzipStream(bytes.data() + start, bytes.size() - start, mostBytes), needed, mostBytes);
}

bool
CheckNifti(const std::string & path, ImageFileScan scan)
{
  if (scan != ImageFileScan::Structure)
  {
    // Decompressed once, checked, and kept for the read that follows when there is one.
    auto file = LoadNiftiFile(path);
    if (file)
    {
      CheckNiftiValues(*file, path);
      if (scan == ImageFileScan::ValuesForRead)
      {
        KeepForRead(path, std::make_shared<const NiftiFileBytes>(std::move(*file)));
      }
    }
    return file.has_value();
  }
  CheckReadableFile(path); // LoadNiftiFile above checks it as it opens the file
  const auto header = ReadNiftiHeader(path);
  if (header && header->singleFile)
  {
    CheckDataPresent(path, header->voxOffset, header->DataBytes(), true, MostNiftiStreamBytes(*header));
  }
  return false;
}

/** The text header of an MHA or NRRD file as key -> value, and where the data after it starts. */
struct TextHeader
{
  std::map<std::string, std::string> fields;
  std::uint64_t                      end{ 0 };
};

std::string
Trim(const std::string & text)
{
  const auto first = text.find_first_not_of(" \t\r");
  const auto last = text.find_last_not_of(" \t\r");
  return first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
}

std::uint64_t
ProductOf(const std::string & numbers)
{
  std::istringstream in(numbers);
  std::uint64_t      product = 1;
  long long          value = 0;
  bool               any = false;
  while (in >> value)
  {
    if (value < 0)
    {
      return 0;
    }
    product = SaturatingTimes(product, static_cast<std::uint64_t>(value));
    any = true;
  }
  return any ? product : 0;
}

/** MetaImage (.mha, .mhd): "Key = Value" lines up to ElementDataFile; the data is LOCAL (after the header) or in
 * one named file. Element lists, file patterns, headers of a given size and compressed data of no stated size
 * are left to ITK. */
void
CheckMetaImage(const std::string & path)
{
  std::ifstream file(path, std::ios::binary);
  TextHeader    header;
  std::string   line;
  while (std::getline(file, line) && header.fields.size() < 64)
  {
    const auto equals = line.find('=');
    if (equals == std::string::npos)
    {
      return;
    }
    const std::string key = Trim(line.substr(0, equals));
    header.fields[key] = Trim(line.substr(equals + 1));
    if (key == "ElementDataFile")
    {
      header.end = static_cast<std::uint64_t>(file.tellg());
      break;
    }
  }
  const auto field = [&](const char * key) {
    const auto it = header.fields.find(key);
    return it == header.fields.end() ? std::string() : it->second;
  };
  const std::string dataFile = field("ElementDataFile");
  if (dataFile.empty() || !field("HeaderSize").empty())
  {
    return;
  }
  static const std::map<std::string, std::uint64_t> elementBytes = {
    { "MET_CHAR", 1 },   { "MET_UCHAR", 1 },     { "MET_SHORT", 2 },      { "MET_USHORT", 2 },
    { "MET_INT", 4 },    { "MET_UINT", 4 },      { "MET_FLOAT", 4 },      { "MET_DOUBLE", 8 },
    { "MET_LONG", 4 },   { "MET_ULONG", 4 },     { "MET_LONG_LONG", 8 },  { "MET_ULONG_LONG", 8 }
  };
  const auto type = elementBytes.find(field("ElementType"));
  if (type == elementBytes.end())
  {
    return;
  }
  const std::string   channels = field("ElementNumberOfChannels");
  const std::uint64_t required = SaturatingTimes(SaturatingTimes(ProductOf(field("DimSize")), type->second),
                                                 channels.empty() ? 1 : ProductOf(channels));
  std::string dataPath = path;
  std::uint64_t offset = header.end;
  if (dataFile != "LOCAL")
  {
    if (dataFile.find_first_of(" %") != std::string::npos || dataFile == "LIST")
    {
      return;
    }
    dataPath = (fs::path(path).parent_path() / dataFile).string();
    offset = 0;
  }
  const bool          compressed = LowerCase(field("CompressedData")) == "true";
  const std::string   compressedSize = field("CompressedDataSize");
  const std::uint64_t size = FileSize(dataPath);
  const std::uint64_t present = size > offset ? size - offset : 0;
  if (compressed)
  {
    const std::uint64_t stated = compressedSize.empty() ? 0 : ProductOf(compressedSize);
    if (stated > 0 && present < stated)
    {
      ThrowMissingData(path, stated, present, "compressed data", dataPath == path ? std::string() : dataPath);
    }
    return;
  }
  if (present < required)
  {
    ThrowMissingData(path, required, present, "pixel data", dataPath == path ? std::string() : dataPath);
  }
}

/** NRRD: "field: value" lines up to a blank line, then the data (raw or gzip) unless a data file is named. */
void
CheckNrrd(const std::string & path)
{
  std::ifstream file(path, std::ios::binary);
  std::string   line;
  if (!std::getline(file, line) || line.rfind("NRRD000", 0) != 0)
  {
    return;
  }
  TextHeader header;
  while (std::getline(file, line))
  {
    if (Trim(line).empty())
    {
      header.end = static_cast<std::uint64_t>(file.tellg());
      break;
    }
    const auto colon = line.find(": ");
    if (line[0] != '#' && colon != std::string::npos && line.find(":=") == std::string::npos)
    {
      header.fields[LowerCase(Trim(line.substr(0, colon)))] = Trim(line.substr(colon + 2));
    }
  }
  const auto field = [&](const char * key) {
    const auto it = header.fields.find(key);
    return it == header.fields.end() ? std::string() : it->second;
  };
  if (header.end == 0 || !field("data file").empty() || !field("datafile").empty() ||
      (!field("byte skip").empty() && field("byte skip") != "0") ||
      (!field("line skip").empty() && field("line skip") != "0"))
  {
    return;
  }
  const std::string type = LowerCase(field("type"));
  std::uint64_t     bytes = 0;
  if (type.find("char") != std::string::npos || type.find("int8") != std::string::npos)
    bytes = 1;
  else if (type.find("short") != std::string::npos || type.find("int16") != std::string::npos)
    bytes = 2;
  else if (type.find("long") != std::string::npos || type.find("int64") != std::string::npos)
    bytes = 8;
  else if (type.find("int") != std::string::npos || type == "float")
    bytes = 4;
  else if (type == "double")
    bytes = 8;
  const std::string encoding = LowerCase(field("encoding"));
  if (bytes == 0 || (encoding != "raw" && encoding != "gzip" && encoding != "gz"))
  {
    return;
  }
  CheckDataPresent(path, header.end, SaturatingTimes(ProductOf(field("sizes")), bytes), false);
}

} // namespace

void
ThrowMissingData(const std::string & path,
                 std::uint64_t       expected,
                 std::uint64_t       present,
                 const char *        what,
                 const std::string & dataFile,
                 const std::string & why)
{
  std::ostringstream message;
  message << "'" << path << "' is truncated: ";
  if (!why.empty())
  {
    message << why << "; ";
  }
  message << (expected - present) << " bytes of " << what << " are missing ";
  if (!dataFile.empty())
  {
    message << "from its data file '" << dataFile << "' ";
  }
  message << "(the header needs " << expected << ", the " << (why.empty() ? "file" : "stream") << " holds " << present
          << ")";
  throw IncompleteImageFile(message.str());
}

void
CheckGzipOutcome(const std::string & path, const GunzipCheck & outcome, std::uint64_t needed, std::uint64_t most)
{
  if (outcome.status == GunzipStatus::TooLong)
  {
    std::ostringstream message;
    message << "'" << path
            << "' holds more data than its header declares: it decompresses to "
               "more than "
            << most << " bytes, where the header declares " << needed << " (a NIfTI file ends with its voxels; "
            << (most - needed) << " bytes more are allowed)";
    throw InvalidImageFile(message.str());
  }
  if (outcome.status == GunzipStatus::Corrupt)
  {
    throw CorruptImageFile("'" + path + "' is corrupt: " + outcome.problem);
  }
  if (outcome.status == GunzipStatus::Truncated && outcome.bytes >= needed)
  {
    throw IncompleteImageFile("'" + path + "' is truncated: its gzip stream ends before its trailer (the CRC-32 and "
                              "size that verify its data)");
  }
  if (outcome.bytes < needed)
  {
    ThrowMissingData(path,
                     needed,
                     outcome.bytes,
                     "decompressed data",
                     {},
                     outcome.status == GunzipStatus::Truncated ? "its compressed stream ends early" : "");
  }
}

std::uint64_t
MostBytesInFile(const std::string & path)
{
  const std::uint64_t size = FileSize(path);
  return IsGzipAt(path, 0) ? MostDecompressedBytes(static_cast<std::size_t>(size)) : size;
}

bool
CheckImageFile(const std::string & path, ImageFileScan scan)
{
  if (EndsWithNoCase(path, ".nii") || EndsWithNoCase(path, ".nii.gz"))
  {
    return CheckNifti(path, scan);
  }
  CheckReadableFile(path);
  if (EndsWithNoCase(path, ".mha") || EndsWithNoCase(path, ".mhd"))
  {
    CheckMetaImage(path);
  }
  else if (EndsWithNoCase(path, ".nrrd"))
  {
    CheckNrrd(path);
  }
  return false;
}

} // namespace svdlr_io
