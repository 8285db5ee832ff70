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
// SVDLowRankDenoiseSeries: local low-rank (MP-PCA) denoising of a 4D series from the command line, through
// itk::LocalLowRankDenoisingImageFilter. Reads the series (a 4D image, or a 3D image with one component per
// volume) and the optional mask and known noise map, checks them, denoises, writes the series and the maps it was
// asked for together (apps/io's StagedFiles), and prints a summary: the steps of SVDLowRankDenoiseRun.h, which
// batch mode (--batch, SVDLowRankDenoiseBatch.h) runs on its pipeline's threads.
#include "SVDLowRankDenoiseOptions.h"
#include "SVDLowRankDenoiseRun.h"
#include "SVDLowRankDenoiseSummary.h"
#include "SVDLowRankDicomComplexInput.h"
#include "SVDLowRankImageFileCheck.h"
#include "SVDLowRankNiftiWrite.h"
#include "SVDLowRankOutputType.h"
#include "SVDLowRankProgressBar.h"
#include "SVDLowRankProvenance.h"
#include "SVDLowRankReadableFile.h"
#include "SVDLowRankStagedOutput.h"
#include "SVDLowRankUpFrontChecks.h"

#include "itkLocalLowRankDenoisingImageFilter.h"
#include "svdlr/CpuThreads.h"
#include "svdlr/Engine.h"
#include "svdlr/LocalDenoise.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

namespace
{
using namespace svdlr_tools;
namespace fs = std::filesystem;

using Series4D = itk::Image<float, 4>;
using SeriesVector = itk::VectorImage<float, 3>;
using MaskImage = itk::Image<unsigned char, 3>;
using SigmaImage = itk::Image<float, 3>;
using RankImage = itk::Image<unsigned short, 3>;

/** Where the outputs go: their temporary names until StagedFiles::Commit(). */
struct Outputs
{
  svdlr_io::StagedFiles staged;
  std::string           series;
  std::string           noiseMap; // "" when not asked for
  std::string           rankMap;
  std::string           gfactorMap;
  std::vector<std::string> echoSeries; // --echo-output's, in echo order
  /** The provenance sidecars of the NIfTI outputs: the output they describe, and their temporary name. */
  std::vector<std::pair<std::string, std::string>> sidecars;
  /** The input's pixel type, for --output-type same; float when not known (a DICOM series). */
  itk::IOComponentEnum inputComponent{ itk::IOComponentEnum::FLOAT };
  /** Where the run's time goes (the summary's "steps:" line). */
  StepTimes steps;
  /** Every value of the series file was scanned for NaN and Inf by the up-front check (CheckInputFileUpFront). */
  bool seriesScannedUpFront{ false };
  /** The ImageIO that read the series' header up front, which then reads its pixels (not for DICOM). */
  itk::ImageIOBase::Pointer seriesHeader;

  explicit Outputs(bool overwrite)
    : staged(overwrite)
  {}
};

void
CheckInputExists(const std::string & path, const char * what)
{
  const std::string why = path.empty() ? std::string() : svdlr_io::WhyUnreadable(path);
  if (!why.empty())
  {
    throw InputError(std::string("cannot read the ") + what + " '" + path + "': " + why);
  }
}

/** Reserves every output of the set (DenoiseOutputSet), so that a taken or unwritable one fails before any work. */
void
ReserveOutputs(const DenoiseToolOptions & options, Outputs & outputs)
{
  std::vector<std::string> inputs{ options.input, options.mask, options.noiseSigmaMap, options.complex.gfactor };
  inputs.insert(inputs.end(), options.multiEcho.echoes.begin(), options.multiEcho.echoes.end());
  const auto set = DenoiseOutputSet(options);
  CheckOutputSetUpFront(set, options.overwrite, inputs);
  for (const SetOutput & output : set)
  {
    if (output.what != std::string("sidecar"))
    {
      const bool series = output.what == std::string("output") || output.what == std::string("echo output");
      CheckOutputWriterUpFront(output.path, series ? 4 : 3); // a series, or a 3D map
    }
  }
  // In the set's order, which StagedFiles::Commit renames in reverse: the series last.
  const std::pair<std::string, std::string *> images[] = { { "output", &outputs.series },
                                                           { "noise map", &outputs.noiseMap },
                                                           { "rank map", &outputs.rankMap },
                                                           { "g-factor map", &outputs.gfactorMap } };
  for (const SetOutput & output : set)
  {
    const std::string temporary = outputs.staged.Add(output.path);
    const auto        image = std::find_if(std::begin(images), std::end(images), [&output](const auto & slot) {
      return slot.first == output.what;
    });
    if (output.what == std::string("sidecar"))
    {
      outputs.sidecars.back().second = temporary; // the image before it is the one it describes
    }
    else if (image != std::end(images))
    {
      *image->second = temporary;
    }
    else
    {
      outputs.echoSeries.push_back(temporary);
    }
    if (output.what != std::string("sidecar") && svdlr_io::IsNiftiFileName(output.path))
    {
      outputs.sidecars.emplace_back(output.path, "");
    }
  }
}

/** The series must be finite: the first NaN or Inf is named by voxel and volume before any work. */
template <typename TSeries>
void
CheckFinite(const TSeries & series, const std::string & path)
{
  using Traits = itk::LocalLowRankSeriesTraits<TSeries>;
  const auto &      size = series.GetLargestPossibleRegion().GetSize();
  const std::size_t voxels = size[0] * size[1] * size[2];
  const std::size_t volumes = Traits::Volumes(series);
  const auto        strides = Traits::Strides(series);
  const float *     data = reinterpret_cast<const float *>(series.GetBufferPointer());
  const std::size_t values = voxels * volumes; // either layout is contiguous: one pass, the voxel found only if needed
  if (std::all_of(data, data + values, [](float value) { return std::isfinite(value); }))
  {
    return;
  }
  for (std::size_t t = 0; t < volumes; ++t)
  {
    for (std::size_t v = 0; v < voxels; ++v)
    {
      const std::size_t x = v % size[0], y = v / size[0] % size[1], z = v / (size[0] * size[1]);
      if (!std::isfinite(data[x * strides[0] + y * strides[1] + z * strides[2] + t * strides[3]]))
      {
        throw InputError("'" + path + "' holds NaN or Inf at voxel [" + std::to_string(x) + ", " + std::to_string(y) +
                         ", " + std::to_string(z) + "], volume " + std::to_string(t));
      }
    }
  }
}

/** A 3D image on the series' voxel grid and geometry, every voxel `value`. */
template <typename TSeries>
SigmaImage::Pointer
UniformMap(const TSeries & series, float value)
{
  auto map = SigmaImage::New();
  itk::LocalLowRankDenoisingDetail::CopySpatialInformation(series, *map);
  map->Allocate();
  map->FillBuffer(value);
  return map;
}

/** The steps of SeriesDenoising for a series of type TSeries (a 4D image, or a 3D image of one component per volume):
 * the series read from options.input, or `given` (already read, from DICOM), which the summary calls `inputName`. */
template <typename TSeries>
class SeriesDenoisingOf final : public SeriesDenoising
{
public:
  using Filter = itk::LocalLowRankDenoisingImageFilter<TSeries>;
  using Traits = itk::LocalLowRankSeriesTraits<TSeries>;

  SeriesDenoisingOf(const DenoiseToolOptions &              options,
                    std::unique_ptr<Outputs>                outputs,
                    typename TSeries::Pointer               given = nullptr,
                    const std::string &                     inputName = {},
                    std::shared_ptr<const PreparedSeries> prepared = nullptr, // complex or noise-scan input
                    std::shared_ptr<const EchoStack>      stack = nullptr)    // multi-echo input
    : m_Options(options)
    , m_Outputs(std::move(outputs))
    , m_Prepared(std::move(prepared))
    , m_Stack(std::move(stack))
  {
    typename TSeries::Pointer series = given;
    if (!series)
    {
      StepTimer timer(m_Outputs->steps.read);
      series = ReadInputImage<TSeries>(m_Options.input, "series", m_Outputs->seriesHeader);
    }
    const auto &                     size = series->GetLargestPossibleRegion().GetSize();
    const std::array<std::size_t, 3> grid{ { size[0], size[1], size[2] } };
    const std::size_t                volumes = Traits::Volumes(*series);
    if (volumes < 2)
    {
      throw InputError("'" + m_Options.input +
                       "' holds 1 volume: a local low-rank denoiser needs a series of at least 2");
    }
    if (!m_Outputs->seriesScannedUpFront)
    {
      StepTimer timer(m_Outputs->steps.checks);
      CheckFinite(*series, m_Options.input);
    }

    m_Filter->SetInput(series);
    if (!m_Options.mask.empty())
    {
      StepTimer timer(m_Outputs->steps.read);
      m_Mask = ReadInputImage<MaskImage>(m_Options.mask, "mask");
      CheckGrid(*m_Mask, grid, m_Options.mask, "mask");
      m_Filter->SetMaskImage(m_Mask);
    }
    if (!m_Options.noiseSigmaMap.empty())
    {
      StepTimer  timer(m_Outputs->steps.read);
      const auto sigma = ReadInputImage<SigmaImage>(m_Options.noiseSigmaMap, "noise map");
      CheckGrid(*sigma, grid, m_Options.noiseSigmaMap, "noise map");
      const float * values = sigma->GetBufferPointer();
      for (std::size_t v = 0; v < grid[0] * grid[1] * grid[2]; ++v)
      {
        if (!(std::isfinite(values[v]) && values[v] >= 0.0f))
        {
          throw InputError("the noise map '" + m_Options.noiseSigmaMap + "' holds " + std::to_string(values[v]) +
                           " at voxel [" + std::to_string(v % grid[0]) + ", " + std::to_string(v / grid[0] % grid[1]) +
                           ", " + std::to_string(v / (grid[0] * grid[1])) + "]: sigma must be finite and >= 0");
        }
      }
      m_Filter->SetNoiseSigmaImage(sigma);
    }
    else if (m_Options.noiseSigma > 0.0)
    {
      m_Filter->SetNoiseSigmaImage(UniformMap(*series, static_cast<float>(m_Options.noiseSigma)));
    }
    else if (m_Prepared && m_Prepared->sigma)
    {
      m_Filter->SetNoiseSigmaImage(m_Prepared->sigma); // from the noise volumes or scan (divided by g with --gfactor)
    }
    if (!m_Options.complex.gfactor.empty())
    {
      StepTimer timer(m_Outputs->steps.read);
      m_Filter->SetGFactorImage(ReadGFactorMap(m_Options.complex.gfactor, grid));
    }
    m_Filter->SetEstimateGFactor(m_Options.complex.estimateGFactor);
    CheckPatch(m_Options, grid, volumes);
    const std::size_t echoes = m_Stack ? m_Stack->echoes : 1;
    m_Filter->SetVolumeGroups(VolumeGroupsFor(m_Options.multiEcho, m_Options.input, volumes, echoes));

    typename Filter::PatchSizeType patch;
    for (unsigned int i = 0; i < 3; ++i)
    {
      patch[i] = m_Options.patch[i];
    }
    m_Filter->SetPatchSize(patch);
    m_Filter->SetPatchStride(m_Options.stride);
    m_Filter->SetPatchShape(m_Options.patchShape);
    m_Filter->SetPatchRadius(m_Options.patchRadius);
    m_Filter->SetAggregation(m_Options.aggregation);
    m_Filter->SetShrinkage(m_Options.shrinkage);
    m_Filter->SetNoiseEstimator(m_Options.noiseEstimator);
    m_Filter->SetStabiliseMagnitude(m_Options.complex.vst);
    m_Filter->SetRemoveNoiseFloor(m_Options.complex.noiseFloor);
    m_Filter->SetSigmaFloorCorrection(m_Options.complex.sigmaFloorCorrection);
    m_Filter->SetCoils(m_Options.complex.coils);
    // A demodulated real part (complex INPUT) is not a magnitude: its noise is Gaussian already.
    m_Filter->SetAutomaticMagnitudeModel(m_Options.complex.automaticMagnitudeModel &&
                                         !(m_Prepared && m_Prepared->demodulated));
    itk::SVDLowRankEngineBridge::SetRankPolicy(m_Filter.GetPointer(), m_Options.policy);
    m_Filter->SetDeviceMemoryLimit(m_Options.gpuMemoryLimit);
    // The series read is needed for nothing after the filter: denoised in its own buffer, it is held once (the host
    // peak at 176x176x120x200 on the GPU with the magnitude model: 9,053 -> 6,230 MiB). A complex input's magnitude
    // series stays, as writing the result takes its phase back from what it prepared.
    m_Filter->SetInPlace(!m_Prepared);
    m_Filter->WarnOnBackendFallbackOff(); // printed as a note of ours

    m_Summary.input = inputName.empty() ? m_Options.input : inputName;
    m_Summary.grid = grid;
    m_Summary.volumes = volumes;
    m_Summary.echoes = echoes;
    m_Summary.options = &m_Options;
  }

  void
  Denoise(ToolBackend backend, int deviceId, bool progressBar) override
  {
    m_Options.backend = backend;
    m_Options.deviceId = deviceId;
    m_Filter->SetBackend(backend);
    m_Filter->SetDeviceId(deviceId);
    StartSha256Of(SidecarInputs(m_Options)); // already started for a series file; a DICOM or complex input starts here
    m_Summary.seconds = UpdateWithProgress(m_Filter, progressBar);
    m_Outputs->steps.filter = m_Summary.seconds;
    m_Summary.backend = m_Filter->GetBackendUsed();
    for (unsigned int i = 0; i < 3; ++i)
    {
      m_Summary.patch[i] = m_Filter->GetPatchSizeUsed()[i];
    }
    m_Summary.patchRadius = m_Filter->GetPatchRadiusUsed();
    m_Summary.patchStride = m_Filter->GetPatchStrideUsed();
    m_Summary.magnitudeNoise = m_Filter->GetMagnitudeNoiseUsed();
    m_Summary.patchVoxels = static_cast<std::size_t>(m_Filter->GetPatchVoxelsUsed());
    m_Summary.mask = m_Mask ? m_Mask->GetBufferPointer() : nullptr;
    m_Summary.sigma = m_Filter->GetNoiseSigmaOutput()->GetBufferPointer();
    m_Summary.rank = m_Filter->GetRankOutput()->GetBufferPointer();
    m_Summary.peakDeviceBytes = m_Filter->GetPeakDeviceBytesUsed();
    m_Summary.notes = m_Filter->GetBackendNotes();
  }

  Json
  Write() override
  {
    Outputs &                outputs = *m_Outputs;
    std::optional<StepTimer> writing(std::in_place, outputs.steps.write);
    // float32 unless --output-type same (svdlr/Defaults.h); NIfTI outputs keep the input's header fields, set as they
    // are written.
    const auto component = m_Options.outputType == svdlr::kSameAsInputOutputTypeName ? outputs.inputComponent
                                                                                     : itk::IOComponentEnum::FLOAT;
    svdlr_io::ImageWriteSettings settings;
    settings.niftiFields = svdlr_io::ReadNiftiHeaderFields(m_Options.input);
    if constexpr (std::is_same_v<TSeries, Series4D>)
    {
      if (m_Prepared)
      {
        m_Prepared->Write(m_Filter->GetOutput(), outputs.series, component, settings); // |real|, real or complex
      }
      else if (m_Stack)
      {
        WriteEchoStack(*m_Stack, m_Filter->GetOutput(), outputs.series, outputs.echoSeries, m_Options.input,
                       m_Options.multiEcho, component); // the input's shape: 5D, or one file per echo
      }
    }
    if (!m_Prepared && !m_Stack)
    {
      WriteInComponentType(m_Filter->GetOutput(), outputs.series, component, settings);
    }
    if (!outputs.noiseMap.empty())
    {
      svdlr_io::WriteImageFile(m_Filter->GetNoiseSigmaOutput(), outputs.noiseMap, settings);
    }
    if (!outputs.rankMap.empty())
    {
      svdlr_io::WriteImageFile(m_Filter->GetRankOutput(), outputs.rankMap, settings);
    }
    if (!outputs.gfactorMap.empty())
    {
      svdlr_io::WriteImageFile(m_Filter->GetGFactorOutput(), outputs.gfactorMap, settings);
    }
    const std::pair<std::string, std::string> images[] = { { m_Options.output, outputs.series },
                                                           { m_Options.noiseMap, outputs.noiseMap },
                                                           { m_Options.rankMap, outputs.rankMap },
                                                           { m_Options.gfactorMap, outputs.gfactorMap } };
    // ITK's NIfTI writer only prints a full disk: when a later step beside the images fails, the incomplete image is
    // named first (VerifyWrittenFile's OutputWriteError), rather than that step's symptom.
    const auto namingAShortImage = [&images](const auto & step) {
      try
      {
        step();
      }
      catch (...)
      {
        for (const auto & [target, temporary] : images)
        {
          if (!target.empty())
          {
            svdlr_io::VerifyWrittenFile(temporary, target);
          }
        }
        throw;
      }
    };

    m_Summary.peakHostBytes = PeakResidentBytes();
    auto record = DenoiseProvenance(DenoiseToolName, m_Options, m_Summary);
    if (m_Prepared)
    {
      record.parameters.update(m_Prepared->provenance);
      const auto files = ComplexInputFiles(m_Options.complex);
      record.inputs.insert(record.inputs.end(), files.begin(), files.end());
    }
    const Json provenance = ProvenanceJson(record);
    namingAShortImage([&] {
      for (const auto & sidecar : outputs.sidecars)
      {
        // A temporary name: Commit() renames it with the images.
        WriteJsonAtomically(DenoiseSidecarJson(sidecar.first, m_Options, provenance), sidecar.second);
      }
    });
    writing.reset();
    {
      StepTimer timer(outputs.steps.verify);
      outputs.staged.Commit();
    }
    m_Summary.steps = outputs.steps;
    m_Summary.processSeconds = SecondsSinceRunStart();
    return provenance;
  }

  const DenoiseSummary &
  Summary() const override
  {
    return m_Summary;
  }

private:
  DenoiseToolOptions                    m_Options;
  std::unique_ptr<Outputs>              m_Outputs;
  std::shared_ptr<const PreparedSeries> m_Prepared;
  std::shared_ptr<const EchoStack>      m_Stack;
  typename Filter::Pointer           m_Filter{ Filter::New() };
  MaskImage::Pointer                 m_Mask;
  DenoiseSummary                     m_Summary;
};

/** The complex or noise-scan path: the series PrepareComplexSeries prepares from INPUT (or `given`), which the
 * summary calls `name` and what was prepared. */
std::unique_ptr<SeriesDenoising>
DenoisePrepared(const DenoiseToolOptions & options, std::unique_ptr<Outputs> outputs, itk::IOPixelEnum inputPixel,
                const std::string & name, const GivenSeries & given = {})
{
  const auto prepared = [&] {
    StepTimer timer(outputs->steps.read); // the images read, and the phase removed or sigma estimated from them
    return std::make_shared<const PreparedSeries>(
      PrepareComplexSeries(options.input, inputPixel, options.complex, given));
  }();
  return std::make_unique<SeriesDenoisingOf<Series4D>>(
    options, std::move(outputs), prepared->series, name + " (" + prepared->description + ")", prepared);
}

/** A DICOM folder or file: its one series, or its magnitude and phase series (SVDLowRankDicomComplexInput.h),
 * grouped into volumes (echoes, temporal positions, b-values) by the I/O library, as a 4D series. */
std::unique_ptr<SeriesDenoising>
PrepareDicom(const DenoiseToolOptions & options, std::unique_ptr<Outputs> outputs, bool announce)
{
  DicomSeriesInput input;
  {
    StepTimer timer(outputs->steps.read);
    input = ReadDicomSeriesInput(options.input, options.complex.phase, options.complex.phaseUnits);
  }
  for (std::size_t v = 0; v < input.volumeNames.size() && announce; ++v)
  {
    std::cout << "volume " << v << ":  " << input.volumeNames[v] << "\n";
  }
  if (!input.pairing.empty() && announce)
  {
    std::cout << input.pairing << "\n";
  }
  if (!input.phase && !ComplexInputRequested(options.complex, itk::IOPixelEnum::SCALAR))
  {
    return std::make_unique<SeriesDenoisingOf<Series4D>>(options, std::move(outputs), input.series, input.description);
  }
  return DenoisePrepared(options, std::move(outputs), itk::IOPixelEnum::SCALAR, input.description,
                         { input.series, input.phase, input.phaseName });
}

/** The volumes of each echo of the series whose header `io` read: its fourth axis (a 4D or 5D image), or its
 * components (a 3D image of vectors). */
std::size_t
VolumesPerEcho(const itk::ImageIOBase & io)
{
  return io.GetNumberOfDimensions() >= 4 ? io.GetDimensions(3) : io.GetNumberOfComponents();
}

} // namespace

namespace svdlr_tools
{

std::vector<SetOutput>
DenoiseOutputSet(const DenoiseToolOptions & options)
{
  std::vector<SetOutput> set;
  const auto             add = [&set](const std::string & path, const char * what) {
    set.push_back({ path, what });
    if (svdlr_io::IsNiftiFileName(path))
    {
      set.push_back({ SidecarPathFor(path), "sidecar" });
    }
  };
  add(options.output, "output");
  for (const auto & [path, what] : { std::pair{ &options.noiseMap, "noise map" },
                                     std::pair{ &options.rankMap, "rank map" },
                                     std::pair{ &options.gfactorMap, "g-factor map" } })
  {
    if (!path->empty())
    {
      add(*path, what);
    }
  }
  for (const std::string & path : options.multiEcho.echoOutputs)
  {
    add(path, "echo output");
  }
  return set;
}

std::size_t
SeriesFloatBytes(const std::string & path)
{
  std::error_code error;
  if (fs::is_directory(path, error))
  {
    return 0;
  }
  const auto io = ReadImageHeader(path, "series");
  // Not past what the file can hold: a small file whose header claims 50 GiB must not take a batch's budget (the read
  // then says it is truncated).
  const std::uint64_t storedBytes = std::max<std::size_t>(io->GetComponentSize(), 1);
  const std::uint64_t values = std::min<std::uint64_t>(io->GetImageSizeInPixels() * io->GetNumberOfComponents(),
                                                       svdlr_io::MostBytesInFile(path) / storedBytes);
  return static_cast<std::size_t>(values * sizeof(float));
}

std::unique_ptr<SeriesDenoising>
PrepareSeriesDenoising(const DenoiseToolOptions & options, bool announce, bool warmDevice)
{
  std::error_code error;
  const bool      dicomFolder = fs::is_directory(options.input, error);
  if (!dicomFolder)
  {
    CheckInputExists(options.input, "series");
  }
  CheckInputExists(options.mask, "mask");
  CheckInputExists(options.noiseSigmaMap, "noise map");
  CheckInputExists(options.complex.gfactor, "g-factor map");
  auto outputs = std::make_unique<Outputs>(options.overwrite);
  ReserveOutputs(options, *outputs);
  if (warmDevice) // the GPU's driver and context (0.25 s) beside the checks below, which decompress the series
  {
    svdlr::StartCudaDeviceWarmUp(WarmUpOptions(options).backend, options.deviceId);
  }
  {
    StepTimer timer(outputs->steps.checks);
    if (!options.mask.empty())
    {
      CheckInputFileUpFront(options.mask, "mask", false); // before ITK reads its header: the file's own words
      CheckImageDimensionUpFront(options.mask, "mask", 3);
    }
    for (const auto & [path, what] : { std::pair{ &options.noiseSigmaMap, "noise map" },
                                       std::pair{ &options.complex.gfactor, "g-factor map" } })
    {
      if (!path->empty())
      {
        CheckInputFileUpFront(*path, what, true);
        CheckImageDimensionUpFront(*path, what, 3);
      }
    }
  }
  if (IsDicomInput(options.input))
  {
    return PrepareDicom(options, std::move(outputs), announce); // an InputError where the build has no DCMTK
  }

  bool seriesScanned = false;
  {
    // Before ITK reads its header: an impossible header, a corrupt or cut stream, in the file's own words.
    StepTimer timer(outputs->steps.checks);
    seriesScanned = CheckInputFileUpFront(options.input, "series", true);
  }
  const auto io = ReadImageHeader(options.input, "series");
  CheckGradientTableUpFront(options.input, options.multiEcho, VolumesPerEcho(*io));
  if (warmDevice)
  {
    const unsigned    dimensions = io->GetNumberOfDimensions(); // 5: a multi-echo series, its echoes stacked
    const std::size_t volumes = VolumesPerEcho(*io) * (dimensions == 5 ? io->GetDimensions(4) : 1);
    svdlr::StartCudaDenoiseWarmUp(volumes, WarmUpOptions(options)); // after the context's, on its thread
  }
  // The sidecar's checksums, on their own thread: beside the decompression where cores allow (after it, a fast GPU
  // filter left the write waiting for them: 1.04 s against 0.17 s on the H100), after it on two cores or fewer.
  if (svdlr::UsableCpuThreads() > 2)
  {
    StartSha256Of(SidecarInputs(options));
  }
  if (ComplexInputRequested(options.complex, io->GetPixelType()))
  {
    // Every file of the complex series is scanned as the magnitude path's input is: ITK's NIfTI reader, and ours
    // after it, read NaN and Inf as 0, which a phase or an imaginary part would then carry on as a value.
    {
      StepTimer timer(outputs->steps.checks); // the series was checked above; the read is the demodulated part
      for (const auto & [path, what] : { std::pair{ &options.complex.phase, "phase" },
                                         std::pair{ &options.complex.imaginary, "imaginary part" },
                                         std::pair{ &options.complex.noiseScan, "noise scan" } })
      {
        if (!path->empty() && !IsDicomInput(*path))
        {
          CheckInputFileUpFront(*path, what, true);
        }
      }
    }
    return DenoisePrepared(options, std::move(outputs), io->GetPixelType(), options.input);
  }
  outputs->seriesScannedUpFront = seriesScanned;
  StartSha256Of(SidecarInputs(options)); // started above where cores allow: StartSha256Of starts each path once
  const unsigned int dimension = io->GetNumberOfDimensions();
  const unsigned int components = io->GetNumberOfComponents();
  outputs->inputComponent = io->GetComponentType();
  CheckNotSingleEchoFiveD(*io, options.input);
  if (MultiEchoRequested(options.multiEcho, dimension) && components == 1 && dimension <= 5)
  {
    std::shared_ptr<const EchoStack> stack;
    {
      StepTimer timer(outputs->steps.read);
      stack = std::make_shared<const EchoStack>(ReadEchoStack(options.input, options.multiEcho));
    }
    outputs->seriesScannedUpFront = CheckEchoFilesUpFront(options.multiEcho) && outputs->seriesScannedUpFront;
    return std::make_unique<SeriesDenoisingOf<Series4D>>(options, std::move(outputs), stack->series,
                                                         options.input + " (" + stack->description + ")", nullptr,
                                                         stack);
  }
  outputs->seriesHeader = io;
  if (dimension == 4 && components == 1)
  {
    return std::make_unique<SeriesDenoisingOf<Series4D>>(options, std::move(outputs));
  }
  if (dimension == 3 && components > 1)
  {
    return std::make_unique<SeriesDenoisingOf<SeriesVector>>(options, std::move(outputs));
  }
  if (dimension == 3 && components == 1)
  {
    throw InputError("'" + options.input +
                     "' is a 3D image, a single volume: this tool denoises a 4D series (x, y, z, volumes) of at least "
                     "2 volumes (for one volume, SVDLowRankReconstructImage reconstructs it slice by slice)");
  }
  throw InputError("'" + options.input + "' has " + std::to_string(dimension) + " dimensions and " +
                   std::to_string(components) +
                   " components per pixel: this tool reads a 4D image, or a 3D image with one component per volume");
}

} // namespace svdlr_tools
