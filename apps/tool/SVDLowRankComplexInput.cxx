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
#include "SVDLowRankComplexInput.h"
#include "SVDLowRankPngStack.h"

#include "SVDLowRankCommonOptions.h"
#include "SVDLowRankDicomComplexInput.h"
#include "SVDLowRankExitCodes.h"
#include "SVDLowRankOutputType.h"
#include "SVDLowRankProvenance.h"
#include "SVDLowRankUpFrontChecks.h"

#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itkLocalLowRankDenoisingImageFilter.h"
#include "itkSVDLowRankEngineBridge.h"
#include "svdlr/ComplexSeries.h"
#include "svdlr/MagnitudeNoise.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <future>
#include <limits>
#include <sstream>
#include <utility>
#include <vector>

namespace svdlr_tools
{
namespace
{

constexpr double kPi = 3.14159265358979323846;
using ComplexSeriesImage = itk::Image<std::complex<float>, 4>;

/** What each --phase-units name means: value x scale + offset is radians; values outside [low, high] are refused. */
struct PhaseUnit
{
  const char * name;
  double       scale, offset, low, high;
  const char * meaning;
};
constexpr PhaseUnit kPhaseUnits[] = {
  { "radians", 1.0, 0.0, -2.0 * kPi, 2.0 * kPi, "radians, within [-2 pi, 2 pi]" },
  { "degrees", kPi / 180.0, 0.0, -360.0, 360.0, "degrees, within [-360, 360]" },
  { "siemens", kPi / 4096.0, 0.0, -4096.0, 4096.0, "Siemens' rescaled 12-bit phase, -4096..4095 for -pi..pi" },
  { "siemens-unsigned", kPi / 2048.0, -kPi, 0.0, 4096.0,
    "Siemens' stored 12-bit phase without its rescale, 0..4095 for -pi..pi" },
};
// Rounding of a phase written in float32 radians may step just past pi.
constexpr double kRadianSlack = 1e-3;

const PhaseUnit &
UnitNamed(const std::string & name)
{
  for (const auto & unit : kPhaseUnits)
  {
    if (name == unit.name)
    {
      return unit;
    }
  }
  throw UsageError("--phase-units: unknown '" + name + "'");
}

/** The unit of a phase image from its range, by the rule --help gives; InputError where the range is ambiguous. */
const PhaseUnit &
InferPhaseUnit(double low, double high, const std::string & path)
{
  if (low >= -kPi - kRadianSlack && high <= 2.0 * kPi + kRadianSlack)
  {
    return UnitNamed("radians");
  }
  if (low < 0.0 && low >= -4096.0 && high <= 4096.0 && high - low > 720.0)
  {
    return UnitNamed("siemens");
  }
  std::ostringstream message;
  message << "the phase '" << path << "' ranges over [" << low << ", " << high
          << "]: neither radians ([-pi, pi] or [0, 2 pi]) nor Siemens' -4096..4095; say which with --phase-units "
             "(radians, degrees, siemens, siemens-unsigned)";
  throw InputError(message.str());
}

/** The engine's view of a 4D image (x fastest, then y, z, volume). */
template <typename TValue, typename TImage>
svdlr::SeriesView<TValue>
ViewOf(TImage & image)
{
  const auto & size = image.GetLargestPossibleRegion().GetSize();
  const auto   nx = static_cast<std::ptrdiff_t>(size[0]), ny = static_cast<std::ptrdiff_t>(size[1]),
             nz = static_cast<std::ptrdiff_t>(size[2]);
  return { image.GetBufferPointer(), { size[0], size[1], size[2] }, size[3], { 1, nx, nx * ny, nx * ny * nz } };
}
const auto InputView = [](const SeriesImage & image) { return ViewOf<const float>(image); };
const auto OutputView = [](SeriesImage & image) { return ViewOf<float>(image); };

/** A 4D image on `like`'s grid and geometry with `volumes` volumes. */
SeriesImage::Pointer
SeriesLike(const itk::ImageBase<4> & like, std::size_t volumes)
{
  auto image = SeriesImage::New();
  auto region = like.GetLargestPossibleRegion();
  region.SetSize(3, volumes);
  image->SetRegions(region);
  image->SetOrigin(like.GetOrigin());
  image->SetSpacing(like.GetSpacing());
  image->SetDirection(like.GetDirection());
  image->Allocate();
  return image;
}

/** `other` must have `reference`'s grid, and `volumes` volumes (0: any count). */
void
CheckShape(const itk::ImageBase<4> & reference, const itk::ImageBase<4> & other, std::size_t volumes,
           const std::string & path, const char * what)
{
  const auto & a = reference.GetLargestPossibleRegion().GetSize();
  const auto & b = other.GetLargestPossibleRegion().GetSize();
  if (a[0] != b[0] || a[1] != b[1] || a[2] != b[2] || (volumes > 0 && b[3] != volumes))
  {
    std::ostringstream message;
    message << "the " << what << " '" << path << "' has " << b[0] << " x " << b[1] << " x " << b[2] << " voxels and "
            << b[3] << " volumes; it must have the series' " << a[0] << " x " << a[1] << " x " << a[2] << " voxels";
    if (volumes > 0)
    {
      message << " and " << volumes << " volumes";
    }
    throw InputError(message.str());
  }
}

/** ITK's thread pool (--nthreads sets its size) as a ParallelFor over volumes: each volume's values depend on that
 * volume alone, so the result is the same on any number of threads. */
svdlr::ParallelFor
VolumeParallelFor()
{
  return [threader = itk::MultiThreaderBase::New()](std::size_t n, const std::function<void(std::size_t)> & body) {
    itk::SVDLowRankEngineBridge::MakeParallelFor(threader.GetPointer())(n, body);
  };
}

/** Runs an engine call; its NaN/Inf and argument errors are the input's (exit code 3). */
template <typename TCall>
auto
Engine(const TCall & call)
{
  try
  {
    return call();
  }
  catch (const svdlr::Error & error)
  {
    if (error.Code() == svdlr::ErrorCode::NonFiniteInput || error.Code() == svdlr::ErrorCode::InvalidArgument)
    {
      throw InputError(error.what());
    }
    throw;
  }
}

/** The voxels of one slice of `image`: the unit of the read step's parallel loops, many more of them than threads
 * (a volume a task left a quarter of 16 threads idle in the last round of 65 volumes). */
std::size_t
PlaneSize(const SeriesImage & image)
{
  const auto & size = image.GetLargestPossibleRegion().GetSize();
  return size[0] * size[1];
}

/** The least and greatest of values[0, count), a slice a task; NaN for both when any value is NaN or infinite. */
std::pair<float, float>
FiniteRange(const float * values, std::size_t count, std::size_t plane)
{
  const std::size_t                    planes = plane > 0 ? count / plane : 0;
  std::vector<std::pair<float, float>> ranges(planes);
  if (planes == 0)
  {
    return { 0.0f, 0.0f };
  }
  VolumeParallelFor()(planes, [&](std::size_t p) {
    float low = values[p * plane], high = low;
    bool  finite = true;
    for (std::size_t i = p * plane; i < (p + 1) * plane; ++i)
    {
      finite = finite && std::isfinite(values[i]);
      low = std::min(low, values[i]);
      high = std::max(high, values[i]);
    }
    constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
    ranges[p] = finite ? std::pair{ low, high } : std::pair{ kNaN, kNaN };
  });
  std::pair<float, float> range = ranges.front();
  for (const auto & [low, high] : ranges)
  {
    if (!std::isfinite(low))
    {
      return { low, high };
    }
    range = { std::min(range.first, low), std::max(range.second, high) };
  }
  return range;
}

/** The complex series (real, imaginary) from INPUT and --phase or --imaginary (or `given`), or from a complex file. */
std::pair<SeriesImage::Pointer, SeriesImage::Pointer>
ReadComplex(const std::string & input, itk::IOPixelEnum inputPixel, const ComplexInputOptions & options,
            const GivenSeries & given, PreparedSeries & prepared)
{
  if (inputPixel == itk::IOPixelEnum::COMPLEX)
  {
    const auto complexImage = ReadInputImage<ComplexSeriesImage>(input, "complex series");
    auto       real = SeriesLike(*complexImage, complexImage->GetLargestPossibleRegion().GetSize()[3]);
    auto       imag = SeriesLike(*complexImage, complexImage->GetLargestPossibleRegion().GetSize()[3]);
    const auto count = real->GetLargestPossibleRegion().GetNumberOfPixels();
    for (std::size_t i = 0; i < count; ++i)
    {
      real->GetBufferPointer()[i] = complexImage->GetBufferPointer()[i].real();
      imag->GetBufferPointer()[i] = complexImage->GetBufferPointer()[i].imag();
    }
    prepared.description = "complex series";
    return { real, imag };
  }
  // The second image (imaginary part or phase) is read and decompressed on its own thread, beside the first.
  const bool         imaginaryGiven = !options.imaginary.empty();
  const std::string &secondPath = imaginaryGiven ? options.imaginary : given.phase ? given.phaseName : options.phase;
  const char *       secondWhat = imaginaryGiven ? "imaginary part" : "phase";
  auto secondRead = std::async(std::launch::async, [&secondPath, secondWhat, imaginaryGiven, &given, &options] {
    return imaginaryGiven ? ReadInputImage<SeriesImage>(secondPath, secondWhat)
           : given.phase  ? given.phase
                          : ReadPhaseInput(secondPath, options.phaseUnits); // an image file, or DICOM
  });
  auto       first = given.series ? given.series : ReadInputImage<SeriesImage>(input, "series");
  auto       second = secondRead.get();
  const auto volumes = first->GetLargestPossibleRegion().GetSize()[3];
  CheckShape(*first, *second, volumes, secondPath, secondWhat);
  if (imaginaryGiven)
  {
    prepared.description = "real and imaginary parts";
    return { first, second };
  }
  // Magnitude and phase.
  const auto phase = second;
  const auto count = phase->GetLargestPossibleRegion().GetNumberOfPixels();
  const auto [low, high] = FiniteRange(phase->GetBufferPointer(), count, PlaneSize(*phase));
  if (!std::isfinite(low) || !std::isfinite(high))
  {
    throw InputError("the phase '" + secondPath + "' holds NaN or Inf");
  }
  const PhaseUnit & unit =
    options.phaseUnits == "auto" ? InferPhaseUnit(low, high, secondPath) : UnitNamed(options.phaseUnits);
  if (low < unit.low - kRadianSlack || high > unit.high + kRadianSlack)
  {
    std::ostringstream message;
    message << "the phase '" << secondPath << "' ranges over [" << low << ", " << high << "], outside "
            << unit.meaning << " (--phase-units " << unit.name << ")";
    throw InputError(message.str());
  }
  auto              imag = SeriesLike(*first, volumes);
  const std::size_t plane = PlaneSize(*first); // a task a slice of a volume: many more tasks than threads
  float * const     magnitudes = first->GetBufferPointer(); // becomes the real part
  const float *     angles = phase->GetBufferPointer();
  float * const     imaginary = imag->GetBufferPointer();
  VolumeParallelFor()(count / plane, [&](std::size_t p) {
    for (std::size_t i = p * plane; i < (p + 1) * plane; ++i)
    {
      // The cosine and sine in float: the parts are float, and float's sincos costs half of double's (this loop
      // was the read step's largest cost); the angle itself is scaled in double.
      const auto  angle = static_cast<float>(angles[i] * unit.scale + unit.offset);
      const float magnitude = magnitudes[i];
      magnitudes[i] = magnitude * std::cos(angle);
      imaginary[i] = magnitude * std::sin(angle);
    }
  });
  prepared.description = std::string("magnitude and phase (") + unit.name + ")";
  prepared.provenance["phaseUnits"] = unit.name;
  return { first, imag };
}

/** sigma per voxel from a noise scan (complex: real and imaginary; magnitude: root-sum-of-squares of coils). */
SigmaMapImage::Pointer
SigmaFromNoise(const SeriesImage & first, const SeriesImage * imag, const ComplexInputOptions & options,
               const char * source, PreparedSeries & prepared)
{
  svdlr::NoiseScanOptions scanOptions;
  scanOptions.coils = imag ? 1 : options.coils;
  const auto & size = first.GetLargestPossibleRegion().GetSize();
  const auto   gfactor = ReadGFactorMap(options.gfactor, { { size[0], size[1], size[2] } });
  scanOptions.gfactor = gfactor ? gfactor->GetBufferPointer() : nullptr;
  auto map = SigmaMapImage::New();
  itk::LocalLowRankDenoisingDetail::CopySpatialInformation(first, *map);
  map->Allocate();
  const auto                     firstView = InputView(first);
  svdlr::SeriesView<const float> imagView{};
  if (imag)
  {
    imagView = InputView(*imag);
  }
  const auto estimate =
    Engine([&] { return svdlr::EstimateNoiseFromScan(firstView, imagView, map->GetBufferPointer(), scanOptions); });
  std::ostringstream text;
  text << ", sigma " << estimate.sigma << " from " << firstView.volumes << " " << source << " ("
       << (imag ? "complex" : scanOptions.coils == 1 ? "Rayleigh" : "chi, " + std::to_string(scanOptions.coils) + " coils")
       << (estimate.uniform ? ", one sigma for the image: the scan is too small for a map)" : ", a map)")
       << (gfactor ? ", divided by the g-factor: sigma where g = 1" : "");
  prepared.description += text.str();
  prepared.provenance["noiseScanSigma"] = JsonNumber(estimate.sigma);
  prepared.provenance["noiseScanUniform"] = estimate.uniform;
  return map;
}

} // namespace

SeriesImage::Pointer
VolumesOf(const SeriesImage & series, std::size_t first, std::size_t count)
{
  auto          out = SeriesLike(series, count);
  const auto &  size = series.GetLargestPossibleRegion().GetSize();
  const float * from = series.GetBufferPointer() + first * size[0] * size[1] * size[2];
  std::copy(from, from + out->GetLargestPossibleRegion().GetNumberOfPixels(), out->GetBufferPointer());
  return out;
}

void
CheckGrid(const itk::ImageBase<3> & map, const std::array<std::size_t, 3> & grid, const std::string & path,
          const char * what)
{
  const auto & size = map.GetLargestPossibleRegion().GetSize();
  if (size[0] != grid[0] || size[1] != grid[1] || size[2] != grid[2])
  {
    std::ostringstream message;
    message << "the " << what << " '" << path << "' has " << size[0] << " x " << size[1] << " x " << size[2]
            << " voxels, the series " << grid[0] << " x " << grid[1] << " x " << grid[2];
    throw InputError(message.str());
  }
}

SigmaMapImage::Pointer
ReadGFactorMap(const std::string & path, const std::array<std::size_t, 3> & grid)
{
  if (path.empty())
  {
    return nullptr;
  }
  auto map = ReadInputImage<SigmaMapImage>(path, "g-factor map");
  CheckGrid(*map, grid, path, "g-factor map");
  const std::string problem = svdlr::GFactorMapProblem(map->GetBufferPointer(), grid);
  if (!problem.empty())
  {
    throw InputError("the " + problem + " ('" + path + "')");
  }
  return map;
}

PreparedSeries
PrepareComplexSeries(const std::string &         input,
                     itk::IOPixelEnum            inputPixel,
                     const ComplexInputOptions & options,
                     const GivenSeries &         given)
{
  PreparedSeries prepared;
  prepared.output = options.output;
  const bool complexData = inputPixel == itk::IOPixelEnum::COMPLEX || !options.phase.empty() || given.phase ||
                           !options.imaginary.empty();
  if (options.phase.empty() && !given.phase && options.phaseUnits != "auto")
  {
    throw UsageError("--phase-units names the unit of a phase: give --phase FILE, or a DICOM folder of a magnitude "
                     "series and its phase series");
  }
  if (!complexData && options.output != "magnitude")
  {
    throw UsageError("--complex-output " + options.output + " needs complex input (--phase, --imaginary or complex64)");
  }
  if (complexData && MagnitudeNoiseModel(options).Active())
  {
    throw UsageError(std::string(FirstMagnitudeOption(options)) +
                     " is for a magnitude series: a complex INPUT has its phase removed, and the real part's noise "
                     "is already Gaussian, without a floor");
  }
  SeriesImage::Pointer first, imag;
  if (complexData)
  {
    std::tie(first, imag) = ReadComplex(input, inputPixel, options, given, prepared);
  }
  else
  {
    first = given.series ? given.series : ReadInputImage<SeriesImage>(input, "series");
    prepared.description = "magnitude";
  }
  const std::size_t all = first->GetLargestPossibleRegion().GetSize()[3];
  const std::size_t signal = all - std::min<std::size_t>(all, options.noiseVolumes);
  if (signal < 2)
  {
    throw InputError("'" + input + "' holds " + std::to_string(all) + " volumes: with --noise-volumes " +
                     std::to_string(options.noiseVolumes) + " fewer than 2 are left to denoise");
  }
  if (options.noiseVolumes > 0)
  {
    const auto noiseFirst = VolumesOf(*first, signal, options.noiseVolumes);
    const auto noiseImag = imag ? VolumesOf(*imag, signal, options.noiseVolumes) : nullptr;
    prepared.sigma = SigmaFromNoise(*noiseFirst, noiseImag.GetPointer(), options, "noise volumes", prepared);
    first = VolumesOf(*first, 0, signal);
    imag = imag ? VolumesOf(*imag, 0, signal) : nullptr;
  }
  else if (!options.noiseScan.empty())
  {
    itk::IOPixelEnum scanPixel = itk::IOPixelEnum::SCALAR;
    if (auto io = svdlr_io::CreateCheckedReadImageIO(options.noiseScan))
    {
      io->SetFileName(options.noiseScan);
      io->ReadImageInformation();
      scanPixel = io->GetPixelType();
    }
    SeriesImage::Pointer scanFirst, scanImag;
    if (scanPixel == itk::IOPixelEnum::COMPLEX)
    {
      PreparedSeries ignored;
      std::tie(scanFirst, scanImag) = ReadComplex(options.noiseScan, scanPixel, {}, {}, ignored);
    }
    else
    {
      scanFirst = ReadInputImage<SeriesImage>(options.noiseScan, "noise scan");
    }
    CheckShape(*first, *scanFirst, 0, options.noiseScan, "noise scan");
    prepared.sigma = SigmaFromNoise(*scanFirst, scanImag.GetPointer(), options, "noise-scan volumes", prepared);
  }
  if (!complexData)
  {
    prepared.series = first;
    return prepared;
  }
  prepared.series = SeriesLike(*first, signal);
  prepared.demodulated = true;
  // The phase is kept only to be put back (--complex-output complex): the magnitude and the real part do not need it.
  if (options.output == "complex")
  {
    prepared.phase = SeriesLike(*first, signal);
  }
  svdlr::PhaseDemodulationOptions demodulation;
  demodulation.filterSigma = options.phaseFilter;
  demodulation.parallelFor = VolumeParallelFor();
  Engine([&] {
    svdlr::DemodulatePhase(InputView(*first), InputView(*imag),
                           prepared.phase ? OutputView(*prepared.phase) : svdlr::SeriesView<float>{},
                           OutputView(*prepared.series), {}, demodulation);
    return 0;
  });
  std::ostringstream filter;
  filter << ", phase removed (Gaussian " << options.phaseFilter[0] << "," << options.phaseFilter[1] << ","
         << options.phaseFilter[2] << " voxels)";
  prepared.description += filter.str();
  prepared.provenance["phaseFilter"] = { JsonNumber(options.phaseFilter[0]),
                                         JsonNumber(options.phaseFilter[1]),
                                         JsonNumber(options.phaseFilter[2]) };
  prepared.provenance["complexOutput"] = options.output;
  return prepared;
}

void
PreparedSeries::Write(const SeriesImage *                 denoised,
                      const std::string &                  path,
                      itk::IOComponentEnum                 component,
                      const svdlr_io::ImageWriteSettings & settings) const
{
  const auto count = denoised->GetLargestPossibleRegion().GetNumberOfPixels();
  if (!demodulated || output == "real")
  {
    WriteInComponentType(denoised, path, component, settings);
    return;
  }
  if (output == "magnitude")
  {
    auto magnitude = SeriesLike(*denoised, denoised->GetLargestPossibleRegion().GetSize()[3]);
    std::transform(denoised->GetBufferPointer(), denoised->GetBufferPointer() + count, magnitude->GetBufferPointer(),
                   [](float value) { return std::abs(value); });
    WriteInComponentType(magnitude.GetPointer(), path, component, settings);
    return;
  }
  auto real = SeriesLike(*denoised, denoised->GetLargestPossibleRegion().GetSize()[3]);
  auto imag = SeriesLike(*denoised, denoised->GetLargestPossibleRegion().GetSize()[3]);
  svdlr::RemodulatePhase(InputView(*denoised), InputView(*phase), OutputView(*real), OutputView(*imag));
  auto complexImage = ComplexSeriesImage::New();
  complexImage->SetRegions(denoised->GetLargestPossibleRegion());
  complexImage->CopyInformation(denoised);
  complexImage->Allocate();
  for (std::size_t i = 0; i < count; ++i)
  {
    complexImage->GetBufferPointer()[i] = { real->GetBufferPointer()[i], imag->GetBufferPointer()[i] };
  }
  svdlr_io::WriteImageFile(complexImage.GetPointer(), path, settings);
}

} // namespace svdlr_tools
