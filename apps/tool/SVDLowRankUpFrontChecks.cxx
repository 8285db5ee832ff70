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

#include "SVDLowRankImageFileCheck.h"
#include "SVDLowRankStagedOutput.h"

#include "itkImageIOFactory.h"

#include <filesystem>
#include <unistd.h>

namespace svdlr_tools
{
namespace fs = std::filesystem;

void
CheckOutputFileUpFront(const std::string &              path,
                       const char *                     what,
                       bool                             overwrite,
                       const std::vector<std::string> & inputs)
{
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

void
CheckImageDimensionUpFront(const std::string & path, const char * what, unsigned int dimension)
{
  auto io = itk::ImageIOFactory::CreateImageIO(path.c_str(), itk::ImageIOFactory::IOFileModeEnum::ReadMode);
  if (!io)
  {
    throw InputError(std::string("cannot read the ") + what + " '" + path + "': no ITK reader for this file");
  }
  try
  {
    io->SetFileName(path);
    io->ReadImageInformation();
  }
  catch (const itk::ExceptionObject & error)
  {
    throw InputError(std::string("cannot read the ") + what + " '" + path + "': " + error.GetDescription());
  }
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
