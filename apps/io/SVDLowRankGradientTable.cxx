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
#include "SVDLowRankGradientTable.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace svdlr_io
{
namespace
{

bool
IsFile(const std::string & path)
{
  std::error_code error;
  return std::filesystem::is_regular_file(path, error);
}

/** The word as a finite number, or false. */
bool
ParseNumber(const std::string & word, double & value)
{
  char * end = nullptr;
  value = std::strtod(word.c_str(), &end);
  return end != word.c_str() && *end == '\0' && std::isfinite(value);
}

std::ifstream
OpenTable(const std::string & path, const char * what)
{
  std::ifstream file(path);
  if (!file)
  {
    throw BadGradientTable(std::string("cannot read the ") + what + " '" + path + "'");
  }
  return file;
}

/** The number of directions (columns) of an FSL/BIDS .bvec file: 3 rows (x, y, z) of as many finite numbers each.
 * BadGradientTable, naming the file and what it holds, otherwise. */
std::size_t
ReadBVectorCount(const std::string & path)
{
  std::ifstream            file = OpenTable(path, "gradient directions");
  std::vector<std::size_t> rows; // the numbers on each line that holds any
  std::string              line;
  while (std::getline(file, line))
  {
    std::istringstream words(line);
    std::string        word;
    double             value = 0.0;
    std::size_t        count = 0;
    while (words >> word)
    {
      if (!ParseNumber(word, value))
      {
        throw BadGradientTable("the gradient directions '" + path + "' hold '" + word + "': not a finite number");
      }
      ++count;
    }
    if (count > 0)
    {
      rows.push_back(count);
    }
  }
  if (rows.size() != 3)
  {
    throw BadGradientTable("the gradient directions '" + path + "' hold " + std::to_string(rows.size()) +
                           " rows: an FSL/BIDS .bvec holds 3 (x, y, z), each with one value per volume");
  }
  for (std::size_t row = 1; row < 3; ++row)
  {
    if (rows[row] != rows[0])
    {
      throw BadGradientTable("the gradient directions '" + path + "' hold rows of " + std::to_string(rows[0]) +
                             " and " + std::to_string(rows[row]) + " values: x, y and z need one value per volume");
    }
  }
  return rows[0];
}

} // namespace

std::string
SeriesStem(const std::string & series)
{
  for (const char * extension : { ".nii.gz", ".nii", ".mha", ".mhd", ".nrrd" })
  {
    const std::size_t length = std::strlen(extension);
    if (series.size() > length && series.compare(series.size() - length, length, extension) == 0)
    {
      return series.substr(0, series.size() - length);
    }
  }
  return series;
}

GradientTableFiles
GradientTableBeside(const std::string & series)
{
  const std::string  stem = SeriesStem(series);
  GradientTableFiles files{ stem + ".bval", stem + ".bvec" };
  files.bval = IsFile(files.bval) ? files.bval : std::string();
  files.bvec = IsFile(files.bvec) ? files.bvec : std::string();
  return files;
}

std::vector<double>
ReadBValues(const std::string & path)
{
  std::ifstream       file = OpenTable(path, "b-values");
  std::vector<double> values;
  std::string         word;
  double              value = 0.0;
  while (file >> word)
  {
    if (!ParseNumber(word, value) || value < 0.0)
    {
      throw BadGradientTable("the b-values '" + path + "' hold '" + word + "': b-values are numbers >= 0");
    }
    values.push_back(value);
  }
  return values;
}

void
CheckGradientTable(const GradientTableFiles & files, std::size_t volumes, const std::string & series)
{
  const std::string of = " for the " + std::to_string(volumes) + " volumes of '" + series + "'";
  if (!files.bval.empty())
  {
    const std::size_t count = ReadBValues(files.bval).size();
    if (count != volumes)
    {
      throw BadGradientTable("the b-values '" + files.bval + "' hold " + std::to_string(count) + " values" + of);
    }
  }
  if (!files.bvec.empty())
  {
    const std::size_t count = ReadBVectorCount(files.bvec);
    if (count != volumes)
    {
      throw BadGradientTable("the gradient directions '" + files.bvec + "' hold " + std::to_string(count) +
                             " directions" + of);
    }
  }
}

} // namespace svdlr_io
