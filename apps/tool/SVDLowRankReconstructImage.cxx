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
#include "SVDLowRankFiniteCheck.h"
#include "SVDLowRankNiftiHeader.h"
#include "SVDLowRankOutputType.h"
#include "SVDLowRankPngStack.h"
#include "SVDLowRankProgressBar.h"
#include "SVDLowRankProvenance.h"
#include "SVDLowRankReconstructBatch.h"
#include "SVDLowRankReconstructOutput.h"
#include "SVDLowRankStagedOutput.h"
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
#include "svdlr/Defaults.h"
#include "svdlr/Names.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <optional>
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
WriteAtomically(const TImage * image, const std::string & path, const std::optional<NiftiHeaderFields> & header)
{
  const std::string temporary = svdlr_io::TemporaryFileFor(path);
  try
  {
    itk::WriteImage(image, temporary, true);
    if (header && IsNiftiPath(path))
    {
      WriteNiftiHeaderFields(temporary, *header);
    }
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

/** The provenance record of a reconstruction (the sidecar and --json): the options' part, and what the filter
 * found. */
Provenance
ReconstructProvenance(const ToolOptions &        options,
                      const std::vector<double> & ranks,
                      const std::vector<double> & sigmas,
                      const std::string &        backend,
                      const std::string &        solver,
                      int                        device,
                      const std::string &        notes,
                      const std::string &        output)
{
  Provenance provenance = ProvenanceOf(options);
  provenance.outputs = { output };
  provenance.ranks = ranks;
  provenance.sigmas = sigmas;
  provenance.backend = backend;
  provenance.solver = solver;
  provenance.device = device;
  provenance.notes = notes;
  provenance.seconds = SecondsSinceRunStart();
  return provenance;
}

/** Sets the filter's rank policy, backend, solver and device from the options; returns the noise policy (when
 * --noise-rank chose one) for the summary. The slice axis is the caller's. */
template <typename TFilter>
svdlr::RankPolicy
ConfigureFilter(TFilter * filter, const ToolOptions & options)
{
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
  filter->SetBackend(options.backend);
  filter->SetSolver(options.solver);
  filter->SetDeviceId(options.deviceId);
  return noisePolicy;
}

/** The figure's title line: the input, which slice it shows (`where`), the rank and its policy, the backend. */
template <typename TFilter>
std::string
FigureTitle(const ToolOptions & options, const std::string & where, std::size_t rank, const TFilter * filter)
{
  std::ostringstream title;
  title << (options.inputs.size() == 1 ? fs::path(WithoutTrailingSlash(options.Input())).filename().string()
                                       : std::to_string(options.inputs.size()) + " DICOM files")
        << " | " << where << " | rank " << rank << " ("
        << (!options.noiseRank.empty()       ? "noise rank " + options.noiseRank
            : options.energyFraction > 0.0 ? "energy " + FormatTick(options.energyFraction, 6)
                                           : std::string("fixed"))
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
  // float32 in every mode (svdlr/Defaults.h says why); --output-type same converts it back below.
  using OutputImageType = itk::Image<float, Dimension>;
  using FilterType = itk::SVDLowRankReconstructionImageFilter<TImage, OutputImageType>;

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
  // Folders are checked before the work starts, so a taken output fails fast.
  std::unique_ptr<svdlr_io::StagedDirectory> staged;
  if (outputKind != OutputKind::File)
  {
    staged = std::make_unique<svdlr_io::StagedDirectory>(outputPath, options.overwrite);
  }

  auto filter = FilterType::New();
  filter->SetInput(input);
  const svdlr::RankPolicy noisePolicy = ConfigureFilter(filter.GetPointer(), options);
  filter->WarnOnBackendFallbackOff(); // printed as a note of ours
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
  CheckFinite(input, options.Input());

  const svdlr_tools::ProgressBar progress(filter, !options.run.quiet && !options.run.json);

  const auto filterStart = Clock::now();
  filter->Update();
  const double seconds = secondsSince(filterStart);
  progress.Finish();
  const auto writeStart = Clock::now();
  const auto & ranks = filter->GetEffectiveRanks();

  std::string outputDescription;
  std::size_t clamped = 0;
  // --output-type same: the input's pixel type (svdlr/Defaults.h: float32 is the default of every mode). PNG has no
  // float pixels: PNG slices are written in the input's 8 or 16 bits (16 from other types).
  const bool sameType = options.outputType == svdlr::kSameAsInputOutputTypeName || outputKind == OutputKind::PngStack;
  const typename TImage::Pointer inInputType =
    sameType ? ConvertPixels<typename TImage::PixelType>(filter->GetOutput(), dicomSource != nullptr) : nullptr;
  const auto writeOutput = [&](const auto * output) {
    if (outputKind == OutputKind::File)
    {
      const std::optional<NiftiHeaderFields> header =
        inputKind == OutputKind::File ? ReadNiftiHeaderFields(options.Input()) : std::nullopt;
      WriteAtomically(output, outputPath, header);
    }
    else if (outputKind == OutputKind::PngStack)
    {
      clamped = svdlr_io::WritePngStackAsUnsigned(output, staged->Path());
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
      write.derivationDescription = DerivationDescription(options, DescribeRanks(ranks));
      const auto files = svdlr_io::WriteDicomSeries(svdlr_io::AsVolume<float>(output).GetPointer(), staged->Path(), write);
      const std::string written = svdlr_io::ResolveDicomOutputSyntax(
        transferSyntax, dicomSource != nullptr ? dicomSource->slices.front().transferSyntaxUID : "");
      outputDescription = " (DICOM series, " + std::to_string(files.size()) +
                          (files.size() == 1 ? " file: \"" : " files: \"") + write.seriesDescription + "\", " +
                          svdlr_io::DescribeTransferSyntax(written) + ")";
#endif
    }
  };
  if (sameType)
  {
    writeOutput(inInputType.GetPointer());
  }
  else
  {
    writeOutput(filter->GetOutput());
  }
  if (staged)
  {
    staged->Commit();
  }
  std::ostringstream backendUsed, solverUsed;
  backendUsed << filter->GetBackendUsed();
  solverUsed << filter->GetSolverUsed();
  const bool       onGpu = backendUsed.str() == "CUDA";
  const Provenance provenance = ReconstructProvenance(
    options, std::vector<double>(ranks.begin(), ranks.end()), filter->GetNoiseSigmas(), backendUsed.str(),
    solverUsed.str(), onGpu ? options.deviceId : -1, filter->GetBackendNotes(), outputPath);
  const std::string provenanceJson = ProvenanceJson(provenance);
  if (outputKind == OutputKind::File && IsNiftiPath(outputPath))
  {
    WriteTextAtomically(provenanceJson, SidecarPathFor(outputPath));
  }
  const double writeSeconds = secondsSince(writeStart);

  const std::string figure = FigurePathFor(options, outputPath);
  const std::size_t figureSlice = Dimension == 3 ? input->GetLargestPossibleRegion().GetSize(axis) / 2 : 0;
  if (!figure.empty())
  {
    const std::string temporary = svdlr_io::TemporaryFileFor(figure);
    const std::string where = "slice " + std::to_string(figureSlice) + " of " + std::to_string(ranks.size()) +
                              (Dimension == 3 ? ", axis " + std::to_string(axis) : std::string());
    WriteSliceFigure(temporary,
                     FigureTitle(options, where, ranks[figureSlice], filter.GetPointer()),
                     MiddleSlice(input, axis),
                     MiddleSlice(filter->GetOutput(), axis),
                     filter->GetSingularValues()[figureSlice],
                     ranks[figureSlice]);
    std::rename(temporary.c_str(), figure.c_str());
  }

  if (options.run.json)
  {
    std::cout << provenanceJson;
    return ExitSuccess;
  }
  if (options.run.quiet)
  {
    return ExitSuccess;
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
            << "output:   " << outputPath << outputDescription
            << (outputKind == OutputKind::File ? " (" + (sameType ? "same type as the input" : options.outputType) + ")"
                                               : std::string())
            << "\n";
  if (outputKind == OutputKind::File && IsNiftiPath(outputPath))
  {
    std::cout << "sidecar:  " << SidecarPathFor(outputPath) << " (provenance)\n";
  }
  if (!filter->GetBackendNotes().empty())
  {
    std::cout << "note:     " << filter->GetBackendNotes() << "\n";
  }
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
  svdlr_io::StagedDirectory staged(outputPath, options.overwrite);

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
  std::string               backend, batchSizes, backendUsed, solverUsed, notes;
  svdlr::RankPolicy         noisePolicy;
  double                    seconds = 0.0;
  const std::string         figure = FigurePathFor(options, outputPath);
  for (std::size_t b = 0; b < batches.size(); ++b)
  {
    const auto & batch = batches[b];
    auto         filter = FilterType::New();
    filter->SetInput(batch.stack);
    noisePolicy = ConfigureFilter(filter.GetPointer(), options);
    filter->WarnOnBackendFallbackOff(); // printed as a note of ours
    filter->SetSliceDimension(2);
    const svdlr_tools::ProgressBar progress(filter, !options.run.quiet && !options.run.json);
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
    std::ostringstream used, backendName, solverName;
    used << filter->GetBackendUsed() << " (solver " << filter->GetSolverUsed() << ")";
    backend = used.str();
    backendName << filter->GetBackendUsed();
    solverName << filter->GetSolverUsed();
    backendUsed = backendName.str();
    solverUsed = solverName.str();
    notes = filter->GetBackendNotes();
    const auto size = batch.stack->GetLargestPossibleRegion().GetSize();
    batchSizes += (batchSizes.empty() ? "" : ", ") + std::to_string(size[2]) + " of " + std::to_string(size[0]) + "x" +
                  std::to_string(size[1]);
    if (b == 0 && !figure.empty())
    {
      const std::size_t middle = size[2] / 2;
      const std::string temporary = svdlr_io::TemporaryFileFor(figure);
      const std::string where =
        std::to_string(set.parts.size()) +
        (set.layout == svdlr_io::DicomLayout::Images ? " images" : " volumes by " + set.by) + ", batch 1, slice " +
        std::to_string(middle) + " of " + std::to_string(size[2]);
      WriteSliceFigure(temporary,
                       FigureTitle(options, where, batchRanks[middle], filter.GetPointer()),
                       MiddleSlice(batch.stack.GetPointer(), 2),
                       MiddleSlice(filter->GetOutput(), 2),
                       filter->GetSingularValues()[middle],
                       batchRanks[middle]);
      std::rename(temporary.c_str(), figure.c_str());
    }
  }

  svdlr_io::DicomWriteOptions write;
  write.transferSyntax = transferSyntax;
  write.seriesDescription = MethodName(options);
  if (!set.parts.front().seriesDescription.empty())
  {
    write.seriesDescription += " of " + set.parts.front().seriesDescription;
  }
  write.derivationDescription = DerivationDescription(options, DescribeRanks(ranks));
  std::vector<const VolumeType *> written;
  for (const auto & output : outputs)
  {
    if (options.outputType == svdlr::kSameAsInputOutputTypeName) // the stored values' type: whole numbers
    {
      float * values = output->GetBufferPointer();
      std::transform(values, values + output->GetLargestPossibleRegion().GetNumberOfPixels(), values,
                     [](float value) { return std::round(value); });
    }
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
  if (options.run.json)
  {
    std::cout << ProvenanceJson(ReconstructProvenance(options, std::vector<double>(ranks.begin(), ranks.end()), sigmas,
                                                      backendUsed, solverUsed,
                                                      backendUsed == "CUDA" ? options.deviceId : -1, notes,
                                                      outputPath));
    return ExitSuccess;
  }
  if (options.run.quiet)
  {
    return ExitSuccess;
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
    std::cout << "noise:    sigma " << DescribeRange(sigmas) << " (" << svdlr::NoiseRankDescription(noisePolicy)
              << (options.noiseSigma > 0.0 ? ", given)" : ", estimated per slice)") << "\n";
  }
  std::cout << "backend:  " << backend << "\n"
            << "time:     " << seconds << " s (filter only)\n"
            << "output:   " << outputPath << " (DICOM series, " << files.size()
            << (files.size() == 1 ? " file: \"" : " files: \"") << write.seriesDescription << "\", "
            << svdlr_io::DescribeTransferSyntax(syntax) << ", "
            << (set.layout == svdlr_io::DicomLayout::Images ? "each image with its own geometry)\n"
                                                            : "volume by volume)\n");
  if (!notes.empty())
  {
    std::cout << "note:     " << notes << "\n";
  }
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
    const std::string where = options.inputs.size() == 1 ? options.Input() : "the input files";
    if (options.listSeries)
    {
      // Every readable series, and a note for each file skipped, rather than stopping at the first bad file.
      std::vector<std::string> skipped;
      series = svdlr_io::FindDicomSeries(options.inputs, &skipped);
      std::cout << series.size() << " DICOM series in " << where << ":\n" << svdlr_io::DescribeDicomSeries(series);
      for (const std::string & file : skipped)
      {
        std::cout << "note:     skipped " << file << "\n";
      }
      return ExitSuccess;
    }
    series = svdlr_io::FindDicomSeries(options.inputs);
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
  if (!options.run.quiet)
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
  std::cout << std::unitbuf; // every line reaches a pipeline's log as it is written, and none is lost to a signal
  RunStartedUtc();           // the provenance's clock starts here
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
  ApplyThreads(options.run.threads);
  if (!options.run.quiet && !options.listSeries)
  {
    // Before any work, so that a pipeline's log shows at once what runs; on stderr with the progress lines, so that
    // stdout holds the summary (or --json's document) alone.
    std::cerr << "start:    SVDLowRankReconstructImage, "
        << (options.batch ? "batch mode, " + std::to_string(options.inputs.size()) +
                              (options.inputs.size() == 1 ? " input path" : " input paths")
                          : options.inputs.size() == 1 ? options.Input()
                                                       : std::to_string(options.inputs.size()) + " DICOM files")
        << ", " << MethodName(options) << ", backend " << svdlr::Name(static_cast<svdlr::Backend>(options.backend))
        << std::endl;
  }

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
