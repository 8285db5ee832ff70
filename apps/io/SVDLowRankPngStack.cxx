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
#include "SVDLowRankPngStack.h"
#include "SVDLowRankReadableFile.h"

#include "itkImageIOFactory.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace svdlr_io
{
namespace
{
bool
IsDigit(char c)
{
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}
} // namespace

bool
NaturalLess(const std::string & a, const std::string & b)
{
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size())
  {
    if (IsDigit(a[i]) && IsDigit(b[j]))
    {
      // Compare the numbers by value: skip leading zeros, then the longer run is larger.
      std::size_t endA = i, endB = j;
      while (endA < a.size() && IsDigit(a[endA]))
        ++endA;
      while (endB < b.size() && IsDigit(b[endB]))
        ++endB;
      std::size_t startA = i, startB = j;
      while (startA + 1 < endA && a[startA] == '0')
        ++startA;
      while (startB + 1 < endB && b[startB] == '0')
        ++startB;
      if (endA - startA != endB - startB)
      {
        return endA - startA < endB - startB;
      }
      const int order = a.compare(startA, endA - startA, b, startB, endB - startB);
      if (order != 0)
      {
        return order < 0;
      }
      i = endA;
      j = endB;
      continue;
    }
    const int ca = std::tolower(static_cast<unsigned char>(a[i]));
    const int cb = std::tolower(static_cast<unsigned char>(b[j]));
    if (ca != cb)
    {
      return ca < cb;
    }
    ++i;
    ++j;
  }
  if (a.size() - i != b.size() - j)
  {
    return a.size() - i < b.size() - j;
  }
  return a < b;
}

std::vector<std::string>
FindPngSlices(const std::string & directory)
{
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  std::error_code          error;
  for (const auto & entry : fs::directory_iterator(directory, error))
  {
    if (LowerCase(entry.path().extension().string()) == ".png" && entry.is_regular_file(error))
    {
      names.push_back(entry.path().filename().string());
    }
  }
  if (error)
  {
    throw PngStackError(directory + ": cannot be listed: " + error.message());
  }
  std::sort(names.begin(), names.end(), NaturalLess);
  for (auto & name : names)
  {
    name = (fs::path(directory) / name).string();
  }
  return names;
}

itk::IOComponentEnum
PngStackComponentType(const std::vector<std::string> & files)
{
  if (files.empty())
  {
    throw PngStackError("no PNG slices found");
  }
  CheckPngFile(files.front());
  auto io = itk::ImageIOFactory::CreateImageIO(files.front().c_str(), itk::ImageIOFactory::IOFileModeEnum::ReadMode);
  if (const auto why = WhyHeaderUnreadable(io, files.front()))
  {
    throw PngStackError(files.front() + (io ? ": cannot be read as PNG: " : ": ") + *why);
  }
  if (io->GetNumberOfComponents() != 1)
  {
    throw PngStackError(files.front() + ": has " + std::to_string(io->GetNumberOfComponents()) +
                        " channels per pixel; only grey slices are supported");
  }
  return io->GetComponentType();
}

} // namespace svdlr_io
