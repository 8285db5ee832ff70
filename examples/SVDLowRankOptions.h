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

#include "itkSVDLowRankReconstructionEnums.h"

#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef SVDLR_DEFAULT_INPUT
#  define SVDLR_DEFAULT_INPUT "/usr/share/mricron/templates/ch2.nii.gz"
#endif

namespace svdlr_examples
{

// Exit codes scripts can rely on.
constexpr int ExitSuccess = 0;
constexpr int ExitFailure = 1;    // processing or writing failed
constexpr int ExitUsage = 2;      // bad command line
constexpr int ExitInputError = 3; // the input cannot be read or is not supported

class UsageError : public std::runtime_error
{
public:
  using std::runtime_error::runtime_error;
};

struct ToolOptions
{
  std::string                                 input{ SVDLR_DEFAULT_INPUT };
  std::string                                 output;
  std::string                                 figure;
  unsigned int                                rank{ 20 };
  double                                      energyFraction{ 0.0 }; // > 0 selects the energy policy
  int                                         sliceAxis{ -1 };       // -1: the last axis
  itk::SVDLowRankReconstructionEnums::Backend backend{ itk::SVDLowRankReconstructionEnums::Backend::Auto };
  int                                         deviceId{ 0 };
  bool                                        help{ false };
};

inline std::string
UsageText()
{
  return "Usage: SVDLowRankReconstructImage [options] [INPUT [OUTPUT]]\n"
         "\n"
         "Replaces each slice of a 3D volume (or a 2D image) by its rank-k truncated SVD reconstruction.\n"
         "INPUT is any scalar image ITK reads (NIfTI, PNG, MHA/MHD, NRRD); default: the Colin27 brain\n"
         "  " SVDLR_DEFAULT_INPUT " (Debian package mricron-data).\n"
         "OUTPUT's extension picks the format; default: <input name>_svdlr.nii.gz in the current directory.\n"
         "\n"
         "Options:\n"
         "  -k, --rank K            keep K singular values per slice (default 20)\n"
         "  -e, --energy F          keep the fewest singular values holding fraction F in (0, 1] of each\n"
         "                          slice's energy, instead of a fixed rank\n"
         "  -a, --slice-axis D      axis normal to the slices: 0, 1 or 2 (default: the last axis)\n"
         "  -b, --backend NAME      auto (default), cpu or cuda\n"
         "  -d, --device N          CUDA device (default 0)\n"
         "  -f, --figure PNG        figure of the middle slice (default: <output name>_figure.png)\n"
         "      --no-figure         do not write the figure\n"
         "  -h, --help              show this help\n"
         "\n"
         "Example:\n"
         "  SVDLowRankReconstructImage --rank 20 ch2.nii.gz ch2_rank20.nii.gz\n"
         "\n"
         "Exit codes: 0 success, 1 processing failed, 2 bad command line, 3 unreadable input.\n";
}

/** `path` with a hidden temporary name in the same directory and the same extension (which picks
 * ITK's writer), e.g. out/brain.nii.gz -> out/.brain.partial.nii.gz. */
inline std::string
TemporaryNameFor(const std::string & path)
{
  const std::size_t slash = path.find_last_of('/');
  const std::string directory = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::size_t dot = name.find('.', 1);
  const std::string stem = dot == std::string::npos ? name : name.substr(0, dot);
  const std::string extension = dot == std::string::npos ? "" : name.substr(dot);
  return directory + "." + stem + ".partial" + extension;
}

/** The file name of `path` without directory and without its (possibly double) extension. */
inline std::string
StemOf(const std::string & path)
{
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

inline ToolOptions
ParseToolOptions(int argc, char * argv[])
{
  ToolOptions              options;
  std::vector<std::string> positional;
  bool                     noFigure = false;
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
    else if (arg == "-k" || arg == "--rank")
    {
      const double k = number(arg, value(i, arg));
      if (k < 1 || k != static_cast<unsigned int>(k))
      {
        throw UsageError("--rank must be a whole number >= 1");
      }
      options.rank = static_cast<unsigned int>(k);
    }
    else if (arg == "-e" || arg == "--energy")
    {
      options.energyFraction = number(arg, value(i, arg));
      if (!(options.energyFraction > 0.0 && options.energyFraction <= 1.0))
      {
        throw UsageError("--energy must be in (0, 1]");
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
      const std::string name = value(i, arg);
      using Backend = itk::SVDLowRankReconstructionEnums::Backend;
      if (name == "auto")
        options.backend = Backend::Auto;
      else if (name == "cpu")
        options.backend = Backend::CPU;
      else if (name == "cuda")
        options.backend = Backend::CUDA;
      else
        throw UsageError("--backend must be auto, cpu or cuda, got '" + name + "'");
    }
    else if (arg == "-d" || arg == "--device")
    {
      options.deviceId = static_cast<int>(number(arg, value(i, arg)));
    }
    else if (arg == "-f" || arg == "--figure")
    {
      options.figure = value(i, arg);
    }
    else if (arg == "--no-figure")
    {
      noFigure = true;
    }
    else if (!arg.empty() && arg[0] == '-')
    {
      throw UsageError("unknown option '" + arg + "'");
    }
    else
    {
      positional.push_back(arg);
    }
  }
  if (positional.size() > 2)
  {
    throw UsageError("expected at most INPUT and OUTPUT, got " + std::to_string(positional.size()) + " paths");
  }
  if (!positional.empty())
  {
    options.input = positional[0];
  }
  options.output = positional.size() == 2 ? positional[1] : StemOf(options.input) + "_svdlr.nii.gz";
  if (noFigure)
  {
    options.figure.clear();
  }
  else if (options.figure.empty())
  {
    options.figure = StemOf(options.output) + "_figure.png";
    const std::size_t slash = options.output.find_last_of('/');
    if (slash != std::string::npos)
    {
      options.figure = options.output.substr(0, slash + 1) + options.figure;
    }
  }
  return options;
}

} // namespace svdlr_examples

#endif
