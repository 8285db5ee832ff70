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
#ifndef svdlrBenchmarkIO_h
#define svdlrBenchmarkIO_h

// What the benchmark programs share: raw little-endian arrays in and out, and the median of repeated timings.

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace svdlr_bench
{

template <typename T>
std::vector<T>
ReadRaw(const std::string & path, std::size_t count)
{
  std::vector<T> values(count);
  std::ifstream  file(path, std::ios::binary);
  if (!file.read(reinterpret_cast<char *>(values.data()), static_cast<std::streamsize>(count * sizeof(T))))
  {
    throw std::runtime_error("cannot read " + std::to_string(count * sizeof(T)) + " bytes from " + path);
  }
  return values;
}

template <typename T>
void
WriteRaw(const std::string & path, const std::vector<T> & values)
{
  std::ofstream file(path, std::ios::binary);
  if (!file.write(reinterpret_cast<const char *>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(T))))
  {
    throw std::runtime_error("cannot write " + path);
  }
}

inline double
Median(std::vector<double> values)
{
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

} // namespace svdlr_bench

#endif
