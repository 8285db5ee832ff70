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
// Staged outputs under faults (docs/reliability.md): a writer on a disk that fills, a second writer of the same
// output, a signal while outputs are staged, partial files that a killed process left behind; and the raw checks
// of image files (truncated, non-finite) that the tools run on their inputs and outputs.
#include "SVDLowRankImageFileCheck.h"
#include "SVDLowRankInterruptCleanup.h"
#include "SVDLowRankStagedOutput.h"
#include "svdlrTestScratch.h"
#include "svdlrToolRun.h"

#include "itkImage.h"
#include "itkImageFileWriter.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace
{
namespace fs = std::filesystem;
using ImageType = itk::Image<float, 3>;

class StagedOutputTest : public svdlr_test::RandomTest
{
protected:
  /** A random float volume of nx x ny x nz voxels. */
  ImageType::Pointer
  RandomVolume(unsigned nx, unsigned ny, unsigned nz)
  {
    auto image = ImageType::New();
    image->SetRegions(ImageType::SizeType{ { nx, ny, nz } });
    image->Allocate();
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (float * p = image->GetBufferPointer(); p != image->GetBufferPointer() + image->GetPixelContainer()->Size(); ++p)
    {
      *p = normal(m_Random);
    }
    return image;
  }

  static void
  CutTo(const std::string & path, std::uintmax_t bytes)
  {
    fs::resize_file(path, bytes);
  }
};

TEST_F(StagedOutputTest, WholeFilesOfEveryCheckedFormatPass)
{
  const auto image = RandomVolume(12, 10, 4);
  for (const char * name : { "a.nii", "a.nii.gz", "a.mha", "a.nrrd" })
  {
    itk::WriteImage(image.GetPointer(), Path(name), std::string(name).find(".gz") != std::string::npos);
    EXPECT_NO_THROW(svdlr_io::CheckImageFile(Path(name), svdlr_io::ImageFileScan::Values)) << name;
  }
}

TEST_F(StagedOutputTest, TruncatedFilesAreNamedWithTheirMissingBytes)
{
  const auto image = RandomVolume(12, 10, 4); // 1920 bytes of floats
  for (const char * name : { "a.nii", "a.nii.gz", "a.mha", "a.nrrd" })
  {
    itk::WriteImage(image.GetPointer(), Path(name), std::string(name).find(".gz") != std::string::npos);
    const auto whole = fs::file_size(Path(name));
    std::uniform_int_distribution<std::uintmax_t> cut(1, whole - 1);
    CutTo(Path(name), whole - std::min<std::uintmax_t>(whole - 1, std::max<std::uintmax_t>(8, cut(m_Random) / 2)));
    try
    {
      svdlr_io::CheckImageFile(Path(name));
      ADD_FAILURE() << name << " cut to " << fs::file_size(Path(name)) << " of " << whole << " bytes passed";
    }
    catch (const svdlr_io::IncompleteImageFile & error)
    {
      EXPECT_NE(std::string(error.what()).find(name), std::string::npos) << error.what();
      EXPECT_NE(std::string(error.what()).find("truncated"), std::string::npos) << error.what();
    }
  }
}

TEST_F(StagedOutputTest, PlainNiftiCutShortNamesTheExactMissingBytes)
{
  itk::WriteImage(RandomVolume(12, 10, 4).GetPointer(), Path("a.nii"), false);
  const auto whole = fs::file_size(Path("a.nii"));
  CutTo(Path("a.nii"), whole - 1000);
  try
  {
    svdlr_io::CheckImageFile(Path("a.nii"));
    ADD_FAILURE() << "passed";
  }
  catch (const svdlr_io::IncompleteImageFile & error)
  {
    EXPECT_NE(std::string(error.what()).find("1000 bytes of pixel data are missing"), std::string::npos)
      << error.what();
  }
}

TEST_F(StagedOutputTest, NonFiniteNiftiVoxelIsFoundWhereItIs)
{
  auto                             image = RandomVolume(9, 7, 5);
  std::uniform_int_distribution<int> x(0, 8), y(0, 6), z(0, 4);
  const ImageType::IndexType       where{ { x(m_Random), y(m_Random), z(m_Random) } };
  image->SetPixel(where, std::numeric_limits<float>::infinity());
  itk::WriteImage(image.GetPointer(), Path("a.nii.gz"), true);
  try
  {
    svdlr_io::CheckImageFile(Path("a.nii.gz"), svdlr_io::ImageFileScan::Values);
    ADD_FAILURE() << "passed";
  }
  catch (const svdlr_io::NonFiniteImageFile & error)
  {
    const std::string voxel = "[" + std::to_string(where[0]) + ", " + std::to_string(where[1]) + ", " +
                              std::to_string(where[2]) + "]";
    EXPECT_NE(std::string(error.what()).find(voxel), std::string::npos) << error.what();
  }
  EXPECT_NO_THROW(svdlr_io::CheckImageFile(Path("a.nii.gz"))) << "the structure check reads no values";
}

TEST_F(StagedOutputTest, WriterThatLeavesATruncatedFileFailsAndLeavesNothing)
{
  const std::string target = Path("out.nii");
  EXPECT_THROW(svdlr_io::WriteFileAtomically(target,
                                             false,
                                             [&](const std::string & temporary) {
                                               itk::WriteImage(RandomVolume(8, 8, 8).GetPointer(), temporary, false);
                                               CutTo(temporary, 1000); // what a full disk leaves, without an error
                                             }),
               svdlr_io::OutputWriteError);
  EXPECT_TRUE(svdlr_test::Listing(m_Directory).empty());
}

TEST_F(StagedOutputTest, SecondWriterOfTheSameOutputGetsOutputInTheWay)
{
  const std::string target = Path("out.nii.gz");
  {
    svdlr_io::StagedFiles staged(false);
    const std::string     temporary = staged.Add(target);
    itk::WriteImage(RandomVolume(6, 6, 6).GetPointer(), temporary, true);
    std::ofstream(target) << "the other process's output"; // appears after the up-front check
    EXPECT_THROW(staged.Commit(), svdlr_io::OutputInTheWay);
  }
  EXPECT_EQ(svdlr_test::ReadText(target), "the other process's output");
  EXPECT_EQ(svdlr_test::Listing(m_Directory), std::set<std::string>{ "out.nii.gz" });
}

TEST_F(StagedOutputTest, StagedFolderRefusesAFolderFilledMeanwhile)
{
  const std::string target = Path("slices");
  {
    svdlr_io::StagedDirectory staged(target, false, { "IM", ".dcm" });
    std::ofstream(fs::path(staged.Path()) / "a.dcm") << "x";
    fs::create_directories(target);
    std::ofstream(fs::path(target) / "theirs.dcm") << "y";
    EXPECT_THROW(staged.Commit(), svdlr_io::OutputInTheWay);
  }
  EXPECT_EQ(svdlr_test::Listing(target), std::set<std::string>{ "theirs.dcm" });
  EXPECT_EQ(svdlr_test::Listing(m_Directory), std::set<std::string>{ "slices" });
}

TEST_F(StagedOutputTest, StalePartialsOfDeadProcessesAreRemovedAndLiveOnesKept)
{
  const pid_t dead = fork();
  if (dead == 0)
  {
    _exit(0);
  }
  waitpid(dead, nullptr, 0);
  const std::string deadFile = ".out.partial-" + std::to_string(dead) + ".nii.gz";
  const std::string deadFolder = ".out.partial-" + std::to_string(dead);
  const std::string liveFile = ".out.partial-1.nii.gz"; // init runs as long as the machine does
  std::ofstream(Path(deadFile)) << "left by a killed run";
  fs::create_directories(Path(deadFolder) + "/inner");
  std::ofstream(Path(liveFile)) << "another run, still writing";
  std::ofstream(Path(".other.partial-" + std::to_string(dead) + ".nii.gz")) << "another output's";
  {
    svdlr_io::StagedFiles staged(false);
    staged.Add(Path("out.nii.gz"));
  }
  EXPECT_EQ(svdlr_test::Listing(m_Directory),
            (std::set<std::string>{ liveFile, ".other.partial-" + std::to_string(dead) + ".nii.gz" }));
}

TEST_F(StagedOutputTest, PartialNamesOfLongNamesStayWithinAFileNameAndApart)
{
  const std::string stem(245, 'n');
  const std::string first = svdlr_io::TemporaryFileFor(Path(stem + "a.nii.gz"));
  const std::string second = svdlr_io::TemporaryFileFor(Path(stem + "b.nii.gz"));
  EXPECT_LE(fs::path(first).filename().string().size() + 4, 255u) << first; // + ".old", an output moved aside
  EXPECT_NE(first, second);
  EXPECT_EQ(first.substr(first.size() - 7), ".nii.gz");
  EXPECT_LE(fs::path(svdlr_io::TemporarySiblingOf(Path(std::string(255, 'f')))).filename().string().size() + 4, 255u);
}

TEST_F(StagedOutputTest, StalePartialsOfLongNamesAreFound)
{
  const pid_t dead = fork();
  if (dead == 0)
  {
    _exit(0);
  }
  waitpid(dead, nullptr, 0);
  const std::string target = Path(std::string(245, 'n') + ".nii.gz");
  const std::string stale = svdlr_io::PartialNameStart(std::string(245, 'n')) + std::to_string(dead) + ".nii.gz";
  std::ofstream(Path(stale)) << "left by a killed run";
  svdlr_io::RemoveStalePartialsBeside(target);
  EXPECT_TRUE(svdlr_test::Listing(m_Directory).empty());
}

TEST_F(StagedOutputTest, OverwriteReplacesAFolderOfItsOwnFilesOnly)
{
  const std::string target = Path("slices");
  fs::create_directories(target);
  std::ofstream(Path("slices/IM0001.dcm")) << "an earlier run's";
  {
    svdlr_io::StagedDirectory staged(target, true, { "IM", ".dcm" });
    std::ofstream(fs::path(staged.Path()) / "IM0001.dcm") << "this run's";
    std::ofstream(Path("slices/thesis.tex")) << "written meanwhile";
    EXPECT_THROW(staged.Commit(), svdlr_io::OutputInTheWay);
  }
  EXPECT_EQ(svdlr_test::Listing(m_Directory), std::set<std::string>{ "slices" }) << "no temporary left";
  EXPECT_EQ(svdlr_test::Listing(target), (std::set<std::string>{ "IM0001.dcm", "thesis.tex" }));
  EXPECT_EQ(svdlr_test::ReadText(Path("slices/IM0001.dcm")), "an earlier run's");
  EXPECT_THROW(svdlr_io::StagedDirectory(target, true, { "IM", ".dcm" }), svdlr_io::OutputInTheWay);
}

TEST_F(StagedOutputTest, InterruptRemovesThePartialOutputsAndExitsWith128PlusTheSignal)
{
  for (const int signal : { SIGINT, SIGTERM })
  {
    const std::string target = Path("out" + std::to_string(signal));
    const pid_t       child = fork();
    if (child == 0)
    {
      svdlr_io::InstallInterruptCleanup("test", 128);
      svdlr_io::StagedDirectory folder(target, false, { "slice", ".dcm" });
      std::ofstream(fs::path(folder.Path()) / "slice0.dcm") << "partial";
      svdlr_io::StagedFiles files(false);
      std::ofstream(files.Add(target + ".nii.gz")) << "partial";
      kill(getpid(), signal);
      std::this_thread::sleep_for(std::chrono::seconds(10)); // the cleanup thread exits first
      _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    EXPECT_EQ(WEXITSTATUS(status), 128 + signal);
    const auto left = svdlr_test::Listing(m_Directory);
    EXPECT_TRUE(left.empty()) << "signal " << signal << ": " << (left.empty() ? "" : *left.begin());
  }
}

TEST_F(StagedOutputTest, WriterOnAFullTmpfsFailsAndLeavesNothing)
{
  // A real full disk: a 64 KiB tmpfs in a mount namespace of a child process, where one may be made (root, or
  // unprivileged user namespaces); elsewhere the RLIMIT_FSIZE cases of the hostile-input suite stand in.
  const std::string mountPoint = Folder("tmpfs");
  const pid_t       child = fork();
  if (child == 0)
  {
    if (unshare(CLONE_NEWNS) != 0 && unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
    {
      _exit(77);
    }
    mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr);
    if (mount("svdlr-full", mountPoint.c_str(), "tmpfs", 0, "size=64k") != 0)
    {
      _exit(77);
    }
    int failures = 0;
    for (const char * name : { "out.nii.gz", "out.nii", "out.mha", "out.nrrd" })
    {
      try
      {
        svdlr_io::WriteFileAtomically(mountPoint + "/" + name, false, [&](const std::string & temporary) {
          itk::WriteImage(RandomVolume(64, 64, 8).GetPointer(), temporary, std::string(name).find(".gz") != std::string::npos);
        });
        ++failures; // 128 KiB of random floats cannot fit
      }
      catch (const std::exception &)
      {
      }
      failures += svdlr_test::Listing(mountPoint).empty() ? 0 : 1;
    }
    _exit(failures);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77)
  {
    GTEST_SKIP() << "no tmpfs can be mounted here (no mount namespace); the RLIMIT_FSIZE cases stand in";
  }
  EXPECT_EQ(WEXITSTATUS(status), 0) << "writes that succeeded on a full disk, or files left there";
}

#ifdef SVDLR_TOOL
TEST_F(StagedOutputTest, ToolStoppedBySigtermWhileWorkingRemovesItsPartialFolderAndExits143)
{
  itk::WriteImage(RandomVolume(192, 192, 48).GetPointer(), Path("vol.nii.gz"), true);
  const std::string folder = Folder("run");
  const pid_t       child = fork();
  if (child == 0)
  {
    if (chdir(folder.c_str()) != 0)
    {
      _exit(126);
    }
    freopen("/dev/null", "w", stdout);
    execl(SVDLR_TOOL, SVDLR_TOOL, "--backend", "cpu", "--noise-rank", "mp", "--no-figure", "--format", "png",
          "../vol.nii.gz", "slices", static_cast<char *>(nullptr));
    _exit(127);
  }
  // The staged folder exists from before the work until the commit: stop the tool while it is there.
  const std::string partial = folder + "/.slices.partial-" + std::to_string(child);
  const auto        deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!fs::exists(partial) && std::chrono::steady_clock::now() < deadline)
  {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  ASSERT_TRUE(fs::exists(partial)) << "the tool never staged its output";
  kill(child, SIGTERM);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 0)
  {
    GTEST_SKIP() << "the tool finished before the signal arrived";
  }
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  EXPECT_TRUE(svdlr_test::Listing(folder).empty());
}
#endif

#ifdef SVDLR_DENOISE_TOOL
TEST_F(StagedOutputTest, TwoDenoisersWritingOneOutputLeaveOneWinnerAndExitTwo)
{
  auto series = itk::Image<float, 4>::New();
  series->SetRegions(itk::Image<float, 4>::SizeType{ { 10, 10, 10, 8 } });
  series->Allocate();
  std::normal_distribution<float> normal(50.0f, 5.0f);
  for (float * p = series->GetBufferPointer(); p != series->GetBufferPointer() + series->GetPixelContainer()->Size(); ++p)
  {
    *p = normal(m_Random);
  }
  itk::WriteImage(series.GetPointer(), Path("series.nii.gz"), true);
  const std::string folder = Folder("run");
  const std::string run = "'" SVDLR_DENOISE_TOOL "' --backend cpu ../series.nii.gz out.nii.gz";
  const std::string command = "cd '" + folder + "' && { (" + run + " > a.log 2>&1; echo $? > ../a.code) & (" + run +
                              " > b.log 2>&1; echo $? > ../b.code) & wait; }";
  ASSERT_EQ(std::system(command.c_str()), 0);
  std::multiset<std::string> codes{ svdlr_test::ReadText(Path("a.code")), svdlr_test::ReadText(Path("b.code")) };
  EXPECT_EQ(codes, (std::multiset<std::string>{ "0\n", "2\n" }))
    << svdlr_test::ReadText(folder + "/a.log") << svdlr_test::ReadText(folder + "/b.log");
  // The winner's output with its provenance sidecar (issue 24), committed with it.
  EXPECT_EQ(svdlr_test::Listing(folder), (std::set<std::string>{ "a.log", "b.log", "out.json", "out.nii.gz" }));
}
#endif

} // namespace
