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
#ifndef SVDLowRankBatchInputs_h
#define SVDLowRankBatchInputs_h

// Which volumes a batch run processes, and where each one's output goes: the inputs of a run (files,
// folder trees filtered by glob patterns, a BIDS-like layout, each DICOM series of a folder) become a list
// of volumes, each with the path relative to the root it was found under. The output tree mirrors those
// relative paths, and each output name says what was done: sub-01/anat/sub-01_T1w.nii.gz with rank 20
// becomes OUT/sub-01/anat/sub-01_T1w_svd-rank20.nii.gz.

#include "svdlr/RankPolicy.h"
#include "SVDLowRankImageFileErrors.h"

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace svdlr_batch
{

/** The run's inputs cannot be listed (a path that does not exist, nothing matched, two outputs that would
 * clash): a usage problem of the whole run, reported before any work starts. */
SVDLR_DECLARE_ERROR(BatchInputError, std::runtime_error);

/** A path given does not exist (Python raises FileNotFoundError for it). */
SVDLR_DECLARE_ERROR(MissingBatchInput, BatchInputError);

/** Two inputs that would be written to the same output: a problem of the command line (exit code 2), not of an
 * input's content. */
SVDLR_DECLARE_ERROR(BatchNameClash, BatchInputError);

enum class VolumeSource
{
  ImageFile,  // any file ITK reads (NIfTI, NRRD, MetaImage, ...)
  DicomSeries // one series of a DICOM folder, read through DCMTK
};

struct BatchInput
{
  VolumeSource source{ VolumeSource::ImageFile };
  std::string  path;     // the file, or the folder the series was found under
  std::string  relative; // mirrored in the output tree: a file's path under its root, or a series' folder/name
  // DICOM series only: the series' files and identity.
  std::vector<std::string> dicomFiles;
  std::string              seriesInstanceUID;
  std::string              seriesNumber;
  std::string              seriesDescription;
  // Why this input cannot be read, found while looking for inputs (a folder of DICOM files one of which is
  // corrupt, a dangling link): it is reported as a failed volume by name, and the others are processed.
  std::string problem;
};

/** What to look for. Files named in `paths` are taken as they are; folders are searched recursively. */
struct InputSelection
{
  std::vector<std::string> paths;
  /** Patterns a file's path relative to its folder must match (any of them). A pattern with a '/' matches the
   * whole relative path, a '*' never crossing a '/' (BidsPatterns()); one without a '/' matches the file name
   * at any depth ("*.nii.gz"). Empty (and no `bids`): the image files ITK reads (DefaultImagePatterns()). */
  std::vector<std::string> patterns;
  /** Adds BidsPatterns() to `patterns`. */
  bool bids{ false };
  /** Each DICOM series found under the folders is one volume (instead of image files). */
  bool dicomSeries{ false };
  /** How a folder's DICOM series are listed: AddDicomSeries (SVDLowRankBatchDicomInputs.h) in the tools built with
   * DCMTK. Given here, not called directly, so that this list stays free of DICOM and Python shares it; without it,
   * `dicomSeries` is refused. */
  std::function<void(const std::string & folder, std::vector<BatchInput> & inputs)> addDicomSeries;
  /** Never descend into this folder (the output tree, when it lies inside an input folder). */
  std::string exclude;
};

/** The image files a folder search takes by default: NIfTI, NRRD, MetaImage and Analyze headers. */
std::vector<std::string>
DefaultImagePatterns();

/** The patterns of a BIDS-like layout: sub-X/anat/ *.nii[.gz] and sub-X/ses-Y/anat/ *.nii[.gz]. */
std::vector<std::string>
BidsPatterns();

/** Whether `relative` (a path with '/' separators) matches `pattern` (rules of InputSelection::patterns). */
bool
MatchesPattern(const std::string & relative, const std::string & pattern);

/** The volumes selected, in a stable order (paths as given, each folder's files sorted). Hidden files and
 * folders (names starting with '.', as the staged outputs' temporaries) are skipped. Throws BatchInputError
 * when a path does not exist, nothing is found, or two volumes would share an output. */
std::vector<BatchInput>
FindBatchInputs(const InputSelection & selection);

/** Throws BatchNameClash when two inputs would be written to one output (the same relative path). */
void
CheckDistinctOutputs(const std::vector<BatchInput> & inputs);

/** The tag an output's name carries for `policy`: svdlr::OutputTag, which every path names its outputs with. */
inline std::string
MethodTag(const svdlr::RankPolicy & policy)
{
  return svdlr::OutputTag(policy);
}

/** The tags of the denoiser's batch outputs (SVDLowRankDenoiseSeries --batch, and Python's denoise_batch):
 * <name>_denoised.nii.gz, and with the maps <name>_sigma.nii.gz and <name>_rank.nii.gz. */
constexpr const char * DenoisedTag = "denoised";
constexpr const char * SigmaMapTag = "sigma";
constexpr const char * RankMapTag = "rank";

/** `path` normalised, with forward slashes: how inputs' relative paths and outputs are written. */
std::string
Generic(const std::filesystem::path & path);

/** Where `input`'s output goes under `outputRoot`: the mirrored relative path with `_<tag>` before the
 * extension (image files), or `<relative>_<tag>` as a folder of DICOM files (DICOM series). */
std::string
OutputPathFor(const BatchInput & input, const std::string & outputRoot, const std::string & tag);

} // namespace svdlr_batch

#endif
