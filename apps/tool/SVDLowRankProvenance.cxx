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
#include "SVDLowRankProvenance.h"

#include "SVDLowRankStagedOutput.h"
#include "svdlrBuildInfo.h" // SVDLR_VERSION, SVDLR_GIT_DESCRIBE: generated at build time (apps/CMakeLists.txt)

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <iomanip>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace svdlr_tools
{
namespace
{
namespace fs = std::filesystem;

/** SHA-256 (FIPS 180-4), fed in pieces. The sidecar names its inputs by content, so that a reader can tell whether
 * a file is the one that was processed; no library the module already links offers it. */
class Sha256
{
public:
  void
  Add(const unsigned char * data, std::size_t size)
  {
    m_Length += size;
    while (size > 0)
    {
      const std::size_t take = std::min(size, m_Block.size() - m_Filled);
      std::copy(data, data + take, m_Block.begin() + m_Filled);
      m_Filled += take;
      data += take;
      size -= take;
      if (m_Filled == m_Block.size())
      {
        Compress();
        m_Filled = 0;
      }
    }
  }

  std::string
  Hex()
  {
    const std::uint64_t bits = m_Length * 8;
    const unsigned char one = 0x80, zero = 0;
    Add(&one, 1);
    while (m_Filled != 56)
    {
      Add(&zero, 1);
    }
    unsigned char length[8];
    for (int i = 0; i < 8; ++i)
    {
      length[i] = static_cast<unsigned char>(bits >> (56 - 8 * i));
    }
    Add(length, 8);
    std::ostringstream hex;
    for (std::uint32_t word : m_State)
    {
      hex << std::hex << std::setw(8) << std::setfill('0') << word;
    }
    return hex.str();
  }

private:
  static std::uint32_t
  Rotate(std::uint32_t x, int n)
  {
    return (x >> n) | (x << (32 - n));
  }

  void
  Compress()
  {
    static constexpr std::uint32_t K[64] = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
      0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
      0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
      0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
      0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
      0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
      0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
      0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
    };
    std::uint32_t w[64];
    for (int i = 0; i < 16; ++i)
    {
      w[i] = (std::uint32_t(m_Block[4 * i]) << 24) | (std::uint32_t(m_Block[4 * i + 1]) << 16) |
             (std::uint32_t(m_Block[4 * i + 2]) << 8) | std::uint32_t(m_Block[4 * i + 3]);
    }
    for (int i = 16; i < 64; ++i)
    {
      const std::uint32_t s0 = Rotate(w[i - 15], 7) ^ Rotate(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const std::uint32_t s1 = Rotate(w[i - 2], 17) ^ Rotate(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    std::array<std::uint32_t, 8> v = m_State; // a, b, c, d, e, f, g, h
    for (int i = 0; i < 64; ++i)
    {
      const std::uint32_t s1 = Rotate(v[4], 6) ^ Rotate(v[4], 11) ^ Rotate(v[4], 25);
      const std::uint32_t choose = (v[4] & v[5]) ^ (~v[4] & v[6]);
      const std::uint32_t t1 = v[7] + s1 + choose + K[i] + w[i];
      const std::uint32_t s0 = Rotate(v[0], 2) ^ Rotate(v[0], 13) ^ Rotate(v[0], 22);
      const std::uint32_t majority = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
      std::rotate(v.rbegin(), v.rbegin() + 1, v.rend()); // h = g, g = f, ..., b = a
      v[4] += t1;
      v[0] = t1 + s0 + majority;
    }
    for (int i = 0; i < 8; ++i)
    {
      m_State[i] += v[i];
    }
  }

  std::array<std::uint32_t, 8> m_State{ { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c,
                                          0x1f83d9ab, 0x5be0cd19 } };
  std::array<unsigned char, 64> m_Block{};
  std::size_t                   m_Filled{ 0 };
  std::uint64_t                 m_Length{ 0 };
};

void
AddFile(Sha256 & hash, const fs::path & file)
{
  std::ifstream stream(file, std::ios::binary);
  if (!stream)
  {
    throw std::runtime_error("cannot read '" + file.string() + "' to checksum it");
  }
  std::vector<char> buffer(1 << 20);
  while (stream)
  {
    stream.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    hash.Add(reinterpret_cast<const unsigned char *>(buffer.data()), static_cast<std::size_t>(stream.gcount()));
  }
}

/** `{ "min": .., "median": .., "max": .., "count": .. }` of the finite values; `{ "min": .., "max": .. }` of
 * `range` when there are no values but a finite range; null otherwise. */
std::string
SummaryJson(const std::vector<double> & values, const std::optional<std::pair<double, double>> & range)
{
  if (values.empty() && range && std::isfinite(range->first) && std::isfinite(range->second))
  {
    return "{ \"min\": " + JsonNumber(range->first) + ", \"max\": " + JsonNumber(range->second) + " }";
  }
  std::vector<double> finite;
  std::copy_if(values.begin(), values.end(), std::back_inserter(finite), [](double v) { return std::isfinite(v); });
  if (finite.empty())
  {
    return "null";
  }
  const auto [low, high] = std::minmax_element(finite.begin(), finite.end());
  const double lowest = *low, highest = *high;
  std::nth_element(finite.begin(), finite.begin() + finite.size() / 2, finite.end());
  return "{ \"min\": " + JsonNumber(lowest) + ", \"median\": " + JsonNumber(finite[finite.size() / 2]) +
         ", \"max\": " + JsonNumber(highest) + ", \"count\": " + std::to_string(finite.size()) + " }";
}

std::string
JsonArray(const std::vector<std::string> & items, const std::string & indent)
{
  std::string text = "[";
  for (std::size_t i = 0; i < items.size(); ++i)
  {
    text += (i == 0 ? "\n" : ",\n") + indent + "  " + items[i];
  }
  return text + (items.empty() ? "]" : "\n" + indent + "]");
}

} // namespace

std::string
JsonString(const std::string & text)
{
  std::ostringstream out;
  out << '"';
  for (unsigned char c : text)
  {
    if (c == '"' || c == '\\')
    {
      out << '\\' << c;
    }
    else if (c == '\n')
    {
      out << "\\n";
    }
    else if (c < 0x20)
    {
      out << "\\u" << std::hex << std::setw(4) << std::setfill('0') << static_cast<int>(c) << std::dec;
    }
    else
    {
      out << c;
    }
  }
  out << '"';
  return out.str();
}

std::string
JsonNumber(double value)
{
  if (!std::isfinite(value))
  {
    return "null";
  }
  std::ostringstream out;
  out << std::setprecision(std::numeric_limits<double>::max_digits10 - 2) << value;
  return out.str();
}

namespace
{
std::mutex &
StartedMutex()
{
  static std::mutex mutex;
  return mutex;
}

/** The checksums StartSha256Of started, by path. */
std::map<std::string, std::shared_future<std::string>> &
StartedSha256()
{
  static std::map<std::string, std::shared_future<std::string>> started;
  return started;
}

std::string
ComputeSha256(const std::string & path);
} // namespace

void
StartSha256Of(const std::vector<std::string> & paths)
{
  std::lock_guard<std::mutex> lock(StartedMutex());
  for (const std::string & path : paths)
  {
    if (!path.empty() && StartedSha256().count(path) == 0)
    {
      StartedSha256()[path] = std::async(std::launch::async, ComputeSha256, path).share();
    }
  }
}

std::string
Sha256Of(const std::string & path)
{
  std::shared_future<std::string> started;
  {
    std::lock_guard<std::mutex> lock(StartedMutex());
    const auto                  it = StartedSha256().find(path);
    if (it != StartedSha256().end())
    {
      started = it->second;
    }
  }
  return started.valid() ? started.get() : ComputeSha256(path); // get() rethrows what the thread threw
}

namespace
{
std::string
ComputeSha256(const std::string & path)
{
  Sha256 hash;
  if (fs::is_directory(path))
  {
    std::vector<fs::path> files;
    for (const auto & entry : fs::recursive_directory_iterator(path))
    {
      if (entry.is_regular_file())
      {
        files.push_back(entry.path());
      }
    }
    std::sort(files.begin(), files.end());
    for (const auto & file : files)
    {
      const std::string name = file.lexically_relative(path).generic_string();
      hash.Add(reinterpret_cast<const unsigned char *>(name.c_str()), name.size() + 1); // with its '\0'
      AddFile(hash, file);
    }
  }
  else
  {
    AddFile(hash, path);
  }
  return hash.Hex();
}
} // namespace

std::string
UtcNow()
{
  const std::time_t now = std::time(nullptr);
  std::tm           utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

namespace
{
struct RunStart
{
  std::chrono::steady_clock::time_point time{ std::chrono::steady_clock::now() };
  std::string                           utc{ UtcNow() };
};
const RunStart &
TheRunStart()
{
  static const RunStart start;
  return start;
}
} // namespace

const std::string &
RunStartedUtc()
{
  return TheRunStart().utc;
}

double
SecondsSinceRunStart()
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - TheRunStart().time).count();
}

bool
IsNiftiPath(const std::string & path)
{
  std::string lower = path;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  const auto endsWith = [&lower](const std::string & end) {
    return lower.size() >= end.size() && lower.compare(lower.size() - end.size(), end.size(), end) == 0;
  };
  return endsWith(".nii") || endsWith(".nii.gz");
}

std::string
SidecarPathFor(const std::string & imagePath)
{
  std::string stem = imagePath;
  for (const std::string end : { ".gz", ".nii" })
  {
    if (stem.size() >= end.size() && std::equal(end.rbegin(), end.rend(), stem.rbegin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
        }))
    {
      stem.resize(stem.size() - end.size());
    }
  }
  return stem + ".json";
}

void
WriteTextAtomically(const std::string & text, const std::string & path)
{
  // Replaces a sidecar there: it belongs to its image, whose own write decided whether an output may be replaced.
  svdlr_io::WriteFileAtomically(path, true, [&text](const std::string & temporary) {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file << text;
    file.flush();
    if (!file)
    {
      throw std::runtime_error("cannot write '" + temporary + "'");
    }
  });
}

std::string
ProvenanceJson(const Provenance & provenance)
{
  std::vector<std::string> commandLine, inputs, outputs;
  for (const std::string & word : provenance.commandLine)
  {
    commandLine.push_back(JsonString(word));
  }
  std::string parameterText = "{";
  for (std::size_t i = 0; i < provenance.parameters.size(); ++i)
  {
    parameterText += std::string(i == 0 ? "\n" : ",\n") + "    " + JsonString(provenance.parameters[i].first) +
                     ": " + provenance.parameters[i].second;
  }
  parameterText += provenance.parameters.empty() ? "}" : "\n  }";
  for (const std::string & input : provenance.inputs)
  {
    inputs.push_back("{ \"path\": " + JsonString(input) + ", \"sha256\": " + JsonString(Sha256Of(input)) + " }");
  }
  for (const std::string & output : provenance.outputs)
  {
    outputs.push_back(JsonString(output));
  }
  std::ostringstream json;
  json << "{\n"
       << "  \"tool\": " << JsonString(provenance.tool) << ",\n"
       << "  \"version\": " << JsonString(SVDLR_VERSION) << ",\n"
       << "  \"gitDescribe\": " << JsonString(SVDLR_GIT_DESCRIBE) << ",\n"
       << "  \"commandLine\": " << JsonArray(commandLine, "  ") << ",\n"
       << "  \"parameters\": " << parameterText << ",\n"
       << "  \"inputs\": " << JsonArray(inputs, "  ") << ",\n"
       << "  \"outputs\": " << JsonArray(outputs, "  ") << ",\n"
       << "  \"rank\": " << SummaryJson(provenance.ranks, provenance.rankRange) << ",\n"
       << "  \"sigma\": " << SummaryJson(provenance.sigmas, provenance.sigmaRange) << ",\n"
       << "  \"backend\": " << JsonString(provenance.backend) << ",\n"
       << "  \"solver\": " << (provenance.solver.empty() ? "null" : JsonString(provenance.solver)) << ",\n"
       << "  \"device\": " << (provenance.device >= 0 ? std::to_string(provenance.device) : "null") << ",\n"
       << "  \"notes\": " << JsonString(provenance.notes) << ",\n"
       << "  \"started\": " << JsonString(provenance.started) << ",\n"
       << "  \"seconds\": " << JsonNumber(provenance.seconds) << "\n"
       << "}\n";
  return json.str();
}

} // namespace svdlr_tools
