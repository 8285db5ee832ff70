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
#include "SVDLowRankBatchInputs.h"

#include "SVDLowRankFolderFiles.h"
#include "SVDLowRankReadableFile.h"

#include <algorithm>
#include <filesystem>
#include <fnmatch.h>
#include <map>
#include <sstream>

namespace svdlr_batch
{
namespace fs = std::filesystem;

namespace
{

const std::vector<std::string> &
KnownExtensions()
{
  // Longest first, so that .nii.gz wins over .gz.
  static const std::vector<std::string> extensions = { ".nii.gz", ".hdr.gz", ".img.gz", ".nii", ".nrrd", ".nhdr",
                                                       ".mha",    ".mhd",    ".hdr",    ".img", ".vtk",  ".tif",
                                                       ".tiff",   ".png",    ".dcm",    ".gz" };
  return extensions;
}

/** `name` split into its stem and its extension, the extension from the first dot of the name on where it is a
 * known image extension (brain.nii.gz -> brain + .nii.gz, t1.v2.nrrd -> t1.v2 + .nrrd). */
void
SplitExtension(const std::string & name, std::string & stem, std::string & extension)
{
  for (const std::string & known : KnownExtensions())
  {
    if (name.size() > known.size() && svdlr_io::EndsWithNoCase(name, known))
    {
      stem = name.substr(0, name.size() - known.size());
      extension = name.substr(name.size() - known.size());
      return;
    }
  }
  const std::size_t dot = name.rfind('.');
  stem = dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
  extension = dot == std::string::npos || dot == 0 ? std::string() : name.substr(dot);
}

/** Every file under `root` (svdlr_io::FilesUnder: hidden entries and `exclude` skipped), relative to root, sorted. A
 * folder that cannot be listed is a BatchInputError naming it (exit code 3, docs/batch.md): its files would be left
 * out of the run without a word, and a re-run would not know they were never processed. */
std::vector<std::string>
FilesUnder(const fs::path & root, const std::string & exclude)
{
  std::vector<std::string> files;
  try
  {
    for (const fs::path & file : svdlr_io::FilesUnder(root, exclude))
    {
      files.push_back(Generic(file.lexically_relative(root)));
    }
  }
  catch (const svdlr_io::UnlistableFolder & unlistable)
  {
    throw BatchInputError("cannot list the folder '" + Generic(unlistable.Folder()) + "': " + unlistable.Reason() +
                          ", so the volumes in it would be left out");
  }
  std::sort(files.begin(), files.end());
  return files;
}

/** Two series with the same number in one folder: the UID tells them apart. */
void
DisambiguateSeries(std::vector<BatchInput> & inputs)
{
  std::map<std::string, std::size_t> uses;
  for (const auto & input : inputs)
  {
    ++uses[input.relative];
  }
  for (auto & input : inputs)
  {
    if (input.source == VolumeSource::DicomSeries && uses[input.relative] > 1)
    {
      input.relative += "-" + input.seriesInstanceUID;
    }
  }
}

} // namespace

std::string
Generic(const fs::path & path)
{
  return path.lexically_normal().generic_string();
}

std::vector<std::string>
DefaultImagePatterns()
{
  return { "*.nii.gz", "*.nii", "*.nrrd", "*.nhdr", "*.mha", "*.mhd", "*.hdr" };
}

std::vector<std::string>
BidsPatterns()
{
  return { "sub-*/anat/*.nii.gz", "sub-*/anat/*.nii", "sub-*/ses-*/anat/*.nii.gz", "sub-*/ses-*/anat/*.nii" };
}

bool
MatchesPattern(const std::string & relative, const std::string & pattern)
{
  if (pattern.find('/') != std::string::npos)
  {
    return fnmatch(pattern.c_str(), relative.c_str(), FNM_PATHNAME | FNM_PERIOD) == 0;
  }
  const std::string name = fs::path(relative).filename().string();
  return fnmatch(pattern.c_str(), name.c_str(), FNM_PERIOD) == 0;
}

std::vector<BatchInput>
FindBatchInputs(const InputSelection & selection)
{
  if (selection.paths.empty())
  {
    throw BatchInputError("no input given");
  }
  std::vector<std::string> patterns = selection.patterns;
  if (selection.bids)
  {
    const auto bids = BidsPatterns();
    patterns.insert(patterns.end(), bids.begin(), bids.end());
  }
  if (patterns.empty())
  {
    patterns = DefaultImagePatterns();
  }
  std::vector<BatchInput> inputs;
  for (const std::string & path : selection.paths)
  {
    std::error_code error;
    const std::string why = svdlr_io::WhyUnreadable(path, true);
    if (!why.empty())
    {
      throw MissingBatchInput("cannot read '" + path + "': " + why);
    }
    if (!fs::is_directory(path, error))
    {
      if (selection.dicomSeries)
      {
        throw BatchInputError("'" + path + "' is a file; --dicom-series takes folders");
      }
      BatchInput input;
      input.path = path;
      input.relative = fs::path(path).filename().string();
      inputs.push_back(std::move(input));
      continue;
    }
    if (selection.dicomSeries)
    {
      if (!selection.addDicomSeries)
      {
        throw BatchInputError("this build has no DICOM support (DCMTK was not found when it was built)");
      }
      selection.addDicomSeries(path, inputs);
      continue;
    }
    for (const std::string & relative : FilesUnder(path, selection.exclude))
    {
      if (std::any_of(patterns.begin(), patterns.end(),
                      [&](const std::string & pattern) { return MatchesPattern(relative, pattern); }))
      {
        BatchInput input;
        input.path = Generic(fs::path(path) / relative);
        input.relative = relative;
        inputs.push_back(std::move(input));
      }
    }
  }
  if (inputs.empty())
  {
    std::ostringstream text;
    text << "no " << (selection.dicomSeries ? "DICOM series" : "image files") << " found in";
    for (const auto & path : selection.paths)
    {
      text << " '" << path << "'";
    }
    throw BatchInputError(text.str());
  }
  DisambiguateSeries(inputs);
  CheckDistinctOutputs(inputs);
  return inputs;
}

void
CheckDistinctOutputs(const std::vector<BatchInput> & inputs)
{
  std::map<std::string, std::string> seen;
  for (const auto & input : inputs)
  {
    const auto [it, inserted] = seen.emplace(input.relative, input.path);
    if (!inserted)
    {
      throw BatchNameClash("'" + input.path + "' and '" + it->second + "' would both be written to '" +
                            input.relative + "' in the output tree: give their folders one at a time");
    }
  }
}

std::string
OutputPathFor(const BatchInput & input, const std::string & outputRoot, const std::string & tag)
{
  const fs::path relative(input.relative);
  if (input.source == VolumeSource::DicomSeries)
  {
    return Generic(fs::path(outputRoot) / relative.parent_path() / (relative.filename().string() + "_" + tag));
  }
  std::string stem;
  std::string extension;
  SplitExtension(relative.filename().string(), stem, extension);
  return Generic(fs::path(outputRoot) / relative.parent_path() / (stem + "_" + tag + extension));
}

} // namespace svdlr_batch
