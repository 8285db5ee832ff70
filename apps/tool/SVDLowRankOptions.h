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
#ifndef SVDLowRankOptions_h
#define SVDLowRankOptions_h

// Command-line options of SVDLowRankReconstructImage: parsing, defaults, help text, exit codes.

#include "SVDLowRankExitCodes.h"
#include "itkSVDLowRankReconstructionEnums.h"
#include "svdlr/Names.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#ifndef SVDLR_DEFAULT_INPUT // set by apps/CMakeLists.txt from test/test-data.env
#  error "SVDLR_DEFAULT_INPUT, the tool's default input, must be defined"
#endif

namespace svdlr_examples
{

// Exit codes scripts can rely on, and the errors behind them: the same for every tool.
using svdlr_tools::ExitFailure;
using svdlr_tools::ExitInputError;
using svdlr_tools::ExitSuccess;
using svdlr_tools::ExitUsage;
using svdlr_tools::InputError;
using svdlr_tools::UsageError;

/** The filter's enum TItkEnum from the engine's lower-case name of the same value (svdlr/Names.h). The two enums
 * list the same values in the same order (checked below), so the engine's table serves the tool too. */
template <typename TItkEnum, typename TEngineEnum>
TItkEnum
ParseEngineName(const std::string & option, const std::string & name, const std::string & names)
{
  TEngineEnum value{};
  if (!svdlr::ParseName(name, value))
  {
    throw UsageError(option + " must be " + names + ", got '" + name + "'");
  }
  return static_cast<TItkEnum>(value);
}
static_assert(static_cast<int>(itk::SVDLowRankReconstructionEnums::Backend::CUDA) ==
                static_cast<int>(svdlr::Backend::CUDA) &&
              static_cast<int>(itk::SVDLowRankReconstructionEnums::Backend::CPU) == static_cast<int>(svdlr::Backend::CPU),
              "the filter's and the engine's Backend enums must list the same values in the same order");
static_assert(static_cast<int>(itk::SVDLowRankReconstructionEnums::Solver::Subspace) ==
                static_cast<int>(svdlr::Solver::Subspace) &&
              static_cast<int>(itk::SVDLowRankReconstructionEnums::Solver::Exact) ==
                static_cast<int>(svdlr::Solver::Exact),
              "the filter's and the engine's Solver enums must list the same values in the same order");

/** How the output is written: one file through ITK, a folder of PNG slices, or a folder of DICOM files. */
enum class OutputKind
{
  File,
  PngStack,
  DicomSeries
};

struct ToolOptions
{
  std::vector<std::string>                    inputs{ SVDLR_DEFAULT_INPUT }; // one path, or several DICOM files
  std::string                                 output;                        // empty: derived from the input
  std::string                                 format{ "auto" };              // auto, nifti, mha, mhd, nrrd, png, dicom
  std::string                                 figure;
  unsigned int                                rank{ 20 };
  bool                                        rankGiven{ false };    // --rank on the command line
  double                                      energyFraction{ 0.0 }; // > 0 selects the energy policy
  std::string                                 noiseRank;             // gd, mp, mp-cg: the rank from the noise
  double                                      noiseSigma{ 0.0 };     // > 0: Gavish-Donoho with this known σ
  int                                         sliceAxis{ -1 };       // -1: the last axis
  itk::SVDLowRankReconstructionEnums::Backend backend{ itk::SVDLowRankReconstructionEnums::Backend::Auto };
  itk::SVDLowRankReconstructionEnums::Solver  solver{ itk::SVDLowRankReconstructionEnums::Solver::Auto };
  int                                         deviceId{ 0 };
  std::string                                 series; // DICOM SeriesInstanceUID or number in the list
  bool                                        listSeries{ false };
  bool                                        requireVolume{ false }; // refuse DICOM series that form no volume
  bool                                        overwrite{ false }; // replace an existing output folder
  bool                                        noFigure{ false };
  bool                                        help{ false };

  const std::string &
  Input() const
  {
    return inputs.front();
  }
};

inline std::string
UsageText(bool dicomSupport)
{
  return std::string(
           "Usage: SVDLowRankReconstructImage [options] [INPUT [OUTPUT]]\n"
           "\n"
           "Replaces each slice of a 3D volume (or a 2D image) by its rank-k truncated SVD reconstruction.\n"
           "\n"
           "INPUT is one of\n"
           "  - an image file ITK reads (NIfTI, MHA/MHD, NRRD, PNG, ...);\n"
           "  - a folder of DICOM files (searched recursively) or DICOM files (-i A.dcm -i B.dcm ...): the\n"
           "    slices of one series, ordered by position along the slice normal;\n"
           "  - a folder of 2D PNG slices, stacked in natural name order (slice2 before slice10).\n"
           "Default INPUT: the Colin27 brain " SVDLR_DEFAULT_INPUT " (Debian package mricron-data).\n"
           "\n"
           "OUTPUT is a file whose extension picks the format (.nii.gz, .nii, .mha, .mhd, .nrrd, .png for\n"
           "2D), or a folder: a DICOM series (a derived series of the input's) or PNG slices. Without\n"
           "--format a folder gets the input's kind. Default: <input name>_svdlr.nii.gz here.\n"
           "Outputs appear only when complete: an error leaves no partial output and never touches the input.\n"
           "\n"
           "Options:\n"
           "  -i, --input PATH        the input (repeat for several DICOM files of one series)\n"
           "  -o, --output PATH       the output file or folder\n"
           "  -F, --format NAME       auto (default), nifti, mha, mhd, nrrd, png (slices) or dicom (series)\n"
           "      --overwrite         replace an existing, non-empty output folder\n"
           "  -k, --rank K            keep K singular values per slice (default 20)\n"
           "  -e, --energy F          keep the fewest singular values holding fraction F in (0, 1] of each\n"
           "                          slice's energy, instead of a fixed rank\n"
           "      --noise-rank NAME   keep, per slice, the singular values that stand out of the noise, with\n"
           "                          the noise level sigma estimated per slice: gd (Gavish-Donoho optimal\n"
           "                          hard threshold), mp (Marchenko-Pastur, MP-PCA as MRtrix3 dwidenoise)\n"
           "                          or mp-cg (Marchenko-Pastur with Cordero-Grande's estimator, dwidenoise\n"
           "                          -estimator Exp2), instead of a fixed rank\n"
           "      --noise-sigma S     Gavish-Donoho with a known noise sigma S > 0 (pixel units) per pixel\n"
           "  -a, --slice-axis D      axis normal to the slices: 0, 1 or 2 (default: the last axis)\n"
           "  -b, --backend NAME      auto (default), cpu or cuda\n"
           "      --solver NAME       auto (default), exact or subspace: how the GPU finds the leading\n"
           "                          singular values (subspace: faster at small ranks, needs --rank; the\n"
           "                          CPU is always exact)\n"
           "  -d, --device N          CUDA device (default 0)\n"
           "  -l, --list-series       list the DICOM series in INPUT and exit\n"
           "  -s, --series UID        the DICOM series to read: its SeriesInstanceUID or its number in\n"
           "                          --list-series (needed when INPUT holds several)\n"
           "      --require-volume    refuse a DICOM series that is not one volume; by default a 4D series\n"
           "                          (echoes, phases, b-values) is read volume by volume, and one that forms\n"
           "                          no volume (localizer, projections, mixed sizes) image by image, each\n"
           "                          written with its own geometry\n"
           "  -f, --figure PNG        figure of the middle slice (default: <output name>_figure.png)\n"
           "      --no-figure         do not write the figure\n"
           "  -h, --help              show this help\n"
           "\n"
           "DICOM support: ") +
         (dicomSupport ? "yes (DCMTK: uncompressed, RLE, JPEG and JPEG-LS series; 8- and 16-bit pixels)"
                       : "NOT AVAILABLE in this build (DCMTK was not found when it was built)") +
         "\n"
         "\n"
         "Example:\n"
         "  SVDLowRankReconstructImage --rank 20 ch2.nii.gz ch2_rank20.nii.gz\n"
         "  SVDLowRankReconstructImage --list-series dicom/\n"
         "  SVDLowRankReconstructImage --energy 0.99 --series 2 dicom/ dicom_svd/   (a derived DICOM series)\n"
         "  SVDLowRankReconstructImage --rank 10 slices/ slices_rank10/             (PNG slices in and out)\n"
         "  SVDLowRankReconstructImage --noise-rank mp noisy.nii.gz denoised.nii.gz (rank and sigma per slice)\n"
         "\n"
         "Exit codes: 0 success, 1 processing or writing failed, 2 bad command line or output in the way,\n"
         "3 unreadable or unsupported input.\n";
}

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

/** "20 (all 181 slices)" or a run-length list such as "0 x5, 3, 4 x2, ...". */
template <typename TRank>
std::string
DescribeRanks(const std::vector<TRank> & ranks)
{
  std::ostringstream text;
  for (std::size_t i = 0; i < ranks.size();)
  {
    std::size_t j = i;
    while (j < ranks.size() && ranks[j] == ranks[i])
    {
      ++j;
    }
    if (i == 0 && j == ranks.size())
    {
      text << ranks[i] << " (all " << ranks.size() << " slices)";
      return text.str();
    }
    text << (i > 0 ? ", " : "") << ranks[i];
    if (j - i > 1)
    {
      text << " x" << (j - i);
    }
    i = j;
  }
  return text.str();
}

/** "9.87 to 10.3" (the range of the finite values), "10" when they are all equal, "" when none is finite. */
inline std::string
DescribeRange(const std::vector<double> & values)
{
  bool   any = false;
  double low = 0.0, high = 0.0;
  for (const double v : values)
  {
    if (v == v && v - v == 0.0) // finite
    {
      low = any ? std::min(low, v) : v;
      high = any ? std::max(high, v) : v;
      any = true;
    }
  }
  std::ostringstream text;
  if (any)
  {
    text << low;
    if (high != low)
    {
      text << " to " << high;
    }
  }
  return text.str();
}

/** Whether `path` names a file by an image extension ITK writes (not a folder). */
inline bool
HasImageFileExtension(const std::string & path)
{
  if (path.empty() || path.back() == '/')
  {
    return false;
  }
  std::string name = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  for (auto & c : name)
  {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  for (const char * extension : { ".nii",
                                  ".nii.gz",
                                  ".mha",
                                  ".mhd",
                                  ".nrrd",
                                  ".nhdr",
                                  ".png",
                                  ".tif",
                                  ".tiff",
                                  ".hdr",
                                  ".img",
                                  ".img.gz",
                                  ".vtk",
                                  ".gipl",
                                  ".gipl.gz",
                                  ".jpg",
                                  ".jpeg",
                                  ".bmp" })
  {
    const std::string e = extension;
    if (name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0)
    {
      return true;
    }
  }
  return false;
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
    std::string lower = options.output;
    for (auto & c : lower)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (dimension == 3 && lower.size() > 4 && lower.compare(lower.size() - 4, 4, ".png") == 0)
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

inline ToolOptions
ParseToolOptions(int argc, char * argv[])
{
  ToolOptions              options;
  std::vector<std::string> positional;
  std::vector<std::string> inputs;
  auto                     value = [&](int & i, const std::string & flag) -> std::string {
    if (i + 1 >= argc)
    {
      throw UsageError(flag + " needs a value");
    }
    return argv[++i];
  };
  auto number = [](const std::string & flag, const std::string & text) {
    char *       end = nullptr;
    const double parsed = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0')
    {
      throw UsageError(flag + " expects a number, got '" + text + "'");
    }
    return parsed;
  };

  for (int i = 1; i < argc; ++i)
  {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help")
    {
      options.help = true;
    }
    else if (arg == "-i" || arg == "--input")
    {
      inputs.push_back(value(i, arg));
    }
    else if (arg == "-o" || arg == "--output")
    {
      options.output = value(i, arg);
    }
    else if (arg == "-F" || arg == "--format")
    {
      options.format = value(i, arg);
      if (options.format == "nii" || options.format == "nii.gz")
        options.format = "nifti";
      if (options.format != "auto" && options.format != "nifti" && options.format != "mha" && options.format != "mhd" &&
          options.format != "nrrd" && options.format != "png" && options.format != "dicom")
      {
        throw UsageError("--format must be auto, nifti, mha, mhd, nrrd, png or dicom, got '" + options.format + "'");
      }
    }
    else if (arg == "--overwrite")
    {
      options.overwrite = true;
    }
    else if (arg == "-k" || arg == "--rank")
    {
      const double k = number(arg, value(i, arg));
      if (k < svdlr::kMinimumRank || k != static_cast<unsigned int>(k))
      {
        throw UsageError("--rank must be a whole number >= " + std::to_string(svdlr::kMinimumRank));
      }
      options.rank = static_cast<unsigned int>(k);
      options.rankGiven = true;
    }
    else if (arg == "-e" || arg == "--energy")
    {
      options.energyFraction = number(arg, value(i, arg));
      if (!(options.energyFraction > 0.0 && options.energyFraction <= 1.0))
      {
        throw UsageError("--energy must be in (0, 1]");
      }
    }
    else if (arg == "--noise-rank")
    {
      options.noiseRank = value(i, arg);
      svdlr::RankPolicy policy;
      if (!svdlr::ParseNoiseRank(options.noiseRank, policy))
      {
        throw UsageError("--noise-rank must be " + svdlr::NoiseRankNames() + ", got '" + options.noiseRank + "'");
      }
    }
    else if (arg == "--noise-sigma")
    {
      options.noiseSigma = number(arg, value(i, arg));
      if (!(options.noiseSigma > 0.0 && options.noiseSigma < HUGE_VAL))
      {
        throw UsageError("--noise-sigma must be a finite number > 0");
      }
    }
    else if (arg == "-a" || arg == "--slice-axis")
    {
      const double axis = number(arg, value(i, arg));
      if (axis != 0 && axis != 1 && axis != 2)
      {
        throw UsageError("--slice-axis must be 0, 1 or 2");
      }
      options.sliceAxis = static_cast<int>(axis);
    }
    else if (arg == "-b" || arg == "--backend")
    {
      options.backend = ParseEngineName<itk::SVDLowRankReconstructionEnums::Backend, svdlr::Backend>(
        arg, value(i, arg), svdlr::BackendNames());
    }
    else if (arg == "--solver")
    {
      options.solver = ParseEngineName<itk::SVDLowRankReconstructionEnums::Solver, svdlr::Solver>(
        arg, value(i, arg), svdlr::SolverNames());
    }
    else if (arg == "-d" || arg == "--device")
    {
      const double device = number(arg, value(i, arg));
      if (device < 0 || device != static_cast<int>(device))
      {
        throw UsageError("--device must be a whole number >= 0");
      }
      options.deviceId = static_cast<int>(device);
    }
    else if (arg == "--require-volume")
    {
      options.requireVolume = true;
    }
    else if (arg == "-l" || arg == "--list-series")
    {
      options.listSeries = true;
    }
    else if (arg == "-s" || arg == "--series")
    {
      options.series = value(i, arg);
    }
    else if (arg == "-f" || arg == "--figure")
    {
      options.figure = value(i, arg);
    }
    else if (arg == "--no-figure")
    {
      options.noFigure = true;
    }
    else if (arg.size() > 1 && arg[0] == '-')
    {
      throw UsageError("unknown option '" + arg + "'");
    }
    else
    {
      positional.push_back(arg);
    }
  }
  // INPUT [OUTPUT] as positional arguments, unless given with -i / -o.
  if (!inputs.empty() && options.output.empty() && positional.size() == 1)
  {
    options.output = positional[0];
  }
  else if (!inputs.empty() && !positional.empty())
  {
    throw UsageError("give the input either with -i or as the first path, not both");
  }
  else
  {
    if (positional.size() > (options.output.empty() ? 2u : 1u))
    {
      throw UsageError("expected at most INPUT and OUTPUT, got " + std::to_string(positional.size()) +
                       " paths (several DICOM files go with -i each)");
    }
    if (!positional.empty())
    {
      inputs.push_back(positional[0]);
    }
    if (positional.size() == 2)
    {
      options.output = positional[1];
    }
  }
  if (!inputs.empty())
  {
    options.inputs = inputs;
  }
  if (options.noiseSigma > 0.0)
  {
    if (!options.noiseRank.empty() && options.noiseRank != "gd")
    {
      throw UsageError("--noise-sigma sets Gavish-Donoho's sigma: it does not go with --noise-rank " +
                       options.noiseRank);
    }
    options.noiseRank = "gd";
  }
  if (!options.noiseRank.empty() && (options.rankGiven || options.energyFraction > 0.0))
  {
    throw UsageError("give one of --rank, --energy and --noise-rank/--noise-sigma");
  }
  if (options.solver == itk::SVDLowRankReconstructionEnums::Solver::Subspace && options.energyFraction > 0.0)
  {
    throw UsageError("--solver subspace needs --rank: --energy needs every singular value");
  }
  if (options.solver == itk::SVDLowRankReconstructionEnums::Solver::Subspace && !options.noiseRank.empty())
  {
    throw UsageError("--solver subspace needs --rank: --noise-rank needs every singular value");
  }
  return options;
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

} // namespace svdlr_examples

#endif
