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
#include "SVDLowRankNiftiWrite.h"
#include "SVDLowRankNiftiRead.h"
#include "SVDLowRankOutputType.h"
#include "SVDLowRankPngStack.h"
#include "SVDLowRankProgressBar.h"
#include "SVDLowRankProvenance.h"
#include "SVDLowRankReadableFile.h"
#include "SVDLowRankReconstructOutput.h"
#include "SVDLowRankReconstructRun.h"
#include "SVDLowRankReconstructWrite.h"
#include "SVDLowRankStagedOutput.h"
#include "SVDLowRankUpFrontChecks.h"
#ifdef SVDLR_HAVE_DCMTK
#  include "SVDLowRankSliceBatches.h"
#endif

#include "itkSVDLowRankReconstructionImageFilter.h"
#include "svdlr/Defaults.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>

namespace
{
using namespace svdlr_tools;
namespace fs = std::filesystem;

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

  using PixelType = typename TImage::PixelType;
  // --output-type same: the input's pixel type (svdlr/Defaults.h: float32 is the default of every mode). PNG has no
  // float pixels: PNG slices are written in the input's 8 or 16 bits, and a single PNG file takes only those
  // (checked here, before the work).
  const auto inputComponent = itk::ImageIOBase::MapPixelType<PixelType>::CType;
  const auto resolved = ResolveOutput(options, inputKind, Dimension);
  const bool sameType =
    options.outputType == svdlr::kSameAsInputOutputTypeName || resolved.first == OutputKind::PngStack;
  if (resolved.first == OutputKind::File)
  {
    CheckOutputWriterUpFront(resolved.second, Dimension, sameType ? inputComponent : itk::IOComponentEnum::FLOAT,
                             inputComponent);
  }
  OutputPlan out = PlanOutput(options, resolved);
  if (out.kind == OutputKind::File && inputKind == OutputKind::File)
  {
    out.niftiHeader = svdlr_io::ReadNiftiHeaderFields(options.Input()); // the fields ITK's NIfTI writer drops
  }

  auto                    filter = FilterType::New();
  const svdlr::RankPolicy policy = RankPolicyOf(options);
  filter->SetInput(input);
  const unsigned int axis = options.sliceAxis >= 0 ? static_cast<unsigned int>(options.sliceAxis) : Dimension - 1;
  ConfigureFilter(filter.GetPointer(), policy, options, axis);

  svdlr_io::ReconstructionResult result;
  filter->UpdateOutputInformation();
  if (readPixels)
  {
    const StepTimer timer(result.readSeconds);
    readPixels();
  }

  result.solveSeconds = UpdateWithProgress(filter, ReportsProgress(options));
  AddFilterResult(filter.GetPointer(), result);
  result.device = result.backend == "CUDA" ? options.deviceId : -1;
  std::ostringstream described;
  described << inputDescription << " (" << input->GetLargestPossibleRegion().GetSize() << ", "
            << itk::ImageIOBase::GetComponentTypeAsString(inputComponent) << ")";
  result.input = described.str();
  result.output = out.path;

  std::optional<StepTimer> writing(std::in_place, result.writeSeconds);
  SummaryText              text;
  text.slices = std::to_string(result.slices) + " along axis " + std::to_string(axis);
  if (sameType)
  {
    const auto inInputType = ConvertPixels<PixelType>(filter->GetOutput(), dicomSource != nullptr);
    WriteOutput(inInputType.GetPointer(), out, policy, result, options, dicomSource, text);
  }
  else
  {
    WriteOutput(filter->GetOutput(), out, policy, result, options, dicomSource, text);
  }
  if (out.kind == OutputKind::File)
  {
    text.outputKind = " (" + (sameType ? std::string("same type as the input") : options.outputType) + ")";
  }
  const bool  sidecar = out.kind == OutputKind::File && svdlr_io::IsNiftiFileName(out.path);
  Json        provenance; // the sidecar's and --json's document
  if (sidecar || options.run.json)
  {
    provenance = ProvenanceJson(RunProvenance(options, result));
  }
  if (sidecar)
  {
    text.sidecar = SidecarPathFor(out.path);
  }
  CommitOutputFile(out, provenance); // the sidecar, then the image
  writing.reset();

  const std::string figure = FigurePathFor(options, out.path);
  const std::size_t figureSlice = Dimension == 3 ? input->GetLargestPossibleRegion().GetSize(axis) / 2 : 0;
  if (!figure.empty())
  {
    const std::string where = "slice " + std::to_string(figureSlice) + " of " + std::to_string(result.slices) +
                              (Dimension == 3 ? ", axis " + std::to_string(axis) : std::string());
    WriteFigure(figure, options, policy, where, result, input, filter.GetPointer(), axis, figureSlice);
    text.figure = figure + " (slice " + std::to_string(figureSlice) +
                  ": original | reconstruction | |difference| | singular values, the kept rank marked)";
  }
  return ReportRun(options, result, policy, text, provenance);
}

template <typename TPixel, unsigned int Dimension>
int
ReconstructFile(const ToolOptions & options, bool scannedUpFront)
{
  using ImageType = itk::Image<TPixel, Dimension>;
  auto reader = svdlr_io::ImageReaderFor<ImageType>(options.Input()); // a NIfTI file checked up front: read once
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
    if (!scannedUpFront) // else every value was scanned before the read (CheckInputFileUpFront)
    {
      const auto        extent = input->GetLargestPossibleRegion().GetSize();
      const std::size_t size[3] = { extent[0], extent[1], Dimension == 3 ? extent[Dimension - 1] : 1 };
      CheckFinitePixelsUpFront(input->GetBufferPointer(), size, options.Input(), "input");
    }
  });
}

template <unsigned int Dimension>
int
ReconstructFileOfType(itk::IOComponentEnum component, const ToolOptions & options, bool scannedUpFront)
{
  int        result = ExitFailure;
  const auto reconstruct = [&](auto pixel) {
    result = ReconstructFile<decltype(pixel), Dimension>(options, scannedUpFront);
  };
  if (!svdlr_io::VisitComponentType<unsigned char, short, unsigned short, double>(component, reconstruct))
  {
    reconstruct(float{}); // other types are processed and written as float
  }
  return result;
}

// An image file ITK reads: the tool's original input.
int
ReconstructImageFile(const ToolOptions & options)
{
  const std::string & path = options.Input();
  // The raw checks first: an impossible NIfTI header or a corrupt stream is named before ITK's reader guesses at it.
  const bool scannedUpFront = CheckInputFileUpFront(path, "input", true);
  auto io = svdlr_io::CreateCheckedReadImageIO(path); // a PNG checked first: libpng may abort() on a corrupt one
  if (const auto why = svdlr_io::WhyHeaderUnreadable(io, path))
  {
    throw InputError("cannot read '" + path + "': " + *why);
  }
  if (io->GetNumberOfComponents() != 1)
  {
    throw InputError("'" + path + "' has " + std::to_string(io->GetNumberOfComponents()) +
                     " components per pixel; only scalar (grey) images are supported");
  }
  const unsigned int dimension = io->GetNumberOfDimensions();
  if (dimension == 2 || (dimension == 3 && io->GetDimensions(2) == 1))
  {
    return ReconstructFileOfType<2>(io->GetComponentType(), options, scannedUpFront);
  }
  if (dimension == 3)
  {
    return ReconstructFileOfType<3>(io->GetComponentType(), options, scannedUpFront);
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
    int result = ExitFailure;
    if (!svdlr_io::VisitComponentType<unsigned char, unsigned short>(
          svdlr_io::PngStackComponentType(files), [&](auto pixel) {
            const auto volume = svdlr_io::ReadPngStack<decltype(pixel)>(files);
            result = Reconstruct(volume.GetPointer(), description, OutputKind::PngStack, options, nullptr);
          }))
    {
      throw InputError(files.front() + ": PNG slices must be 8- or 16-bit grey");
    }
    return result;
  }
  catch (const svdlr_io::PngStackError & error)
  {
    throw InputError(error.what());
  }
}

#ifdef SVDLR_HAVE_DCMTK
/** Filters `batches` (slices of the parts stacked by size) one filter each, puts the results into `outputs` (like
 * the parts), adds them to `result` in the order of the parts' slices, and writes the figure of the first batch's
 * middle slice to `figure` (when not empty). Returns the batches' sizes for the summary: "4 of 64x64, 1 of 32x32". */
std::string
FilterPartsInBatches(const svdlr_io::DicomImageSet &                     set,
                     const std::vector<svdlr_io::SliceBatch<svdlr_io::DicomVolumeImage>> & batches,
                     const svdlr::RankPolicy &                           policy,
                     const ToolOptions &                                 options,
                     const std::string &                                 figure,
                     std::vector<svdlr_io::DicomVolumeImage::Pointer> & outputs,
                     svdlr_io::ReconstructionResult &                    result)
{
  using VolumeType = svdlr_io::DicomVolumeImage;
  std::string batchSizes;
  for (std::size_t b = 0; b < batches.size(); ++b)
  {
    const auto & batch = batches[b];
    auto         filter = itk::SVDLowRankReconstructionImageFilter<VolumeType, VolumeType>::New();
    filter->SetInput(batch.stack);
    ConfigureFilter(filter.GetPointer(), policy, options, 2);
    result.solveSeconds += UpdateWithProgress(filter, ReportsProgress(options));
    svdlr_io::UnstackSlices(batch, filter->GetOutput(), outputs);
    AddFilterResult(filter.GetPointer(), result);
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
      WriteFigure(figure, options, policy, where, result, batch.stack.GetPointer(), filter.GetPointer(), 2, middle);
    }
  }
  return batchSizes;
}

/** The summary's lines under "input:" for a series read part by part: its layout, and each volume's size. */
std::vector<std::string>
DescribeParts(const svdlr_io::DicomImageSet & set)
{
  std::vector<std::string> lines{ "layout:   " + svdlr_io::DescribeDicomLayout(set) };
  if (set.layout == svdlr_io::DicomLayout::Volumes)
  {
    for (std::size_t p = 0; p < set.parts.size(); ++p)
    {
      const auto size = set.parts[p].image->GetLargestPossibleRegion().GetSize();
      lines.push_back("          " + set.names[p] + ": " + std::to_string(size[0]) + "x" + std::to_string(size[1]) +
                      "x" + std::to_string(size[2]));
    }
  }
  return lines;
}

/** A DICOM series that is not one volume: the volumes of a 4D series, or images that form no volume. Every part
 * keeps its geometry; the slices are filtered in one batch per slice size (the filter treats each slice on its
 * own, so batching changes no value), and written as one derived series. */
int
ReconstructDicomParts(const svdlr_io::DicomImageSet & set,
                      const std::string &             inputDescription,
                      const ToolOptions &             options)
{
  using VolumeType = svdlr_io::DicomVolumeImage;

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
  OutputPlan out = PlanOutput(options, { outputKind, outputPath });

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

  const svdlr::RankPolicy        policy = RankPolicyOf(options);
  svdlr_io::ReconstructionResult result;
  result.input = inputDescription;
  result.output = outputPath;
  const std::string figure = FigurePathFor(options, outputPath);
  const std::string batchSizes = FilterPartsInBatches(set, batches, policy, options, figure, outputs, result);

  std::optional<StepTimer> writing(std::in_place, result.writeSeconds);
  const auto               write =
    svdlr_io::DerivedSeriesOptions(policy, result.ranks, &set.parts.front(), "", out.transferSyntax);
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
  const auto files = svdlr_io::WriteDicomSeriesParts(written, sources, out.staged->Path(), write);
  out.staged->Commit();
  writing.reset();

  SummaryText text;
  text.inputDetails = DescribeParts(set);
  text.slices = std::to_string(result.slices) + " in " + std::to_string(batches.size()) +
                (batches.size() == 1 ? " batch (" : " batches (") + batchSizes + "), each slice on its own";
  // Under keep each slice keeps its source's syntax where it can be written: the first one's is named.
  text.outputKind = DicomOutputText(
    files.size(),
    write.seriesDescription,
    svdlr_io::ResolveDicomOutputSyntax(out.transferSyntax, set.parts.front().slices.front().transferSyntaxUID),
    set.layout == svdlr_io::DicomLayout::Images ? ", each image with its own geometry" : ", volume by volume");
  if (!figure.empty())
  {
    text.figure = figure + " (middle slice of the first batch)";
  }
  return ReportRun(
    options, result, policy, text, options.run.json ? ProvenanceJson(RunProvenance(options, result)) : Json());
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
    svdlr_io::DicomSearchNotes notes;
    // --list-series: every readable series and a note for each file skipped, not a stop at the first bad file.
    notes.listUnreadable = options.listSeries;
    series = svdlr_io::FindDicomSeries(options.inputs, &notes);
    if (options.listSeries)
    {
      std::cout << series.size() << " DICOM series in " << where << ":\n" << svdlr_io::DescribeDicomSeries(series);
      for (const std::string & file : notes.unreadable)
      {
        std::cout << "note:     skipped " << file << "\n";
      }
      for (const std::string & file : notes.leftOut)
      {
        std::cout << "note:     left out " << file << "\n";
      }
      return ExitSuccess;
    }
    for (const std::string & file : notes.leftOut)
    {
      std::cerr << "SVDLowRankReconstructImage: note: left out " << file << "\n";
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
  if (!options.run.quiet)
  {
    std::cerr << "SVDLowRankReconstructImage: note: the series is not one volume; reading it "
              << (set.layout == svdlr_io::DicomLayout::Volumes ? "volume by volume" : "image by image")
              << " (--require-volume refuses such series): " << svdlr_io::DescribeDicomLayout(set) << "\n";
  }
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
  const std::string extension = svdlr_io::LowerCase(fs::path(path).extension().string());
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
    // Before anything opens it: a FIFO would block the DICOM preamble's read, and "no such file" must be true.
    const std::string why = svdlr_io::WhyUnreadable(path, true);
    if (!why.empty())
    {
      throw InputError("cannot read '" + path + "': " + why);
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
#ifdef SVDLR_HAVE_DCMTK
  svdlr_io::SilenceDicomWarnings();
#endif
  PrintStartLine(options);
  if (options.batch.enabled)
  {
    return RunBatchTool(options);
  }
  // A name too long would fail only once the work is done: refused before the input is looked at (exit 2).
  CheckOutputNameLength(options.output, "output");
  CheckOutputNameLength(options.figure, "figure");
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
  RunStartedUtc(); // the provenance's clock starts here
  return ToolMain(
    "SVDLowRankReconstructImage",
    argc,
    argv,
    [](int count, char * words[]) { return ParseToolOptions(count, words, DicomSupport); },
    RunTool);
}
