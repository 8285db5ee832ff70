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
#ifndef SVDLowRankReconstructOutput_h
#define SVDLowRankReconstructOutput_h

// Where SVDLowRankReconstructImage writes, once the input's kind and dimension are known (the output's kind and
// path, the figure's path).

#include "SVDLowRankReadableFile.h"
#include "SVDLowRankReconstructOptions.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>

namespace svdlr_tools
{

/** How the output is written: one file through ITK, a folder of PNG slices, or a folder of DICOM files. */
enum class OutputKind
{
  File,
  PngStack,
  DicomSeries
};

/** `path` without trailing slashes (but "/" stays "/"). */
inline std::string
WithoutTrailingSlash(std::string path)
{
  while (path.size() > 1 && path.back() == '/')
  {
    path.pop_back();
  }
  return path;
}

/** The file name of `path` without directory and without its (possibly double) extension. */
inline std::string
StemOf(const std::string & anyPath)
{
  const std::string path = WithoutTrailingSlash(anyPath);
  const std::size_t slash = path.find_last_of('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return name.substr(0, name.find('.', 1));
}

/** Whether `path` names a file by an image extension ITK writes (not a folder). */
inline bool
HasImageFileExtension(const std::string & path)
{
  static const char * const extensions[] = { ".nii", ".nii.gz", ".mha", ".mhd", ".nrrd", ".nhdr", ".png", ".tif",
                                             ".tiff", ".hdr", ".img", ".img.gz", ".vtk", ".gipl", ".gipl.gz", ".jpg",
                                             ".jpeg", ".bmp" };
  const std::string name = path.substr(path.find_last_of('/') + 1); // npos + 1 is 0: the whole path
  // An empty name (a path ending in '/') or one that is only an extension (".nii") is no file name.
  return std::any_of(std::begin(extensions), std::end(extensions), [&name](const std::string extension) {
    return name.size() > extension.size() && svdlr_io::EndsWithNoCase(name, extension);
  });
}

/** The file extension a --format name writes, or "" for the folder formats and auto. */
inline std::string
ExtensionOfFormat(const std::string & format)
{
  if (format == "nifti")
    return ".nii.gz";
  if (format == "mha" || format == "mhd" || format == "nrrd")
    return "." + format;
  return "";
}

/** Where and how the output goes, once the input's kind and dimension are known: `inputKind` is what
 * a folder output gets without --format (the input's own kind, or File when it has no folder kind). */
inline std::pair<OutputKind, std::string>
ResolveOutput(const ToolOptions & options, OutputKind inputKind, unsigned int dimension)
{
  const std::string   stem = StemOf(options.Input()) + "_svdlr";
  const std::string & format = options.format;
  if (format == "dicom")
  {
    return { OutputKind::DicomSeries, options.output.empty() ? stem : WithoutTrailingSlash(options.output) };
  }
  if (format == "png")
  {
    if (dimension == 2 && (options.output.empty() || HasImageFileExtension(options.output)))
    {
      return { OutputKind::File, options.output.empty() ? stem + ".png" : options.output };
    }
    if (HasImageFileExtension(options.output))
    {
      throw UsageError("a 3D volume is written as a folder of PNG slices: '" + options.output +
                       "' looks like a file name; give a folder name");
    }
    return { OutputKind::PngStack, options.output.empty() ? stem : WithoutTrailingSlash(options.output) };
  }
  const std::string extension = ExtensionOfFormat(format);
  if (!extension.empty())
  {
    if (options.output.empty())
    {
      return { OutputKind::File, stem + extension };
    }
    return { OutputKind::File,
             HasImageFileExtension(options.output) ? options.output
                                                   : WithoutTrailingSlash(options.output) + extension };
  }
  // auto
  if (options.output.empty())
  {
    return { OutputKind::File, stem + ".nii.gz" };
  }
  if (HasImageFileExtension(options.output))
  {
    // HasImageFileExtension said the name is longer than ".png".
    if (dimension == 3 && svdlr_io::EndsWithNoCase(options.output, ".png"))
    {
      throw UsageError("a 3D volume cannot be one PNG file: give a folder name for PNG slices (or --format png)");
    }
    return { OutputKind::File, options.output };
  }
  if (inputKind == OutputKind::File)
  {
    throw UsageError("OUTPUT '" + options.output +
                     "' has no image file extension: add one (.nii.gz, .mha, .nrrd) or pick a folder format with "
                     "--format dicom or --format png");
  }
  return { inputKind, WithoutTrailingSlash(options.output) };
}

/** The figure's path for an output at `outputPath`: --figure, or <output name>_figure.png beside it. */
inline std::string
FigurePathFor(const ToolOptions & options, const std::string & outputPath)
{
  if (options.noFigure)
  {
    return {};
  }
  if (!options.figure.empty())
  {
    return options.figure;
  }
  const std::string output = WithoutTrailingSlash(outputPath);
  const std::size_t slash = output.find_last_of('/');
  return (slash == std::string::npos ? "" : output.substr(0, slash + 1)) + StemOf(output) + "_figure.png";
}

} // namespace svdlr_tools

#endif
