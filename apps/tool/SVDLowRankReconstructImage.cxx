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
// SVDLowRankReconstructImage: the module's command-line tool.
// Reads a 2D image or 3D volume (an image file ITK reads, a DICOM series, a folder of PNG slices), replaces
// each slice by its rank-k truncated SVD reconstruction, writes the result (a file, a derived DICOM series
// or PNG slices) and a PNG figure, and prints a summary.
#include "SVDLowRankFigure.h"
#include "SVDLowRankPngStack.h"
#include "SVDLowRankProgressBar.h"
#include "SVDLowRankReconstructOutput.h"
#include "SVDLowRankStagedOutput.h"
#ifdef SVDLR_HAVE_DCMTK
#  include "SVDLowRankDicomWriter.h"
#endif

#include "itkCastImageFilter.h"
#include "itkCommand.h"
#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itkImageIOFactory.h"
#include "itkSVDLowRankReconstructionImageFilter.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <unistd.h>

namespace
{
using namespace svdlr_tools;
namespace fs = std::filesystem;

#ifdef SVDLR_HAVE_DCMTK
constexpr bool DicomSupport = true;
using DicomSource = svdlr_io::DicomVolume;
#else
constexpr bool DicomSupport = false;
struct DicomSource
{};
#endif

// Writes to a temporary name beside `path` and renames it into place only when complete, so an error
// never leaves a partial output behind.
template <typename TImage>
void
WriteAtomically(const TImage * image, const std::string & path)
{
  const std::string temporary = svdlr_io::TemporaryFileFor(path);
  try
  {
    itk::WriteImage(image, temporary, true);
  }
  catch (...)
  {
    std::remove(temporary.c_str());
    throw;
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0)
  {
    std::remove(temporary.c_str());
    throw std::runtime_error("could not move " + temporary + " to " + path);
  }
}

std::string
MethodName(const ToolOptions & options)
{
  std::ostringstream text;
  if (options.noiseSigma > 0.0)
    text << "SVD noise rank gd sigma " << options.noiseSigma;
  else if (!options.noiseRank.empty())
    text << "SVD noise rank " << options.noiseRank;
  else if (options.energyFraction > 0.0)
    text << "SVD energy " << options.energyFraction;
  else
    text << "SVD rank " << options.rank;
  return text.str();
}

/** Reconstructs `input`, writes the output in the kind resolved from the options and prints the summary. */
template <typename TImage>
int
Reconstruct(const TImage *      input,
            const std::string & inputDescription,
            OutputKind          inputKind,
            const ToolOptions & options,
            const DicomSource * dicomSource)
{
  constexpr unsigned int Dimension = TImage::ImageDimension;
  using FilterType = itk::SVDLowRankReconstructionImageFilter<TImage, TImage>;

  const auto [outputKind, outputPath] = ResolveOutput(options, inputKind, Dimension);
  if (outputKind == OutputKind::DicomSeries && !DicomSupport)
  {
    throw UsageError("this build has no DICOM support (DCMTK was not found when it was built): choose another format");
  }
  if (outputKind != OutputKind::DicomSeries && !options.transferSyntax.empty())
  {
    throw UsageError("--transfer-syntax applies to DICOM output only");
  }
#ifdef SVDLR_HAVE_DCMTK
  // The output's transfer syntax is checked before the work starts, like the output folder below.
  svdlr_io::DicomOutputSyntax transferSyntax = svdlr_io::DicomOutputSyntax::Keep;
  if (!options.transferSyntax.empty())
  {
    try
    {
      transferSyntax = svdlr_io::ParseDicomOutputSyntax(options.transferSyntax);
    }
    catch (const svdlr_io::DicomError & error)
    {
      throw UsageError(std::string("--transfer-syntax: ") + error.what());
    }
    const std::string problem = svdlr_io::DicomOutputSyntaxProblem(transferSyntax);
    if (!problem.empty())
    {
      throw UsageError("--transfer-syntax " + options.transferSyntax + ": " + problem);
    }
  }
#endif
  for (const std::string & in : options.inputs)
  {
    if (svdlr_io::IsSameOrInside(outputPath, in) ||
        (outputKind != OutputKind::File && svdlr_io::IsSameOrInside(in, outputPath)))
    {
      throw UsageError("the output '" + outputPath + "' would overwrite the input '" + in + "'");
    }
  }
  // Folders are checked before the work starts, so a taken output fails fast.
  std::unique_ptr<svdlr_io::StagedDirectory> staged;
  if (outputKind != OutputKind::File)
  {
    staged = std::make_unique<svdlr_io::StagedDirectory>(outputPath, options.overwrite);
  }

  auto filter = FilterType::New();
  filter->SetInput(input);
  svdlr::RankPolicy noisePolicy;
  if (!options.noiseRank.empty() && svdlr::ParseNoiseRank(options.noiseRank, noisePolicy))
  {
    if (noisePolicy.kind == svdlr::RankPolicy::Kind::GavishDonoho)
    {
      filter->SetNoiseSigma(options.noiseSigma); // 0: estimated per slice
    }
    else
    {
      using Estimator = itk::SVDLowRankReconstructionEnums::MarchenkoPasturEstimator;
      filter->SetMarchenkoPasturEstimator(noisePolicy.estimator == svdlr::MarchenkoPasturEstimator::CorderoGrande2019
                                            ? Estimator::CorderoGrande2019
                                            : Estimator::Veraart2016);
    }
  }
  else if (options.energyFraction > 0.0)
  {
    filter->SetEnergyFraction(options.energyFraction);
  }
  else
  {
    filter->SetRank(options.rank);
  }
  const unsigned int axis = options.sliceAxis >= 0 ? static_cast<unsigned int>(options.sliceAxis) : Dimension - 1;
  filter->SetSliceDimension(axis);
  filter->SetBackend(options.backend);
  filter->SetSolver(options.solver);
  filter->SetDeviceId(options.deviceId);

  const svdlr_tools::ProgressBar progress(filter);

  const auto start = std::chrono::steady_clock::now();
  filter->Update();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.Finish();
  const auto & ranks = filter->GetEffectiveRanks();

  std::string outputDescription;
  std::size_t clamped = 0;
  if (outputKind == OutputKind::File)
  {
    WriteAtomically(filter->GetOutput(), outputPath);
  }
  else if (outputKind == OutputKind::PngStack)
  {
    clamped = svdlr_io::WritePngStackAsUnsigned(filter->GetOutput(), staged->Path());
    outputDescription = " (folder of PNG slices)";
  }
  else
  {
#ifdef SVDLR_HAVE_DCMTK
    svdlr_io::DicomWriteOptions write;
    write.source = dicomSource;
    write.transferSyntax = transferSyntax;
    write.seriesDescription = MethodName(options);
    if (dicomSource != nullptr && !dicomSource->seriesDescription.empty())
    {
      write.seriesDescription += " of " + dicomSource->seriesDescription;
    }
    else if (dicomSource == nullptr)
    {
      write.seriesDescription += " of " + StemOf(options.Input());
    }
    write.derivationDescription = "Each slice replaced by its " + MethodName(options) +
                                  " truncated SVD reconstruction (SVDLowRankReconstructImage; ranks " +
                                  DescribeRanks(ranks) + ")";
    const auto files =
      svdlr_io::WriteDicomSeries(svdlr_io::AsVolume<float>(filter->GetOutput()).GetPointer(), staged->Path(), write);
    const std::string written = svdlr_io::ResolveDicomOutputSyntax(
      transferSyntax, dicomSource != nullptr ? dicomSource->slices.front().transferSyntaxUID : "");
    outputDescription = " (DICOM series, " + std::to_string(files.size()) +
                        (files.size() == 1 ? " file: \"" : " files: \"") + write.seriesDescription + "\", " +
                        svdlr_io::DescribeTransferSyntax(written) + ")";
#endif
  }
  if (staged)
  {
    staged->Commit();
  }

  const std::string figure = FigurePathFor(options, outputPath);
  const std::size_t figureSlice = Dimension == 3 ? input->GetLargestPossibleRegion().GetSize(axis) / 2 : 0;
  if (!figure.empty())
  {
    const std::string temporary = svdlr_io::TemporaryFileFor(figure);
    WriteSliceFigure(temporary,
                     MiddleSlice(input, axis),
                     MiddleSlice(filter->GetOutput(), axis),
                     filter->GetSingularValues()[figureSlice],
                     ranks[figureSlice]);
    std::rename(temporary.c_str(), figure.c_str());
  }

  using PixelType = typename TImage::PixelType;
  std::cout << "input:    " << inputDescription << " (" << input->GetLargestPossibleRegion().GetSize() << ", "
            << itk::ImageIOBase::GetComponentTypeAsString(itk::ImageIOBase::MapPixelType<PixelType>::CType) << ")\n"
            << "slices:   " << ranks.size() << " along axis " << axis << "\n"
            << "ranks:    " << DescribeRanks(ranks) << "\n";
  if (!options.noiseRank.empty())
  {
    std::cout << "noise:    sigma " << DescribeRange(filter->GetNoiseSigmas()) << " ("
              << svdlr::NoiseRankDescription(noisePolicy)
              << (options.noiseSigma > 0.0 ? ", given)" : ", estimated per slice)") << "\n";
  }
  std::cout << "backend:  " << filter->GetBackendUsed() << " (solver " << filter->GetSolverUsed() << ")\n"
            << "time:     " << seconds << " s (filter only)\n"
            << "output:   " << outputPath << outputDescription << "\n";
  if (clamped > 0)
  {
    std::cout << "note:     " << clamped << " values outside [0, 65535] were clamped to fit 16-bit PNG\n";
  }
  if (!figure.empty())
  {
    std::cout << "figure:   " << figure << " (slice " << figureSlice
              << ": original | reconstruction | |difference| | log singular values, rank in red)\n";
  }
  return ExitSuccess;
}

template <typename TPixel, unsigned int Dimension>
int
ReconstructFile(const ToolOptions & options)
{
  typename itk::Image<TPixel, Dimension>::Pointer input;
  try
  {
    input = itk::ReadImage<itk::Image<TPixel, Dimension>>(options.Input());
  }
  catch (const itk::ExceptionObject & error)
  {
    throw InputError("cannot read '" + options.Input() + "': " + error.GetDescription());
  }
  return Reconstruct(input.GetPointer(), options.Input(), OutputKind::File, options, nullptr);
}

template <unsigned int Dimension>
int
ReconstructFileOfType(itk::IOComponentEnum component, const ToolOptions & options)
{
  switch (component)
  {
    case itk::IOComponentEnum::UCHAR:
      return ReconstructFile<unsigned char, Dimension>(options);
    case itk::IOComponentEnum::SHORT:
      return ReconstructFile<short, Dimension>(options);
    case itk::IOComponentEnum::USHORT:
      return ReconstructFile<unsigned short, Dimension>(options);
    case itk::IOComponentEnum::DOUBLE:
      return ReconstructFile<double, Dimension>(options);
    default: // other types are processed and written as float
      return ReconstructFile<float, Dimension>(options);
  }
}

// An image file ITK reads: the tool's original input.
int
ReconstructImageFile(const ToolOptions & options)
{
  const std::string & path = options.Input();
  auto io = itk::ImageIOFactory::CreateImageIO(path.c_str(), itk::ImageIOFactory::IOFileModeEnum::ReadMode);
  if (!io)
  {
    throw InputError("cannot read '" + path + "': no ITK reader for this file");
  }
  try
  {
    io->SetFileName(path);
    io->ReadImageInformation();
  }
  catch (const itk::ExceptionObject & error)
  {
    throw InputError("cannot read '" + path + "': " + error.GetDescription());
  }
  if (io->GetNumberOfComponents() != 1)
  {
    throw InputError("'" + path + "' has " + std::to_string(io->GetNumberOfComponents()) +
                     " components per pixel; only scalar (grey) images are supported");
  }
  const unsigned int dimension = io->GetNumberOfDimensions();
  if (dimension == 2 || (dimension == 3 && io->GetDimensions(2) == 1))
  {
    return ReconstructFileOfType<2>(io->GetComponentType(), options);
  }
  if (dimension == 3)
  {
    return ReconstructFileOfType<3>(io->GetComponentType(), options);
  }
  throw InputError("'" + path + "' has " + std::to_string(dimension) +
                   " dimensions; 2D images and 3D volumes are supported");
}

int
ReconstructPngFolder(const ToolOptions & options, const std::vector<std::string> & files)
{
  const std::string description = options.Input() + " (" + std::to_string(files.size()) + " PNG slices)";
  try
  {
    switch (svdlr_io::PngStackComponentType(files))
    {
      case itk::IOComponentEnum::UCHAR:
      {
        const auto volume = svdlr_io::ReadPngStack<unsigned char>(files);
        return Reconstruct(volume.GetPointer(), description, OutputKind::PngStack, options, nullptr);
      }
      case itk::IOComponentEnum::USHORT:
      {
        const auto volume = svdlr_io::ReadPngStack<unsigned short>(files);
        return Reconstruct(volume.GetPointer(), description, OutputKind::PngStack, options, nullptr);
      }
      default:
        throw InputError(files.front() + ": PNG slices must be 8- or 16-bit grey");
    }
  }
  catch (const svdlr_io::PngStackError & error)
  {
    throw InputError(error.what());
  }
}

#ifdef SVDLR_HAVE_DCMTK
int
ReconstructDicom(const ToolOptions & options)
{
  std::vector<svdlr_io::DicomSeriesSummary> series;
  svdlr_io::DicomVolume                     volume;
  std::string                               description;
  try
  {
    series = svdlr_io::FindDicomSeries(options.inputs);
    const std::string where = options.inputs.size() == 1 ? options.Input() : "the input files";
    if (options.listSeries)
    {
      std::cout << series.size() << " DICOM series in " << where << ":\n" << svdlr_io::DescribeDicomSeries(series);
      return ExitSuccess;
    }
    if (series.empty())
    {
      throw InputError("no DICOM image series found in " + where);
    }
    if (series.size() > 1 && options.series.empty())
    {
      throw InputError(std::to_string(series.size()) + " DICOM series in " + where +
                       "; pick one with --series UID (or its number):\n" + svdlr_io::DescribeDicomSeries(series));
    }
    const auto & chosen = svdlr_io::SelectDicomSeries(series, options.series);
    volume = svdlr_io::ReadDicomSeries(chosen);
    description = "DICOM series " + chosen.seriesInstanceUID + " \"" + chosen.seriesDescription + "\", " +
                  std::to_string(chosen.files.size()) + (chosen.files.size() == 1 ? " file in " : " files in ") + where;
  }
  catch (const svdlr_io::DicomError & error)
  {
    throw InputError(error.what());
  }
  return Reconstruct(volume.image.GetPointer(), description, OutputKind::DicomSeries, options, &volume);
}
#endif

enum class InputKind
{
  ImageFile,
  PngFolder,
  Dicom
};

bool
LooksLikeDicomFile(const std::string & path)
{
  std::string extension = fs::path(path).extension().string();
  for (auto & c : extension)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
#ifdef SVDLR_HAVE_DCMTK
  if (svdlr_io::HasDicomPreamble(path))
    return true;
#endif
  return extension == ".dcm" || extension == ".ima" || extension == ".dicom";
}

InputKind
KindOfInput(const ToolOptions & options, std::vector<std::string> & pngSlices)
{
  for (const std::string & path : options.inputs)
  {
    std::error_code error;
    if (!fs::exists(path, error))
    {
      throw InputError("cannot read '" + path + "': no such file or folder");
    }
  }
  if (options.inputs.size() > 1)
  {
    return InputKind::Dicom; // several files: the slices of a DICOM series
  }
  if (fs::is_directory(options.Input()))
  {
    pngSlices = svdlr_io::FindPngSlices(options.Input());
    return pngSlices.empty() ? InputKind::Dicom : InputKind::PngFolder;
  }
  return LooksLikeDicomFile(options.Input()) ? InputKind::Dicom : InputKind::ImageFile;
}

int
RunTool(const ToolOptions & options)
{
  std::vector<std::string> pngSlices;
  const InputKind          kind = KindOfInput(options, pngSlices);
  if (options.listSeries && kind != InputKind::Dicom)
  {
    throw InputError("--list-series: '" + options.Input() + "' is not DICOM");
  }
  switch (kind)
  {
    case InputKind::PngFolder:
      return ReconstructPngFolder(options, pngSlices);
    case InputKind::Dicom:
#ifdef SVDLR_HAVE_DCMTK
      return ReconstructDicom(options);
#else
      throw InputError("'" + options.Input() +
                       "' is DICOM, but this build has no DICOM support (DCMTK was not found when it was built)");
#endif
    default:
      return ReconstructImageFile(options);
  }
}

} // namespace

int
main(int argc, char * argv[])
{
  ToolOptions options;
  try
  {
    options = ParseToolOptions(argc, argv, DicomSupport);
  }
  catch (const UsageError & error)
  {
    std::cerr << "SVDLowRankReconstructImage: " << error.what()
              << "\nRun 'SVDLowRankReconstructImage --help' for the options.\n";
    return ExitUsage;
  }
  if (!options.helpText.empty())
  {
    std::cout << options.helpText;
    return ExitSuccess;
  }
#ifdef SVDLR_HAVE_DCMTK
  svdlr_io::SilenceDicomWarnings();
#endif

  try
  {
    return RunTool(options);
  }
  catch (const UsageError & error)
  {
    std::cerr << "SVDLowRankReconstructImage: " << error.what() << "\n";
    return ExitUsage;
  }
  catch (const svdlr_io::OutputInTheWay & error)
  {
    std::cerr << "SVDLowRankReconstructImage: " << error.what() << "\n";
    return ExitUsage;
  }
  catch (const InputError & error)
  {
    std::cerr << "SVDLowRankReconstructImage: " << error.what() << "\n";
    return ExitInputError;
  }
  catch (const itk::ExceptionObject & error)
  {
    std::cerr << "SVDLowRankReconstructImage: " << error.GetDescription() << "\n";
    return ExitFailure;
  }
  catch (const std::exception & error)
  {
    std::cerr << "SVDLowRankReconstructImage: " << error.what() << "\n";
    return ExitFailure;
  }
}
