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
#include "SVDLowRankUpFrontChecks.h"
#include "SVDLowRankPngStack.h"

#include "SVDLowRankImageFileCheck.h"
#include "SVDLowRankNiftiRead.h"
#include "SVDLowRankStagedOutput.h"

#include "itkImageIOFactory.h"

#include <filesystem>
#include <unistd.h>

namespace svdlr_tools
{
namespace fs = std::filesystem;

void
CheckOutputNameLength(const std::string & path, const char * what)
{
  constexpr std::size_t longestName = 255;  // NAME_MAX of Linux's file systems, in bytes
  constexpr std::size_t longestPath = 4095; // PATH_MAX, less its terminating zero
  if (path.size() > longestPath)
  {
    throw UsageError(std::string("the ") + what + " path is " + std::to_string(path.size()) +
                     " bytes long: a path may have at most " + std::to_string(longestPath));
  }
  for (const fs::path & part : fs::path(path))
  {
    if (part.native().size() > longestName)
    {
      throw UsageError(std::string("the ") + what + " '" + path + "' has a name of " +
                       std::to_string(part.native().size()) + " bytes ('" + part.native().substr(0, 40) +
                       "...'): a file or folder name may have at most " + std::to_string(longestName));
    }
  }
}

namespace
{
/** An output file `what` (e.g. "output", "figure") at `path`: it is none of `inputs`, not a folder, its folder
 * exists and can be written, and it exists only with `overwrite`. Throws UsageError (exit 2). */
void
CheckOutputFileUpFront(const std::string &              path,
                       const char *                     what,
                       bool                             overwrite,
                       const std::vector<std::string> & inputs)
{
  CheckOutputNameLength(path, what);
  for (const std::string & input : inputs)
  {
    if (!input.empty() && svdlr_io::IsSameOrInside(path, input))
    {
      throw UsageError(std::string("the ") + what + " '" + path + "' would overwrite the input '" + input + "'");
    }
  }
  std::error_code error;
  if (fs::is_directory(path, error))
  {
    throw UsageError(std::string("the ") + what + " '" + path + "' is a folder; give a file name");
  }
  const fs::path folder = fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
  if (!fs::is_directory(folder, error))
  {
    throw UsageError(std::string("the folder of the ") + what + " '" + path + "' does not exist: create '" +
                     folder.string() + "' first");
  }
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
  {
    throw UsageError(std::string("the folder of the ") + what + " '" + path + "' cannot be written");
  }
  if (!overwrite && fs::exists(fs::symlink_status(path, error)))
  {
    throw UsageError(std::string("the ") + what + " '" + path + "' exists (use --overwrite to replace it)");
  }
}
} // namespace

void
CheckOutputSetUpFront(const std::vector<SetOutput> & set, bool overwrite, const std::vector<std::string> & inputs)
{
  std::vector<const SetOutput *> present;
  std::string                    missing;
  for (const SetOutput & output : set)
  {
    CheckOutputFileUpFront(output.path, output.what, true, inputs);
    std::error_code error;
    if (fs::exists(fs::symlink_status(output.path, error)))
    {
      present.push_back(&output);
    }
    else
    {
      missing += (missing.empty() ? "" : ", ") + std::string(output.what) + " '" + output.path + "'";
    }
  }
  if (overwrite || present.empty())
  {
    return;
  }
  std::string message = std::string("the ") + present.front()->what + " '" + present.front()->path +
                        "' exists (use --overwrite to replace it)";
  if (!missing.empty())
  {
    message += "; the rest of its set is missing (" + missing +
               "): was a run stopped between its renames? --overwrite writes the whole set again";
  }
  throw UsageError(message);
}

void
CheckOutputWriterUpFront(const std::string &  path,
                         unsigned int         dimension,
                         itk::IOComponentEnum written,
                         itk::IOComponentEnum input)
{
  const auto io = itk::ImageIOFactory::CreateImageIO(path.c_str(), itk::ImageIOFactory::IOFileModeEnum::WriteMode);
  if (!io)
  {
    throw UsageError("no ITK writer for '" + path + "': give an image file extension (.nii.gz, .nii, .mha, .mhd, "
                     ".nrrd; .png for a 2D image)");
  }
  if (std::string(io->GetNameOfClass()) != "PNGImageIO")
  {
    return;
  }
  if (dimension != 2)
  {
    throw UsageError("'" + path + "' is PNG, which holds a 2D image, not this " + std::to_string(dimension) +
                     "D one: give an image file extension (.nii.gz, .mha, .nrrd)");
  }
  using Component = itk::IOComponentEnum;
  const auto fits = [](Component c) { return c == Component::UCHAR || c == Component::USHORT; };
  if (written == Component::UNKNOWNCOMPONENTTYPE || fits(written))
  {
    return;
  }
  const auto name = [](Component c) { return itk::ImageIOBase::GetComponentTypeAsString(c); };
  throw UsageError("'" + path + "' is PNG, which holds 8- or 16-bit unsigned pixels, not " + name(written) +
                   (fits(input) ? ": give --output-type same to write the input's " + name(input) + " pixels"
                                : ", nor the input's " + name(input) + ": write .nii.gz, .mha or .nrrd instead"));
}

void
CheckFigureUpFront(const std::string &              figure,
                   const std::string &              outputPath,
                   bool                             overwrite,
                   const std::vector<std::string> & inputs)
{
  if (figure.empty())
  {
    return;
  }
  if (svdlr_io::IsSameOrInside(figure, outputPath))
  {
    throw UsageError("the figure '" + figure + "' would overwrite the output '" + outputPath + "'");
  }
  CheckOutputFileUpFront(figure, "figure", overwrite, inputs);
}

bool
CheckInputFileUpFront(const std::string & path, const char * what, bool finite)
{
  try
  {
    return svdlr_io::CheckImageFile(
             path, finite ? svdlr_io::ImageFileScan::ValuesForRead : svdlr_io::ImageFileScan::Structure) &&
           finite;
  }
  catch (const svdlr_io::NonFiniteImageFile & error)
  {
    throw InputError(std::string("the ") + what + " " + error.what() + ": NaN and Inf are not supported");
  }
  catch (const svdlr_io::ImageFileError & error) // unreadable, impossible header,
                                                 // truncated, corrupt, overflowing
  {
    throw InputError(std::string("cannot read the ") + what + ": " + error.what());
  }
}

itk::ImageIOBase::Pointer
ReadImageHeader(const std::string & path, const char * what)
{
  const auto io = svdlr_io::CreateReadImageIO(path); // a NIfTI file: ITK's reader, its pixels from the bytes kept
  if (const auto why = svdlr_io::WhyHeaderUnreadable(io, path))
  {
    throw InputError(std::string("cannot read the ") + what + " '" + path + "': " + *why);
  }
  return io;
}

void
CheckImageDimensionUpFront(const std::string & path, const char * what, unsigned int dimension)
{
  const auto io = ReadImageHeader(path, what);
  for (unsigned int axis = dimension; axis < io->GetNumberOfDimensions(); ++axis)
  {
    if (io->GetDimensions(axis) > 1)
    {
      throw InputError(std::string("the ") + what + " '" + path + "' has " +
                       std::to_string(io->GetNumberOfDimensions()) + " dimensions; it must be " +
                       std::to_string(dimension) + "D");
    }
  }
  if (io->GetNumberOfComponents() != 1)
  {
    throw InputError(std::string("the ") + what + " '" + path + "' has " +
                     std::to_string(io->GetNumberOfComponents()) + " components per voxel; it must have 1");
  }
}

} // namespace svdlr_tools
