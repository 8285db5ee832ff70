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
#include "SVDLowRankReconstructOptions.h"

#include "svdlr/Defaults.h"
#include "svdlr/Names.h"

#include <CLI/CLI.hpp>

#include <string>

namespace svdlr_tools
{
namespace
{

constexpr const char * Description =
  "Replaces each slice of a 3D volume (or a 2D image) by its rank-k truncated SVD reconstruction.";

std::string
Footer(bool dicomSupport)
{
  return std::string(
           "INPUT is one of\n"
           "  - an image file ITK reads (NIfTI, MHA/MHD, NRRD, PNG, ...);\n"
           "  - a folder of DICOM files (searched recursively) or DICOM files (-i A.dcm -i B.dcm ...): the\n"
           "    slices of one series, ordered by position along the slice normal;\n"
           "  - a folder of 2D PNG slices, stacked in natural name order (slice2 before slice10).\n"
           "\n"
           "OUTPUT is a file whose extension picks the format (.nii.gz, .nii, .mha, .mhd, .nrrd, .png for\n"
           "2D), or a folder: a DICOM series (a derived series of the input's) or PNG slices. Without\n"
           "--format a folder gets the input's kind. Default: <input name>_svdlr.nii.gz here.\n"
           "Outputs appear only when complete: an error leaves no partial output and never touches the input.\n"
           "Outputs are float32 in every mode (--output-type same keeps the input's type); a NIfTI output keeps\n"
           "the input's sform/qform codes, description and time unit, and gets a JSON sidecar beside it\n"
           "(out.nii.gz -> out.json: tool, version, parameters, ranks, sigma, input checksum, backend, time).\n"
           "Off a terminal, a start line comes before the work and a progress line at most every 5 s.\n"
           "\n"
           "DICOM support: ") +
         (dicomSupport ? "yes, greyscale 8- and 16-bit slices. Read: uncompressed, deflate, RLE, JPEG\n"
                         "  and JPEG-LS (DCMTK), JPEG 2000 (GDCM). Written (--transfer-syntax): explicit-le,\n"
                         "  implicit-le, rle, jpeg-lossless; keep (default) writes the input's syntax when it\n"
                         "  is one of those, else explicit-le. A lossy input's output says so\n"
                         "  (LossyImageCompression 01). docs/dicom.md has the details"
                       : "NOT AVAILABLE in this build (DCMTK or GDCM was not found when it was built)") +
         "\n"
         "\n"
         "Example:\n"
         "  SVDLowRankReconstructImage --rank 20 ch2.nii.gz ch2_rank20.nii.gz\n"
         "  SVDLowRankReconstructImage --list-series dicom/\n"
         "  SVDLowRankReconstructImage --energy 0.99 --series 2 dicom/ dicom_svd/   (a derived DICOM series)\n"
         "  SVDLowRankReconstructImage --rank 10 slices/ slices_rank10/             (PNG slices in and out)\n"
         "  SVDLowRankReconstructImage --noise-rank mp noisy.nii.gz denoised.nii.gz (rank and sigma per slice)\n"
         "  SVDLowRankReconstructImage --bids --rank 20 -o derivatives/svd study/   (every sub-*/anat image)\n"
         "  SVDLowRankReconstructImage --glob '*.nii.gz' --devices 0,1 -o out/ data/ (two GPUs)\n"
         "\n"
         "MRtrix3 spellings, for scripts written for dwidenoise:\n" +
         DescribeSingleDashAliases(CommonSingleDashAliases()) + "\n" + ExitCodeTable();
}

} // namespace

ToolOptions
ParseToolOptions(int argc, const char * const argv[], bool dicomSupport)
{
  ToolOptions options;
  CLI::App    app{ Description, "SVDLowRankReconstructImage" };
  app.get_formatter()->column_width(30);
  app.footer(Footer(dicomSupport));

  std::vector<std::string> inputs;
  std::vector<std::string> positional;
  app.add_option("INPUT", positional, "the input and the output, as below (or give them with -i and -o)")
    ->type_name("[OUTPUT]");
  OneValuePerUse(app.add_option("-i,--input", inputs, "the input (repeat for several DICOM files of one series)"))
    ->type_name("PATH");
  app.add_option("-o,--output", options.output, "the output file or folder")->type_name("PATH");
  app
    .add_option("-F,--format", options.format, "auto (default), nifti, mha, mhd, nrrd, png (slices) or dicom (series)")
    ->type_name("NAME")
    ->check(CLI::IsMember({ "auto", "nifti", "nii", "nii.gz", "mha", "mhd", "nrrd", "png", "dicom" }).description(""));
  app.add_flag("--overwrite", options.overwrite, "replace existing outputs (a file, a folder of only its slices or DICOM files, the figure)");
  AddOutputTypeOption(app, options.outputType);
  auto * rank = app
                  .add_option("-k,--rank", options.rank,
                              "keep K singular values per slice (default " + std::to_string(svdlr::kDefaultRank) +
                                ")")
                  ->type_name("K")
                  ->check(WholeNumberValidator(static_cast<double>(svdlr::kMinimumRank), 4294967295.0));
  app
    .add_option("-e,--energy", options.energyFraction,
                "keep the fewest singular values holding fraction F in (0, 1] of\n"
                "each slice's energy, instead of a fixed rank")
    ->type_name("F")
    ->check(NumberValidator("in (0, 1]", [](double f) { return f > 0.0 && f <= 1.0; }));
  AddRankPolicyOption(app, options.noiseRank, "--noise-rank",
                      "keep, per slice, the singular values that stand out of the noise,\n"
                      "with the noise level sigma estimated per slice: gd (Gavish-Donoho\n"
                      "optimal hard threshold), mp (Marchenko-Pastur, MP-PCA as MRtrix3\n"
                      "dwidenoise) or mp-cg (Marchenko-Pastur with Cordero-Grande's\n"
                      "estimator, dwidenoise -estimator Exp2), instead of a fixed rank;\n"
                      "nordic (NORDIC's threshold) takes sigma from --noise-sigma");
  app.add_option("--noise-sigma", options.noiseSigma,
                 "a known noise sigma S > 0 (pixel units): Gavish-Donoho's, or\n"
                 "NORDIC's with --noise-rank nordic")
    ->type_name("S")
    ->check(SigmaValidator());
  app
    .add_option("-a,--slice-axis", options.sliceAxis, "axis normal to the slices: 0, 1 or 2 (default: the last axis)")
    ->type_name("D")
    ->check(NumberValidator("0, 1 or 2", [](double d) { return d == 0.0 || d == 1.0 || d == 2.0; }));
  AddBackendOption(app, options.backend, "-b,--backend", "auto (default), cpu or cuda");
  AddSolverOption(app, options.solver, "--solver",
                  "auto (default), exact or subspace: how the GPU finds the leading\n"
                  "singular values (subspace: faster at small ranks, needs --rank;\n"
                  "the CPU is always exact)");
  AddDeviceOption(app, options.deviceId, "-d,--device");
  app.add_flag("-l,--list-series", options.listSeries, "list the DICOM series in INPUT and exit");
  app.add_option("-s,--series", options.series,
                 "the DICOM series to read: its SeriesInstanceUID or its number in\n"
                 "--list-series (needed when INPUT holds several)")
    ->type_name("UID");
  app.add_flag("--require-volume", options.requireVolume,
               "refuse a DICOM series that is not one volume; by default a 4D\n"
               "series (echoes, phases, b-values) is read volume by volume, and\n"
               "one that forms no volume (localizer, projections, mixed sizes)\n"
               "image by image, each written with its own geometry");
  app.add_option("-t,--transfer-syntax", options.transferSyntax,
                 "DICOM output: keep (default), explicit-le, implicit-le, rle or\n"
                 "jpeg-lossless (jpeg-ls is refused: DCMTK 3.6.7's encoder is unsafe)")
    ->type_name("NAME");
  app.add_option("-f,--figure", options.figure, "figure of the middle slice (default: <output name>_figure.png)")
    ->type_name("PNG");
  app.add_flag("--no-figure", options.noFigure, "do not write the figure");

  AddBatchOptions(app, options.batch,
                  "every INPUT (files, folders searched recursively) is a volume of\n"
                  "its own; outputs go to the folder -o DIR, mirroring the inputs'\n"
                  "tree, named <name>_svd-rank20.nii.gz etc.; existing outputs are\n"
                  "skipped (a re-run resumes) unless --overwrite");
  app.add_flag("--bids", options.bids, "(implies --batch) a BIDS-like layout: sub-*/anat/*.nii[.gz] and\n"
                                       "sub-*/ses-*/anat/*.nii[.gz]")
    ->group(BatchGroup);
  app.add_flag("--dicom-series", options.dicomSeries,
               "(implies --batch) each DICOM series in the folders is a volume,\n"
               "written as a derived DICOM series")
    ->group(BatchGroup);

  AddRunOptions(app, options.run);

  options.helpText = ParseCommandLine(app, argc, argv, CommonSingleDashAliases());
  options.run.commandLine.assign(argv, argv + argc);
  if (!options.helpText.empty())
  {
    return options;
  }
  options.rankGiven = rank->count() > 0;
  if (options.format == "nii" || options.format == "nii.gz")
  {
    options.format = "nifti";
  }

  options.batch.enabled = options.batch.enabled || options.bids || options.dicomSeries;
  CheckBatchOptions(options.batch);
  if (options.batch.enabled)
  {
    // Every path is an input; the output folder comes with -o.
    inputs.insert(inputs.end(), positional.begin(), positional.end());
    if (inputs.empty())
    {
      throw UsageError("batch mode needs at least one INPUT (files or folders)");
    }
    if (options.output.empty())
    {
      throw UsageError("batch mode needs the output folder: -o DIR");
    }
    if (options.sliceAxis >= 0 && options.sliceAxis != 2)
    {
      throw UsageError("batch mode reconstructs the slices along the last axis: --slice-axis must be 2 or absent");
    }
    if (options.listSeries || !options.series.empty())
    {
      throw UsageError("batch mode takes every series (--dicom-series): --list-series and --series do not apply");
    }
    if (options.format != "auto")
    {
      throw UsageError("batch mode keeps each input's format: --format does not apply");
    }
    if (options.outputType != svdlr::kDefaultOutputTypeName)
    {
      throw UsageError(std::string("batch mode writes ") + svdlr::kDefaultOutputTypeName +
                       " (the default of every mode): --output-type " + options.outputType +
                       " is for one volume at a time");
    }
    options.inputs = inputs;
  }
  // Otherwise INPUT [OUTPUT] as positional arguments, unless given with -i / -o.
  else if (!inputs.empty() && options.output.empty() && positional.size() == 1)
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
  if (!inputs.empty() && !options.batch.enabled)
  {
    options.inputs = inputs;
  }
  if (options.inputs.empty())
  {
    throw UsageError("no INPUT given");
  }

  // One rank policy: a fixed rank, an energy fraction or a noise rule.
  if (options.noiseSigma > 0.0)
  {
    if (!options.noiseRank.empty() && options.noiseRank != "gd" && options.noiseRank != "nordic")
    {
      throw UsageError("--noise-sigma sets Gavish-Donoho's or NORDIC's sigma: it does not go with --noise-rank " +
                       options.noiseRank);
    }
    if (options.noiseRank.empty())
    {
      options.noiseRank = "gd";
    }
  }
  else if (!options.noiseRank.empty())
  {
    svdlr::RankPolicy named;
    if (svdlr::ParseNoiseRank(options.noiseRank, named) && svdlr::NeedsGivenSigma(named))
    {
      throw UsageError("--noise-rank " + options.noiseRank + " takes sigma as given, never estimated: add "
                       "--noise-sigma S");
    }
  }
  if ((options.rankGiven ? 1 : 0) + (options.energyFraction > 0.0 ? 1 : 0) + (options.noiseRank.empty() ? 0 : 1) > 1)
  {
    throw UsageError("give one of --rank, --energy and --noise-rank/--noise-sigma: they exclude each other");
  }
  if (options.solver == ToolSolver::Subspace && options.energyFraction > 0.0)
  {
    throw UsageError("--solver subspace needs --rank: --energy needs every singular value");
  }
  if (options.solver == ToolSolver::Subspace && !options.noiseRank.empty())
  {
    throw UsageError("--solver subspace needs --rank: --noise-rank needs every singular value");
  }
  return options;
}

svdlr::RankPolicy
RankPolicyOf(const ToolOptions & options)
{
  svdlr::RankPolicy policy;
  if (!options.noiseRank.empty() && svdlr::ParseNoiseRank(options.noiseRank, policy))
  {
    policy.noiseSigma = options.noiseSigma;
    return policy;
  }
  if (options.energyFraction > 0.0)
  {
    return svdlr::RankPolicy::Energy(options.energyFraction);
  }
  return svdlr::RankPolicy::Fixed(options.rank);
}

} // namespace svdlr_tools
