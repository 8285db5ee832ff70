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
// The tools' command-line contract, as docs/command-line.md writes it and as a pipeline relies on it: both tools'
// --help name the documented options, dwidenoise spellings and the one exit-code table; no arguments give the
// usage and exit code 2; range errors say what is expected in a few words; the same cause gives the same exit code
// from both tools; and a run whose output is redirected writes its first line within a second.

#include "SVDLowRankExitCodes.h"
#include "svdlrTestScratch.h"
#include "svdlrToolRun.h"

#include "itkImageFileWriter.h"

#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <regex>
#include <thread>

namespace
{
using svdlr_test::RunToolIn;
using svdlr_test::ToolRun;

const std::string Reconstruct = SVDLR_TOOL;
const std::string Denoise = SVDLR_DENOISE_TOOL;

class SVDLowRankCliContract : public svdlr_test::RandomTest
{
protected:
  ToolRun
  Run(const std::string & tool, const std::string & arguments)
  {
    return RunToolIn(Folder("run"), tool, arguments);
  }

  /** An image of `size`, uniform noise; with one NaN when `withNaN`. */
  template <unsigned int VDimension>
  void
  WriteRandomImage(const std::string & path, const itk::Size<VDimension> & size, bool withNaN = false)
  {
    using Image = itk::Image<float, VDimension>;
    auto image = Image::New();
    image->SetRegions(size);
    image->Allocate();
    const std::size_t                     count = image->GetLargestPossibleRegion().GetNumberOfPixels();
    std::uniform_real_distribution<float> value(0.0f, 100.0f);
    std::generate(image->GetBufferPointer(), image->GetBufferPointer() + count, [&] { return value(m_Random); });
    if (withNaN)
    {
      image->GetBufferPointer()[std::uniform_int_distribution<std::size_t>(0, count - 1)(m_Random)] = NAN;
    }
    itk::WriteImage(image, path);
  }

  /** A 4D series of 12 x 11 x 10 voxels and 6 volumes. */
  void
  WriteRandomSeries(const std::string & path, bool withNaN = false)
  {
    WriteRandomImage<4>(path, { { 12, 11, 10, 6 } }, withNaN);
  }
};

/** The rows of docs/command-line.md's dwidenoise table: `-spelling ...` | `--option ...` | tool. */
std::vector<std::array<std::string, 3>>
DocumentedSpellings()
{
  std::ifstream                           doc(SVDLR_COMMAND_LINE_DOC);
  const std::regex                        row(R"(^\| `(-[a-z]+)[^|]*\| `(--[a-z-]+)[^|]*\|[^|]*?(SVDLowRankDenoiseSeries|both) \|$)");
  std::vector<std::array<std::string, 3>> rows;
  std::string                             line;
  std::smatch                             match;
  while (std::getline(doc, line))
  {
    if (std::regex_match(line, match, row))
    {
      rows.push_back({ match[1], match[2], match[3] });
    }
  }
  return rows;
}

TEST_F(SVDLowRankCliContract, BothHelpsEndWithTheOneExitCodeTable)
{
  for (const std::string & tool : { Reconstruct, Denoise })
  {
    const ToolRun help = Run(tool, "--help");
    EXPECT_EQ(help.exitCode, svdlr_tools::ExitSuccess) << tool;
    EXPECT_NE(help.out.find(svdlr_tools::ExitCodeTable()), std::string::npos) << tool << "\n" << help.out;
  }
}

TEST_F(SVDLowRankCliContract, HelpNamesEveryDocumentedDwidenoiseSpellingAndTheOptionItStandsFor)
{
  const auto rows = DocumentedSpellings();
  ASSERT_GE(rows.size(), 8u) << "docs/command-line.md's table of dwidenoise spellings was not found";
  const std::string reconstructHelp = Run(Reconstruct, "--help").out;
  const std::string denoiseHelp = Run(Denoise, "--help").out;
  for (const auto & [spelling, option, tools] : rows)
  {
    const std::regex line("\\n  " + spelling + " +=" + " " + option + "\\n");
    EXPECT_TRUE(std::regex_search(denoiseHelp, line)) << spelling << " = " << option << "\n" << denoiseHelp;
    EXPECT_NE(denoiseHelp.find(option), std::string::npos) << option; // and the option itself is listed
    if (tools == "both")
    {
      EXPECT_TRUE(std::regex_search(reconstructHelp, line)) << spelling << " = " << option << "\n" << reconstructHelp;
    }
  }
}

TEST_F(SVDLowRankCliContract, HelpNamesTheSharedOptionsAndTheRenamedSigmaMap)
{
  for (const std::string & tool : { Reconstruct, Denoise })
  {
    const std::string help = Run(tool, "--help").out;
    for (const char * option : { "--output-type", "--nthreads", "--quiet", "--json", "--overwrite", "--backend" })
    {
      EXPECT_NE(help.find(option), std::string::npos) << tool << " " << option;
    }
  }
  const std::string help = Run(Denoise, "--help").out;
  EXPECT_NE(help.find("--known-sigma-map"), std::string::npos);
  EXPECT_NE(help.find("--noise-sigma-map"), std::string::npos); // the old name, kept as an alias
}

TEST_F(SVDLowRankCliContract, NoArgumentsPrintTheUsageAndExitWith2)
{
  for (const std::string & tool : { Reconstruct, Denoise })
  {
    const ToolRun run = Run(tool, "");
    EXPECT_EQ(run.exitCode, svdlr_tools::ExitUsage) << tool;
    EXPECT_NE(run.err.find("Usage:"), std::string::npos) << run.err;
    EXPECT_TRUE(svdlr_test::Listing(m_Directory / "run").empty()) << tool << " wrote something";
  }
}

TEST_F(SVDLowRankCliContract, RangeErrorsSayWhatIsExpectedInFewWords)
{
  const std::pair<std::string, std::string> cases[] = {
    { Reconstruct, "--rank 0 in.nii out.nii" },     { Reconstruct, "--readers 0 --batch -o out in" },
    { Reconstruct, "--nthreads 0 in.nii out.nii" }, { Denoise, "--stride 0 in.nii out.nii" },
    { Denoise, "--rank 0 in.nii out.nii" },         { Denoise, "--noise-sigma -1 in.nii out.nii" },
    { Denoise, "-estimator Exp3 in.nii out.nii" },  { Reconstruct, "--device -1 in.nii out.nii" },
  };
  for (const auto & [tool, arguments] : cases)
  {
    const ToolRun run = Run(tool, arguments);
    EXPECT_EQ(run.exitCode, svdlr_tools::ExitUsage) << arguments;
    EXPECT_NE(run.err.find("must be"), std::string::npos) << arguments << ": " << run.err;
    EXPECT_LT(run.err.size(), 300u) << arguments << ": " << run.err; // CLI11's ranges printed 300-digit doubles
    EXPECT_EQ(run.err.find("000000"), std::string::npos) << arguments << ": " << run.err;
  }
}

TEST_F(SVDLowRankCliContract, DwidenoiseSpellingsAreTakenAsTheOptionsTheyStandFor)
{
  const std::string folder = Folder("run");
  WriteRandomSeries(folder + "/series.nii.gz");
  std::ofstream(folder + "/taken.nii.gz") << "an output of an earlier run";
  const ToolRun refused = RunToolIn(folder, Denoise, "--backend cpu series.nii.gz taken.nii.gz");
  EXPECT_EQ(refused.exitCode, svdlr_tools::ExitUsage) << refused.err;
  const ToolRun forced = RunToolIn(folder, Denoise, "--backend cpu series.nii.gz taken.nii.gz -force -nthreads 1 "
                                                    "-extent 3,3,3 -estimator Exp2 -noise sigma.nii.gz -rank rank.nii.gz");
  EXPECT_EQ(forced.exitCode, svdlr_tools::ExitSuccess) << forced.err;
  EXPECT_NE(forced.out.find("patch:    3 x 3 x 3"), std::string::npos) << forced.out;
  EXPECT_NE(forced.out.find("Cordero-Grande"), std::string::npos) << forced.out; // Exp2
  EXPECT_TRUE(std::filesystem::exists(folder + "/sigma.nii.gz")); // -noise and -rank name outputs, as in dwidenoise
  EXPECT_TRUE(std::filesystem::exists(folder + "/rank.nii.gz"));
  const ToolRun both = RunToolIn(folder, Denoise, "-estimator Exp2 --policy mp series.nii.gz out.nii.gz");
  EXPECT_EQ(both.exitCode, svdlr_tools::ExitUsage);
  EXPECT_NE(both.err.find("--estimator"), std::string::npos) << both.err;
}

/** A volume with one NaN: both tools refuse it with the same exit code, as docs/command-line.md's table says. */
TEST_F(SVDLowRankCliContract, NaNInputGivesExitCode3FromBothTools)
{
  const std::string folder = Folder("run");
  // Not NIfTI: ITK's NIfTI reader (nifti1_io) reads NaN as 0.
  WriteRandomImage<3>(folder + "/volume.mha", { { 8, 7, 6 } }, true);
  WriteRandomSeries(folder + "/series.mha", true);

  const ToolRun reconstruct = RunToolIn(folder, Reconstruct, "--backend cpu volume.mha out.nii.gz");
  const ToolRun denoise = RunToolIn(folder, Denoise, "--backend cpu series.mha out4d.nii.gz");
  EXPECT_EQ(reconstruct.exitCode, svdlr_tools::ExitInputError) << reconstruct.err;
  EXPECT_EQ(denoise.exitCode, svdlr_tools::ExitInputError) << denoise.err;
  EXPECT_NE(reconstruct.err.find("NaN or Inf"), std::string::npos) << reconstruct.err;
  EXPECT_NE(denoise.err.find("NaN or Inf"), std::string::npos) << denoise.err;
}

/** Two batch inputs that would be written to the same output are a problem of the command line: exit code 2. */
TEST_F(SVDLowRankCliContract, BatchNameClashExitsWith2)
{
  const std::string folder = Folder("run");
  for (const char * site : { "/a", "/b" })
  {
    std::filesystem::create_directories(folder + site);
    WriteRandomImage<3>(folder + site + "/t1.nii.gz", { { 6, 5, 4 } });
  }
  const ToolRun run = RunToolIn(folder, Reconstruct, "--batch --backend cpu -o out a b");
  EXPECT_EQ(run.exitCode, svdlr_tools::ExitUsage) << run.err;
  EXPECT_NE(run.err.find("would both be written"), std::string::npos) << run.err;
  EXPECT_FALSE(std::filesystem::exists(folder + "/out/t1_svd-rank20.nii.gz"));
}

#ifdef SVDLR_COLIN27_NII
/** A pipeline's log: stdout redirected to a file, the first line there within 1 s of the start, while the work (a
 * few seconds of Colin27 on the CPU) goes on. */
TEST_F(SVDLowRankCliContract, RedirectedRunLogsItsFirstLineWithinOneSecond)
{
  const std::string folder = Folder("run");
  const std::string log = Path("log.txt");
  const auto        start = std::chrono::steady_clock::now();
  const std::string command = "cd '" + folder + "' && '" + Reconstruct + "' --backend cpu --no-figure '" +
                              SVDLR_COLIN27_NII + "' out.nii.gz > '" + log + "' 2>&1; echo done >> '" + log +
                              ".done'";
  std::thread run([&command] { std::system(command.c_str()); });
  double firstLine = -1.0;
  while (firstLine < 0.0 && !std::filesystem::exists(log + ".done"))
  {
    std::ifstream text(log);
    std::string   line;
    if (std::getline(text, line) && text.good())
    {
      firstLine = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const bool stillRunning = !std::filesystem::exists(log + ".done");
  run.join();
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "first line after " << firstLine << " s of a " << total << " s run\n";
  ASSERT_GE(firstLine, 0.0) << "no line before the run ended:\n" << svdlr_test::ReadText(log);
  EXPECT_LE(firstLine, 1.0);
  EXPECT_TRUE(stillRunning) << "the run ended within the first line's time: the test shows nothing";
  EXPECT_EQ(svdlr_test::ReadText(log).rfind("start:", 0), 0u) << svdlr_test::ReadText(log);
}
#endif

} // namespace
