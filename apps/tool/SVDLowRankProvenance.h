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
#ifndef SVDLowRankProvenance_h
#define SVDLowRankProvenance_h

// What made an output, for the JSON sidecar written beside every NIfTI output (out.nii.gz -> out.json) and for the
// tools' --json summary, which print the same document: the tool, its version and `git describe` (baked in at
// build time), the command line and parameters, the inputs with their SHA-256, the ranks and noise levels found,
// the backend and device, and when and how long. MRtrix3 keeps a command history in its headers and BIDS
// derivatives a sidecar; NIfTI has no room for one, hence the sidecar. The documents are nlohmann::json values,
// built where their parts are known and turned into text once, where they are written (JsonText).

#include "svdlr/OutputMaps.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace svdlr_tools
{

/** A JSON value whose objects keep their keys in the order they were set: the sidecars' fixed key order. */
using Json = nlohmann::ordered_json;

struct Provenance
{
  std::string              tool;
  std::vector<std::string> commandLine;
  /** Parameters as resolved (defaults filled in), by name, in the order they were set. */
  Json                     parameters = Json::object();
  std::vector<std::string> inputs; // files or folders; each gets a SHA-256 (a folder's over its files, in order)
  std::vector<std::string> outputs;
  std::vector<double>      ranks;  // per slice or per voxel inside the mask
  std::vector<double>      sigmas; // the same; empty (or NaN) where the policy estimates no noise
  /** Where only the range is known (the batch path): used when `ranks` / `sigmas` are empty. */
  std::optional<std::pair<double, double>> rankRange, sigmaRange;
  std::string              backend;
  std::string              solver; // "" where there is no choice of solver
  int                      device{ -1 }; // the CUDA device used; -1: the CPU
  std::string              notes;        // e.g. why the CPU was used
  std::string              started;      // UTC, ISO 8601 (RunStartedUtc())
  double                   seconds{ 0.0 }; // the whole run up to the summary
};

/** The document: one JSON object, keys in a fixed order. Reads the inputs to hash them. */
Json
ProvenanceJson(const Provenance & provenance);

/** The sidecar of a map output (svdlr/OutputMaps.h: the noise or rank map): the run's document `provenanceJson`
 * (ProvenanceJson) with, first, what the map is ("Description"), its "Units" and the series it came from
 * ("Sources"), as BIDS sidecars say them and the BIDS App writes them for its maps. */
Json
MapSidecarJson(const Json & provenanceJson, const svdlr::OutputMap & map, const std::vector<std::string> & sources);

/** `value` as a JSON number: null for NaN and Inf, which JSON lacks; a whole number as an integer ("20", as
 * counts and ranks read, not "20.0"). */
Json
JsonNumber(double value);

/** The text of a document as the tools write and print it: two-space indented, one line break at the end. Bytes
 * that are not UTF-8 (a Latin-1 file name) become U+FFFD, so that the text stays JSON. */
std::string
JsonText(const Json & document);

/** out.nii.gz, out.nii -> out.json (BIDS' sidecar name). */
std::string
SidecarPathFor(const std::string & imagePath);

/** Writes JsonText(document) to `path` whole or not at all (svdlr_io::WriteFileAtomically), replacing a file
 * there. Throws when it cannot. */
void
WriteJsonAtomically(const Json & document, const std::string & path);

/** `paths` without the empty ones (the options not given), in their order: a record's inputs or outputs. */
std::vector<std::string>
NonEmptyPaths(std::vector<std::string> paths);

/** When the run started (the first call: the tools call it first thing), UTC, and the seconds since. */
const std::string &
RunStartedUtc();
double
SecondsSinceRunStart();

/** The SHA-256 of a file's bytes, or of a folder's regular files (their paths relative to it, in sorted order, then
 * their bytes), in hex. Throws std::runtime_error when a file cannot be read. */
std::string
Sha256Of(const std::string & path);

/** Starts computing Sha256Of(path) for each of `paths` on background threads, so that the sidecar's checksums of
 * the inputs (a serial pass over each file: about half a second for a 130 MB series) overlap the run instead of
 * following it; Sha256Of then waits for its result. Empty paths are skipped. */
void
StartSha256Of(const std::vector<std::string> & paths);

} // namespace svdlr_tools

#endif
