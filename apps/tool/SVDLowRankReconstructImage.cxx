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
#include "SVDLowRankReconstructBatch.h"
#include "SVDLowRankReconstructOutput.h"
#include "SVDLowRankInterruptCleanup.h"
#include "SVDLowRankStagedOutput.h"
#include "SVDLowRankUpFrontChecks.h"
#ifdef SVDLR_HAVE_DCMTK
#  include "SVDLowRankDicomFrames.h"
#  include "SVDLowRankDicomWriter.h"
#  include "SVDLowRankSliceBatches.h"
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
#include <functional>
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

// Writes to a temporary name beside `path`, verifies it and renames it into place only when complete, so an
// error never leaves a partial output behind (svdlr_io::WriteFileAtomically).
template <typename TImage>
void
WriteAtomically(const TImage * image, const std::string & path, bool overwrite)
{
  svdlr_io::WriteFileAtomically(
    path, overwrite, [image](const std::string & temporary) { itk::WriteImage(image, temporary, true); });
}

/** Sets the filter's rank policy (RankPolicyOf, the batch path's too), backend, solver and device from the options;
 * returns the policy, which labels the outputs and the summary. The slice axis is the caller's. */
template <typename TFilter>
svdlr::RankPolicy
ConfigureFilter(TFilter * filter, const ToolOptions & options)
{
  const svdlr::RankPolicy policy = RankPolicyOf(options);
  itk::SVDLowRankEngineBridge::SetRankPolicy(filter, policy);
  filter->SetBackend(options.backend);
  filter->SetSolver(options.solver);
  filter->SetDeviceId(options.deviceId);
  return policy;
}

/** The figure's title line: the input, which slice it shows (`where`), the rank and its policy, the backend. */
template <typename TFilter>
std::string
FigureTitle(const ToolOptions & options, const std::string & where, std::size_t rank, const TFilter * filter)
{
  std::ostringstream title;
  title << (options.inputs.size() == 1 ? fs::path(WithoutTrailingSlash(options.Input())).filename().string()
                                       : std::to_string(options.inputs.size()) + " DICOM files")
        << " | " << where << " | rank " << rank << " (" << svdlr::PolicyDescription(RankPolicyOf(options))
        << ") | " << filter->GetBackendUsed() << ", solver " << filter->GetSolverUsed();
  return title.str();
}

#ifdef SVDLR_HAVE_DCMTK
/** --transfer-syntax (Keep when not given), or a UsageError for a name unknown or a syntax that cannot be
 * written: called before the work starts. */
svdlr_io::DicomOutputSyntax
OutputSyntaxOf(const ToolOptions & options)
{
  if (options.transferSyntax.empty())
  {
    return svdlr_io::DicomOutputSyntax::Keep;
  }
  svdlr_io::DicomOutputSyntax transferSyntax = svdlr_io::DicomOutputSyntax::Keep;
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
  return transferSyntax;
}
#endif

/** Reconstructs `input`, writes the output in the kind resolved from the options and prints the summary.
 * `readPixels`, when given, fills `input`, whose size is already known: it runs after the filter has seen that
 * size, so that the GPU's set-up (the filter starts it then) overlaps the reading. */
template <typename TImage>
int
Reconstruct(const TImage *                input,
            const std::string &           inputDescription,
            OutputKind                    inputKind,
            const ToolOptions &           options,
            const DicomSource *           dicomSource,
            const std::function<void()> & readPixels = {})
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
  const svdlr_io::DicomOutputSyntax transferSyntax = OutputSyntaxOf(options);
#endif
  for (const std::string & in : options.inputs)
  {
    if (svdlr_io::IsSameOrInside(outputPath, in) ||
        (outputKind != OutputKind::File && svdlr_io::IsSameOrInside(in, outputPath)))
    {
      throw UsageError("the output '" + outputPath + "' would overwrite the input '" + in + "'");
    }
  }
  if (outputKind == OutputKind::File)
  {
    CheckOutputFileUpFront(outputPath, "output", options.overwrite, options.inputs);
  }
  // Folders are checked before the work starts, so a taken output fails fast.
  std::unique_ptr<svdlr_io::StagedDirectory> staged;
  if (outputKind != OutputKind::File)
  {
    staged = std::make_unique<svdlr_io::StagedDirectory>(outputPath, options.overwrite); // makes its parent folders
  }
  CheckFigureUpFront(FigurePathFor(options, outputPath), outputPath, options.overwrite, options.inputs);

  auto filter = FilterType::New();
  filter->SetInput(input);
  const svdlr::RankPolicy policy = ConfigureFilter(filter.GetPointer(), options);
  const unsigned int      axis = options.sliceAxis >= 0 ? static_cast<unsigned int>(options.sliceAxis) : Dimension - 1;
  filter->SetSliceDimension(axis);

  using Clock = std::chrono::steady_clock;
  const auto secondsSince = [](Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  filter->UpdateOutputInformation();
  const auto readStart = Clock::now();
  if (readPixels)
  {
    readPixels();
  }
  const double readSeconds = secondsSince(readStart);

  const svdlr_tools::ProgressBar progress(filter);

  const auto filterStart = Clock::now();
  filter->Update();
  const double seconds = secondsSince(filterStart);
  progress.Finish();
  const auto writeStart = Clock::now();
  const auto & ranks = filter->GetEffectiveRanks();

  std::string outputDescription;
  std::size_t clamped = 0;
  if (outputKind == OutputKind::File)
  {
    WriteAtomically(filter->GetOutput(), outputPath, options.overwrite);
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
    write.seriesDescription = svdlr::PolicyDescription(policy);
    if (dicomSource != nullptr && !dicomSource->seriesDescription.empty())
    {
      write.seriesDescription += " of " + dicomSource->seriesDescription;
    }
    else if (dicomSource == nullptr)
    {
      write.seriesDescription += " of " + StemOf(options.Input());
    }
    write.derivationDescription = svdlr::SliceDerivationDescription(policy) + " (SVDLowRankReconstructImage; ranks " +
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
  const double writeSeconds = secondsSince(writeStart);

  const std::string figure = FigurePathFor(options, outputPath);
  const std::size_t figureSlice = Dimension == 3 ? input->GetLargestPossibleRegion().GetSize(axis) / 2 : 0;
  if (!figure.empty())
  {
    const std::string where = "slice " + std::to_string(figureSlice) + " of " + std::to_string(ranks.size()) +
                              (Dimension == 3 ? ", axis " + std::to_string(axis) : std::string());
    svdlr_io::WriteFileAtomically(figure, options.overwrite, [&](const std::string & temporary) {
      WriteSliceFigure(temporary,
                       FigureTitle(options, where, ranks[figureSlice], filter.GetPointer()),
                       MiddleSlice(input, axis),
                       MiddleSlice(filter->GetOutput(), axis),
                       filter->GetSingularValues()[figureSlice],
                       ranks[figureSlice]);
    });
  }

  using PixelType = typename TImage::PixelType;
  std::cout << "input:    " << inputDescription << " (" << input->GetLargestPossibleRegion().GetSize() << ", "
            << itk::ImageIOBase::GetComponentTypeAsString(itk::ImageIOBase::MapPixelType<PixelType>::CType) << ")\n"
            << "slices:   " << ranks.size() << " along axis " << axis << "\n"
            << "ranks:    " << DescribeRanks(ranks) << "\n";
  if (!options.noiseRank.empty())
  {
    std::cout << "noise:    sigma " << DescribeRange(filter->GetNoiseSigmas()) << " ("
              << svdlr::NoiseRankDescription(policy)
              << (options.noiseSigma > 0.0 ? ", given)" : ", estimated per slice)") << "\n";
  }
  std::cout << "backend:  " << filter->GetBackendUsed() << " (solver " << filter->GetSolverUsed();
  if (filter->GetNumberOfSlicesRedone() > 0) // slices that failed the subspace solver's check, redone exactly
  {
    std::cout << ", " << filter->GetNumberOfSlicesRedone() << " slices redone by the exact solver";
  }
  std::cout << ")\n"
            << "time:     " << seconds << " s (filter only";
  if (readPixels)
  {
    std::cout << "; reading the pixels " << readSeconds << " s";
  }
  std::cout << "; writing " << writeSeconds << " s)\n"
            << "output:   " << outputPath << outputDescription << "\n";
  if (clamped > 0)
  {
    std::cout << "note:     " << clamped << " values outside [0, 65535] were clamped to fit 16-bit PNG\n";
  }
  if (!figure.empty())
  {
    std::cout << "figure:   " << figure << " (slice " << figureSlice
              << ": original | reconstruction | |difference| | singular values, the kept rank marked)\n";
  }
  return ExitSuccess;
}

template <typename TPixel, unsigned int Dimension>
int
ReconstructFile(const ToolOptions & options)
{
  using ImageType = itk::Image<TPixel, Dimension>;
  auto reader = itk::ImageFileReader<ImageType>::New();
  reader->SetFileName(options.Input());
  const auto readOrThrow = [&](auto && stage) {
    try
    {
      stage();
    }
    catch (const itk::ExceptionObject & error)
    {
      throw InputError("cannot read '" + options.Input() + "': " + error.GetDescription());
    }
  };
  readOrThrow([&] { reader->UpdateOutputInformation(); }); // the header: the filter learns the size from it
  typename ImageType::Pointer input = reader->GetOutput();
  return Reconstruct(input.GetPointer(), options.Input(), OutputKind::File, options, nullptr, [&] {
    readOrThrow([&] { reader->Update(); });
    input->DisconnectPipeline(); // the filter must not run the reader again
    const auto        extent = input->GetLargestPossibleRegion().GetSize();
    const std::size_t size[3] = { extent[0], extent[1], Dimension == 3 ? extent[Dimension - 1] : 1 };
    CheckFinitePixelsUpFront(input->GetBufferPointer(), size, options.Input(), "input");
  });
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
    if (std::string(io->GetNameOfClass()) == "PNGImageIO")
    {
      svdlr_io::CheckPngFile(path); // ITK 5.2 lets libpng abort() on some corrupt PNG files
    }
    io->SetFileName(path);
    io->ReadImageInformation();
  }
  catch (const svdlr_io::PngStackError & error)
  {
    throw InputError(error.what());
  }
  catch (const itk::ExceptionObject & error)
  {
    throw InputError("cannot read '" + path + "': " + error.GetDescription());
  }
  CheckInputFileUpFront(path, "input", true);
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
      case itk::IOComponentEnum::UCHAR: {
        const auto volume = svdlr_io::ReadPngStack<unsigned char>(files);
        return Reconstruct(volume.GetPointer(), description, OutputKind::PngStack, options, nullptr);
      }
      case itk::IOComponentEnum::USHORT: {
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
/** A DICOM series that is not one volume: the volumes of a 4D series, or images that form no volume. Every part
 * keeps its geometry; the slices are filtered in one batch per slice size (the filter treats each slice on its
 * own, so batching changes no value), and written as one derived series. */
int
ReconstructDicomParts(const svdlr_io::DicomImageSet & set,
                      const std::string &             inputDescription,
                      const ToolOptions &             options)
{
  using VolumeType = svdlr_io::DicomVolumeImage;
  using FilterType = itk::SVDLowRankReconstructionImageFilter<VolumeType, VolumeType>;

  const auto [outputKind, outputPath] = ResolveOutput(options, OutputKind::DicomSeries, 3);
  if (outputKind != OutputKind::DicomSeries)
  {
    throw UsageError("the DICOM series is " + svdlr_io::DescribeDicomLayout(set) +
                     ", which only a DICOM output can hold: write a folder (--format dicom), or give "
                     "--require-volume to refuse such series");
  }
  if (options.sliceAxis >= 0 && options.sliceAxis != 2)
  {
    throw UsageError("--slice-axis " + std::to_string(options.sliceAxis) +
                     ": a DICOM series read volume by volume or image by image is filtered slice by slice as stored "
                     "(axis 2)");
  }
  const svdlr_io::DicomOutputSyntax transferSyntax = OutputSyntaxOf(options);
  for (const std::string & in : options.inputs)
  {
    if (svdlr_io::IsSameOrInside(outputPath, in) || svdlr_io::IsSameOrInside(in, outputPath))
    {
      throw UsageError("the output '" + outputPath + "' would overwrite the input '" + in + "'");
    }
  }
  svdlr_io::StagedDirectory staged(outputPath, options.overwrite); // makes its parent folders
  CheckFigureUpFront(FigurePathFor(options, outputPath), outputPath, options.overwrite, options.inputs);

  std::vector<const VolumeType *>            inputs;
  std::vector<const svdlr_io::DicomVolume *> sources;
  std::vector<VolumeType::Pointer>           outputs;
  for (const auto & part : set.parts)
  {
    inputs.push_back(part.image.GetPointer());
    sources.push_back(&part);
    outputs.push_back(svdlr_io::LikeVolume(part.image.GetPointer()));
  }
  const auto batches = svdlr_io::StackSlicesBySize(inputs);

  std::vector<unsigned int> ranks;
  std::vector<double>       sigmas;
  std::string               backend, batchSizes;
  svdlr::RankPolicy         policy;
  double                    seconds = 0.0;
  const std::string         figure = FigurePathFor(options, outputPath);
  for (std::size_t b = 0; b < batches.size(); ++b)
  {
    const auto & batch = batches[b];
    auto         filter = FilterType::New();
    filter->SetInput(batch.stack);
    policy = ConfigureFilter(filter.GetPointer(), options);
    filter->SetSliceDimension(2);
    const svdlr_tools::ProgressBar progress(filter);
    const auto                     start = std::chrono::steady_clock::now();
    filter->Update();
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    progress.Finish();
    svdlr_io::UnstackSlices(batch, filter->GetOutput(), outputs);
    // The summary lists ranks in the order of the parts' slices.
    const auto & batchRanks = filter->GetEffectiveRanks();
    ranks.insert(ranks.end(), batchRanks.begin(), batchRanks.end());
    const auto & batchSigmas = filter->GetNoiseSigmas();
    sigmas.insert(sigmas.end(), batchSigmas.begin(), batchSigmas.end());
    std::ostringstream used;
    used << filter->GetBackendUsed() << " (solver " << filter->GetSolverUsed() << ")";
    backend = used.str();
    const auto size = batch.stack->GetLargestPossibleRegion().GetSize();
    batchSizes += (batchSizes.empty() ? "" : ", ") + std::to_string(size[2]) + " of " + std::to_string(size[0]) + "x" +
                  std::to_string(size[1]);
    if (b == 0 && !figure.empty())
    {
      const std::size_t middle = size[2] / 2;
      const std::string where =
        std::to_string(set.parts.size()) +
        (set.layout == svdlr_io::DicomLayout::Images ? " images" : " volumes by " + set.by) + ", batch 1, slice " +
        std::to_string(middle) + " of " + std::to_string(size[2]);
      svdlr_io::WriteFileAtomically(figure, options.overwrite, [&](const std::string & temporary) {
        WriteSliceFigure(temporary,
                         FigureTitle(options, where, batchRanks[middle], filter.GetPointer()),
                         MiddleSlice(batch.stack.GetPointer(), 2),
                         MiddleSlice(filter->GetOutput(), 2),
                         filter->GetSingularValues()[middle],
                         batchRanks[middle]);
      });
    }
  }

  svdlr_io::DicomWriteOptions write;
  write.transferSyntax = transferSyntax;
  write.seriesDescription = svdlr::PolicyDescription(policy);
  if (!set.parts.front().seriesDescription.empty())
  {
    write.seriesDescription += " of " + set.parts.front().seriesDescription;
  }
  write.derivationDescription =
    svdlr::SliceDerivationDescription(policy) + " (SVDLowRankReconstructImage; ranks " + DescribeRanks(ranks) + ")";
  std::vector<const VolumeType *> written;
  for (const auto & output : outputs)
  {
    written.push_back(output.GetPointer());
  }
  const auto files = svdlr_io::WriteDicomSeriesParts(written, sources, staged.Path(), write);
  staged.Commit();
  // Under keep each slice keeps its source's syntax where it can be written: the first one's is named.
  const std::string syntax =
    svdlr_io::ResolveDicomOutputSyntax(transferSyntax, set.parts.front().slices.front().transferSyntaxUID);

  std::size_t slices = 0;
  for (const auto * input : inputs)
  {
    slices += input->GetLargestPossibleRegion().GetSize(2);
  }
  std::cout << "input:    " << inputDescription << "\n"
            << "layout:   " << svdlr_io::DescribeDicomLayout(set) << "\n";
  if (set.layout == svdlr_io::DicomLayout::Volumes)
  {
    for (std::size_t p = 0; p < set.parts.size(); ++p)
    {
      const auto size = set.parts[p].image->GetLargestPossibleRegion().GetSize();
      std::cout << "          " << set.names[p] << ": " << size[0] << "x" << size[1] << "x" << size[2] << "\n";
    }
  }
  std::cout << "slices:   " << slices << " in " << batches.size() << (batches.size() == 1 ? " batch (" : " batches (")
            << batchSizes << "), each slice on its own\n"
            << "ranks:    " << DescribeRanks(ranks) << "\n";
  if (!options.noiseRank.empty())
  {
    std::cout << "noise:    sigma " << DescribeRange(sigmas) << " (" << svdlr::NoiseRankDescription(policy)
              << (options.noiseSigma > 0.0 ? ", given)" : ", estimated per slice)") << "\n";
  }
  std::cout << "backend:  " << backend << "\n"
            << "time:     " << seconds << " s (filter only)\n"
            << "output:   " << outputPath << " (DICOM series, " << files.size()
            << (files.size() == 1 ? " file: \"" : " files: \"") << write.seriesDescription << "\", "
            << svdlr_io::DescribeTransferSyntax(syntax) << ", "
            << (set.layout == svdlr_io::DicomLayout::Images ? "each image with its own geometry)\n"
                                                            : "volume by volume)\n");
  if (!figure.empty())
  {
    std::cout << "figure:   " << figure << " (middle slice of the first batch)\n";
  }
  return ExitSuccess;
}

int
ReconstructDicom(const ToolOptions & options)
{
  std::vector<svdlr_io::DicomSeriesSummary> series;
  svdlr_io::DicomImageSet                   set;
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
    set = svdlr_io::ReadDicomImages(chosen, options.requireVolume);
    description = "DICOM series " + chosen.seriesInstanceUID + " \"" + chosen.seriesDescription + "\", " +
                  std::to_string(chosen.files.size()) + (chosen.files.size() == 1 ? " file in " : " files in ") + where;
  }
  catch (const svdlr_io::DicomError & error)
  {
    throw InputError(error.what() + std::string(options.requireVolume ? " (--require-volume)" : ""));
  }
  if (set.layout == svdlr_io::DicomLayout::Volume)
  {
    const svdlr_io::DicomVolume & volume = set.parts.front();
    return Reconstruct(volume.image.GetPointer(), description, OutputKind::DicomSeries, options, &volume);
  }
  std::cerr << "SVDLowRankReconstructImage: note: the series is not one volume; reading it "
            << (set.layout == svdlr_io::DicomLayout::Volumes ? "volume by volume" : "image by image")
            << " (--require-volume refuses such series): " << svdlr_io::DescribeDicomLayout(set) << "\n";
  return ReconstructDicomParts(set, description, options);
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
  if (options.batch)
  {
    return RunBatchTool(options);
  }
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
  svdlr_io::InstallInterruptCleanup("SVDLowRankReconstructImage", ExitInterrupted);
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
