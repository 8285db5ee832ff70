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

// What the benchmark programs share: raw little-endian arrays in and out, their options' values, and repeated
// timings with their JSON.

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <sstream>
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

/** The value after argv[i] (i moves onto it); `usage(OPTION + " needs a value")` where there is none. */
template <typename UsageFunction>
std::string
NextValue(int argc, char * argv[], int & i, UsageFunction usage)
{
  if (i + 1 >= argc)
  {
    usage(std::string(argv[i]) + " needs a value");
  }
  return argv[++i];
}

/** `"median_UNIT": m, ["min_UNIT": n, ]"times_UNIT": [t, ...]`: the timings in a program's JSON line. */
inline std::string
JsonTimes(const std::vector<double> & times, const std::string & unit, bool withMinimum)
{
  std::ostringstream json;
  json << "\"median_" << unit << "\": " << Median(times);
  if (withMinimum)
  {
    json << ", \"min_" << unit << "\": " << *std::min_element(times.begin(), times.end());
  }
  json << ", \"times_" << unit << "\": [";
  for (std::size_t i = 0; i < times.size(); ++i)
  {
    json << (i ? ", " : "") << times[i];
  }
  json << "]";
  return json.str();
}

} // namespace svdlr_bench

#endif
