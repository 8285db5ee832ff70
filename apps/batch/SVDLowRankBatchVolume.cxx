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
#include "SVDLowRankBatchVolume.h"

#include "SVDLowRankImageFileCheck.h"
#include "SVDLowRankNiftiRead.h"
#include "SVDLowRankNiftiWrite.h"
#include "SVDLowRankPngStack.h"
#include "SVDLowRankStagedOutput.h"
#ifdef SVDLR_HAVE_DCMTK
#  include "SVDLowRankDicomWriter.h"
#  include "SVDLowRankMethodLabels.h"
#endif

#include "itkImage.h"
#include "itkImageFileWriter.h"
#include "itkImageIOFactory.h"

#include <cstdint>
#include <filesystem>
#include <vector>

namespace svdlr_batch
{
namespace fs = std::filesystem;

namespace
{

itk::ImageIOBase::Pointer
OpenImage(const std::string & path)
{
  auto io = svdlr_io::CreateReadImageIO(path); // NIfTI: decompressed once, for the checks and the read
  if (const auto why = svdlr_io::WhyHeaderUnreadable(io, path))
  {
    throw VolumeError("cannot read '" + path + "': " + *why);
  }
  return io;
}

VolumeGeometry
GeometryOf(const itk::ImageIOBase & io, const std::string & path)
{
  if (io.GetNumberOfComponents() != 1)
  {
    throw VolumeError("'" + path + "' has " + std::to_string(io.GetNumberOfComponents()) +
                      " components per pixel; only scalar (grey) images are supported");
  }
  const unsigned int dimension = io.GetNumberOfDimensions();
  if (dimension < 2 || dimension > 3)
  {
    throw VolumeError("'" + path + "' has " + std::to_string(dimension) +
                      " dimensions; 2D images and 3D volumes are supported");
  }
  VolumeGeometry geometry;
  geometry.dimension = dimension;
  for (unsigned int i = 0; i < dimension; ++i)
  {
    geometry.size[i] = io.GetDimensions(i);
    geometry.spacing[i] = io.GetSpacing(i);
    geometry.origin[i] = io.GetOrigin(i);
    const std::vector<double> axis = io.GetDirection(i);
    for (unsigned int r = 0; r < dimension; ++r)
    {
      geometry.direction[r * 3 + i] = axis[r];
    }
  }
  if (geometry.Pixels() == 0)
  {
    throw VolumeError("'" + path + "' is empty");
  }
  return geometry;
}

/** The `count` components of type `component` at `raw` as floats, into `target`. */
void
ConvertComponents(itk::IOComponentEnum component, const void * raw, std::size_t count, float * target,
                  const std::string & path)
{
  const auto toFloat = [&](auto zero) {
    const auto * source = static_cast<const decltype(zero) *>(raw);
    for (std::size_t i = 0; i < count; ++i)
    {
      target[i] = static_cast<float>(source[i]);
    }
  };
  if (!svdlr_io::VisitComponentType<std::uint8_t, std::int8_t, std::uint16_t, std::int16_t, std::uint32_t, std::int32_t,
                                    unsigned long, long, unsigned long long, long long, double>(component, toFloat))
  {
    throw VolumeError("'" + path + "' has pixels of an unsupported type (" +
                      itk::ImageIOBase::GetComponentTypeAsString(component) + ")");
  }
}

StagedVolume
ReadImageFile(const BatchInput & input, std::size_t index, HostBufferPool & pool)
{
  std::error_code missing;
  if (fs::is_symlink(input.path, missing) && !fs::exists(input.path, missing))
  {
    throw VolumeError("cannot read '" + input.path + "': a link to a file that is not there (" +
                      fs::read_symlink(input.path, missing).string() + "; an un-fetched git-annex or DataLad file?)");
  }
  try
  {
    // Before ITK opens it: a file that cannot be read, and what ITK's NIfTI reader hides or guesses at (an impossible
    // header, data cut short or corrupt, NaN and Inf read as 0).
    svdlr_io::CheckImageFile(input.path, svdlr_io::ImageFileScan::ValuesForRead);
  }
  catch (const svdlr_io::ImageFileError & error)
  {
    throw VolumeError(error.what());
  }
  auto         io = OpenImage(input.path);
  StagedVolume volume;
  volume.index = index;
  volume.geometry = GeometryOf(*io, input.path);
  volume.pixels = pool.Lease(volume.geometry.Pixels());

  itk::ImageIORegion region(io->GetNumberOfDimensions());
  for (unsigned int i = 0; i < io->GetNumberOfDimensions(); ++i)
  {
    region.SetIndex(i, 0);
    region.SetSize(i, io->GetDimensions(i));
  }
  io->SetIORegion(region);
  try
  {
    if (io->GetComponentType() == itk::IOComponentEnum::FLOAT)
    {
      io->Read(volume.pixels.Data()); // straight into the (pinned) buffer
    }
    else
    {
      std::vector<unsigned char> raw(io->GetImageSizeInBytes());
      io->Read(raw.data());
      ConvertComponents(io->GetComponentType(), raw.data(), volume.geometry.Pixels(), volume.pixels.Data(),
                        input.path);
    }
  }
  catch (const itk::ExceptionObject & error)
  {
    throw VolumeError("cannot read '" + input.path + "': " + error.GetDescription());
  }
  return volume;
}

#ifdef SVDLR_HAVE_DCMTK
StagedVolume
ReadDicom(const BatchInput & input, std::size_t index, HostBufferPool & pool)
{
  svdlr_io::DicomSeriesSummary series;
  series.seriesInstanceUID = input.seriesInstanceUID;
  series.seriesNumber = input.seriesNumber;
  series.seriesDescription = input.seriesDescription;
  series.files = input.dicomFiles;
  auto source = std::make_shared<svdlr_io::DicomVolume>();
  try
  {
    *source = svdlr_io::ReadDicomSeries(series);
  }
  catch (const svdlr_io::DicomError & error)
  {
    throw VolumeError(error.what());
  }
  const auto & image = *source->image;
  StagedVolume volume;
  volume.index = index;
  for (unsigned int i = 0; i < 3; ++i)
  {
    volume.geometry.size[i] = image.GetLargestPossibleRegion().GetSize(i);
    volume.geometry.spacing[i] = image.GetSpacing()[i];
    volume.geometry.origin[i] = image.GetOrigin()[i];
    for (unsigned int j = 0; j < 3; ++j)
    {
      volume.geometry.direction[i * 3 + j] = image.GetDirection()[i][j];
    }
  }
  volume.pixels = pool.Lease(volume.geometry.Pixels());
  std::copy(image.GetBufferPointer(), image.GetBufferPointer() + volume.geometry.Pixels(), volume.pixels.Data());
  source->image = nullptr; // the writer needs the series' metadata, not its pixels
  volume.dicomSource = std::move(source);
  return volume;
}
#endif

/** An ITK image over the volume's buffer (no copy). */
template <unsigned int VDimension>
typename itk::Image<float, VDimension>::Pointer
ImageOver(const StagedVolume & volume)
{
  using ImageType = itk::Image<float, VDimension>;
  auto                           image = ImageType::New();
  typename ImageType::SizeType   size;
  typename ImageType::SpacingType spacing;
  typename ImageType::PointType  origin;
  typename ImageType::DirectionType direction;
  for (unsigned int i = 0; i < VDimension; ++i)
  {
    size[i] = volume.geometry.size[i];
    spacing[i] = volume.geometry.spacing[i];
    origin[i] = volume.geometry.origin[i];
    for (unsigned int j = 0; j < VDimension; ++j)
    {
      direction[i][j] = volume.geometry.direction[i * 3 + j];
    }
  }
  image->SetRegions(typename ImageType::RegionType(size));
  image->SetSpacing(spacing);
  image->SetOrigin(origin);
  image->SetDirection(direction);
  image->GetPixelContainer()->SetImportPointer(volume.pixels.Data(), volume.geometry.Pixels(), false);
  return image;
}

template <unsigned int VDimension>
void
WriteFile(const StagedVolume & volume, const std::string & temporary, int compressionLevel)
{
  svdlr_io::ImageWriteSettings settings;
  settings.gzipLevel = compressionLevel;
  svdlr_io::WriteImageFile(ImageOver<VDimension>(volume).GetPointer(), temporary, settings);
}

void
WriteImageFile(const StagedVolume & volume, const std::string & output, bool overwrite, int compressionLevel)
{
  std::error_code error;
  if (!overwrite && fs::exists(output, error))
  {
    throw VolumeError("'" + output + "' exists (--overwrite replaces it)");
  }
  try
  {
    svdlr_io::WriteFileAtomically(output, overwrite, [&](const std::string & temporary) {
      if (volume.geometry.dimension == 2)
      {
        WriteFile<2>(volume, temporary, compressionLevel);
      }
      else
      {
        WriteFile<3>(volume, temporary, compressionLevel);
      }
    });
  }
  catch (const std::runtime_error & failure) // OutputWriteError (a full disk), OutputInTheWay (a race)
  {
    throw VolumeError(failure.what());
  }
}

#ifdef SVDLR_HAVE_DCMTK
void
WriteDicom(const StagedVolume &                   volume,
           const svdlr_io::ReconstructionResult & result,
           const svdlr::RankPolicy &              policy,
           bool                                   overwrite)
{
  const auto *        source = static_cast<const svdlr_io::DicomVolume *>(volume.dicomSource.get());
  const std::string & output = result.output;
  try
  {
    svdlr_io::StagedDirectory staged(output, overwrite, svdlr_io::DicomSeriesFiles());
    const auto                write = svdlr_io::DerivedSeriesOptions(
      policy, result.ranks, source, "", svdlr_io::DicomOutputSyntax::Keep);
    svdlr_io::WriteDicomSeries(ImageOver<3>(volume).GetPointer(), staged.Path(), write);
    staged.Commit();
  }
  catch (const itk::ExceptionObject & failure)
  {
    throw VolumeError("cannot write '" + output + "': " + failure.GetDescription());
  }
  catch (const std::runtime_error & failure) // DicomError, OutputInTheWay, a failed rename
  {
    throw VolumeError("cannot write '" + output + "': " + failure.what());
  }
}
#endif

} // namespace

StagedVolume
ReadVolume(const BatchInput & input, std::size_t index, HostBufferPool & pool)
{
  if (!input.problem.empty())
  {
    throw VolumeError(input.problem);
  }
  if (input.source == VolumeSource::DicomSeries)
  {
#ifdef SVDLR_HAVE_DCMTK
    return ReadDicom(input, index, pool);
#else
    throw VolumeError("this build has no DICOM support");
#endif
  }
  return ReadImageFile(input, index, pool);
}

svdlr::Report
ReconstructVolume(StagedVolume & volume, const svdlr::Options & options)
{
  const auto &            size = volume.geometry.size;
  svdlr::MatrixBatch<float> batch;
  batch.data = volume.pixels.Data();
  batch.count = size[2];
  batch.rows = size[1];
  batch.cols = size[0];
  batch.matrixStride = size[0] * size[1];
  const svdlr::MatrixBatch<const float> input{ batch.data, batch.count, batch.rows, batch.cols, batch.matrixStride };
  return svdlr::Reconstruct(input, batch, options); // in place: the engine allows exact aliasing
}

void
WriteVolume(const StagedVolume &                   volume,
            const BatchInput &                     input,
            const svdlr_io::ReconstructionResult & result,
            const svdlr::RankPolicy &              policy,
            bool                                   overwrite,
            int                                    compressionLevel)
{
  const std::string & output = result.output;
  std::error_code error;
  fs::create_directories(fs::path(output).parent_path(), error);
  if (error)
  {
    throw VolumeError("cannot create the folder of '" + output + "': " + error.message());
  }
  if (input.source == VolumeSource::DicomSeries)
  {
#ifdef SVDLR_HAVE_DCMTK
    return WriteDicom(volume, result, policy, overwrite);
#else
    throw VolumeError("this build has no DICOM support");
#endif
  }
  WriteImageFile(volume, output, overwrite, compressionLevel);
}

} // namespace svdlr_batch
