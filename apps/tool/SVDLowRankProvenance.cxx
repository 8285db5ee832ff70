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

#include "SVDLowRankReadableFile.h"
#include "SVDLowRankSha256.h"
#include "SVDLowRankStagedOutput.h"
#include "svdlrBuildInfo.h" // SVDLR_VERSION, SVDLR_GIT_DESCRIBE: generated at build time (apps/CMakeLists.txt)

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <stdexcept>

namespace svdlr_tools
{
namespace
{
namespace fs = std::filesystem;

void
AddFile(Sha256 & hash, const fs::path & file)
{
  std::ifstream stream(file, std::ios::binary);
  if (!stream)
  {
    throw std::runtime_error("cannot read '" + file.string() + "' to checksum it");
  }
  std::vector<char> buffer(std::size_t{ 4 } << 20); // large reads go straight from the file, past the stream's buffer
  while (stream)
  {
    stream.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    hash.Add(buffer.data(), static_cast<std::size_t>(stream.gcount()));
  }
}

/** `{ "min", "median", "max", "count" }` of the finite values; `{ "min", "max" }` of `range` when there are no
 * values but a finite range; null otherwise. */
Json
SummaryJson(const std::vector<double> & values, const std::optional<std::pair<double, double>> & range)
{
  if (values.empty() && range && std::isfinite(range->first) && std::isfinite(range->second))
  {
    return { { "min", JsonNumber(range->first) }, { "max", JsonNumber(range->second) } };
  }
  std::vector<double> finite;
  std::copy_if(values.begin(), values.end(), std::back_inserter(finite), [](double v) { return std::isfinite(v); });
  if (finite.empty())
  {
    return nullptr;
  }
  const auto [low, high] = std::minmax_element(finite.begin(), finite.end());
  const double lowest = *low, highest = *high;
  std::nth_element(finite.begin(), finite.begin() + finite.size() / 2, finite.end());
  return { { "min", JsonNumber(lowest) },
           { "median", JsonNumber(finite[finite.size() / 2]) },
           { "max", JsonNumber(highest) },
           { "count", finite.size() } };
}

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
      hash.Add(name.c_str(), name.size() + 1); // with its '\0'
      AddFile(hash, file);
    }
  }
  else
  {
    AddFile(hash, path);
  }
  return hash.Hex();
}

/** The checksums StartSha256Of started, by path, and their lock. */
std::mutex                                             g_StartedMutex;
std::map<std::string, std::shared_future<std::string>> g_StartedSha256;

/** The current time, UTC, as 2026-11-25T18:30:00Z. */
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

Json
JsonNumber(double value)
{
  if (!std::isfinite(value))
  {
    return nullptr;
  }
  constexpr double wholeLimit = 9007199254740992.0; // 2^53: past it a double holds no fraction, and int64 may not fit
  if (std::trunc(value) == value && std::abs(value) < wholeLimit)
  {
    return static_cast<std::int64_t>(value);
  }
  return value;
}

std::string
JsonText(const Json & document)
{
  return document.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

void
StartSha256Of(const std::vector<std::string> & paths)
{
  std::lock_guard<std::mutex> lock(g_StartedMutex);
  for (const std::string & path : paths)
  {
    if (!path.empty() && g_StartedSha256.count(path) == 0)
    {
      g_StartedSha256[path] = std::async(std::launch::async, ComputeSha256, path).share();
    }
  }
}

std::string
Sha256Of(const std::string & path)
{
  std::shared_future<std::string> started;
  {
    std::lock_guard<std::mutex> lock(g_StartedMutex);
    const auto                  it = g_StartedSha256.find(path);
    if (it != g_StartedSha256.end())
    {
      started = it->second;
    }
  }
  return started.valid() ? started.get() : ComputeSha256(path); // get() rethrows what the thread threw
}

std::vector<std::string>
NonEmptyPaths(std::vector<std::string> paths)
{
  paths.erase(std::remove(paths.begin(), paths.end(), std::string()), paths.end());
  return paths;
}

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

std::string
SidecarPathFor(const std::string & imagePath)
{
  std::string stem = imagePath;
  for (const std::string end : { ".gz", ".nii" })
  {
    if (svdlr_io::EndsWithNoCase(stem, end))
    {
      stem.resize(stem.size() - end.size());
    }
  }
  return stem + ".json";
}

void
WriteJsonAtomically(const Json & document, const std::string & path)
{
  const std::string text = JsonText(document);
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

Json
MapSidecarJson(const Json & provenanceJson, const svdlr::OutputMap & map, const std::vector<std::string> & sources)
{
  Json sidecar = { { "Description", map.description }, { "Units", map.units }, { "Sources", sources } };
  for (const auto & [key, value] : provenanceJson.items()) // the map's own fields first, then the run's
  {
    sidecar[key] = value;
  }
  return sidecar;
}

Json
ProvenanceJson(const Provenance & provenance)
{
  Json inputs = Json::array();
  for (const std::string & input : provenance.inputs)
  {
    inputs.push_back({ { "path", input }, { "sha256", Sha256Of(input) } });
  }
  return { { "tool", provenance.tool },
           { "version", SVDLR_VERSION },
           { "gitDescribe", SVDLR_GIT_DESCRIBE },
           { "commandLine", provenance.commandLine },
           { "parameters", provenance.parameters },
           { "inputs", inputs },
           { "outputs", provenance.outputs },
           { "rank", SummaryJson(provenance.ranks, provenance.rankRange) },
           { "sigma", SummaryJson(provenance.sigmas, provenance.sigmaRange) },
           { "backend", provenance.backend },
           { "solver", provenance.solver.empty() ? Json() : Json(provenance.solver) },
           { "device", provenance.device >= 0 ? Json(provenance.device) : Json() },
           { "notes", provenance.notes },
           { "started", provenance.started },
           { "seconds", JsonNumber(provenance.seconds) } };
}

} // namespace svdlr_tools
