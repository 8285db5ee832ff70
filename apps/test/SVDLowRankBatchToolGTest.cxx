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
// SVDLowRankReconstructImage's batch mode, run as a user would: a folder tree of volumes generated from Colin27
// with noise and one broken file; the summary and the exit code say one failed, the outputs mirror the tree with
// names that say what was done, and a re-run skips what is complete.
#include "svdlrTestScratch.h"
#include "svdlrToolRun.h"
#include "svdlrUnreadableFolder.h"

#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

namespace
{
namespace fs = std::filesystem;
using VolumeType = itk::Image<float, 3>;
using svdlr_test::RunToolIn;

class SVDLowRankBatchTool : public svdlr_test::RandomTest
{
protected:
  void
  SetUp() override
  {
    RandomTest::SetUp();
    const auto colin = itk::ReadImage<VolumeType>(SVDLR_COLIN27_NII);
    std::normal_distribution<float> noise(0.0f, 1.0f);
    const char * names[] = { "site-a/sub-01/anat/sub-01_T1w.nii.gz", "site-a/sub-02/anat/sub-02_T1w.nii.gz",
                             "site-b/sub-03/anat/sub-03_T1w.nrrd" };
    for (int v = 0; v < 3; ++v)
    {
      auto volume = VolumeType::New();
      volume->SetRegions(VolumeType::SizeType{ { 40, 44, 4 } });
      volume->Allocate();
      for (itk::IndexValueType z = 0; z < 4; ++z)
        for (itk::IndexValueType y = 0; y < 44; ++y)
          for (itk::IndexValueType x = 0; x < 40; ++x)
            volume->SetPixel({ { x, y, z } },
                             colin->GetPixel({ { 50 + 2 * x, 60 + 2 * y, 60 + 15 * z + v } }) +
                               (3.0f + 3.0f * v) * noise(m_Random));
      const fs::path path = fs::path(Folder("study")) / names[v];
      fs::create_directories(path.parent_path());
      itk::WriteImage(volume, path.string(), true);
    }
    fs::create_directories(m_Directory / "study/site-b/sub-04/anat");
    std::ofstream(m_Directory / "study/site-b/sub-04/anat/sub-04_T1w.nii.gz") << "not a NIfTI file";
  }
};

TEST_F(SVDLowRankBatchTool, BrokenFileFailsAloneSummaryAndExitCodeSaySo)
{
  const auto run = RunToolIn(m_Directory, SVDLR_TOOL, "--batch --rank 5 --backend cpu -o out study");
  EXPECT_EQ(run.exitCode, 4) << run.out << run.err;
  EXPECT_NE(run.out.find("volumes:  4 (3 done, 0 skipped, 1 failed)"), std::string::npos) << run.out;
  EXPECT_NE(run.err.find("failed: study/site-b/sub-04/anat/sub-04_T1w.nii.gz"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("1 of 4 volumes failed"), std::string::npos) << run.err;
  EXPECT_TRUE(fs::exists(m_Directory / "out/site-a/sub-01/anat/sub-01_T1w_svd-rank5.nii.gz"));
  EXPECT_TRUE(fs::exists(m_Directory / "out/site-a/sub-02/anat/sub-02_T1w_svd-rank5.nii.gz"));
  EXPECT_TRUE(fs::exists(m_Directory / "out/site-b/sub-03/anat/sub-03_T1w_svd-rank5.nrrd"));
  EXPECT_FALSE(fs::exists(m_Directory / "out/site-b/sub-04"));
  std::size_t files = 0;
  for (const auto & entry : fs::recursive_directory_iterator(m_Directory / "out"))
  {
    EXPECT_NE(entry.path().filename().string()[0], '.') << entry.path();
    files += entry.is_regular_file() ? 1 : 0;
  }
  EXPECT_EQ(files, 5u); // the three outputs, and the sidecars of the two NIfTI ones
  EXPECT_TRUE(fs::exists(m_Directory / "out/site-a/sub-01/anat/sub-01_T1w_svd-rank5.json"));
  EXPECT_FALSE(fs::exists(m_Directory / "out/site-b/sub-03/anat/sub-03_T1w_svd-rank5.json")); // NRRD: none
}

// --json: stdout is one JSON document, the table in it; a fixed rank estimates no sigma, which is null, not NaN.
TEST_F(SVDLowRankBatchTool, JsonPrintsTheTableAsOneDocument)
{
  const auto run = RunToolIn(m_Directory, SVDLR_TOOL, "--batch --json --rank 5 --backend cpu -o out study");
  EXPECT_EQ(run.exitCode, 4) << run.out << run.err;
  const auto document = nlohmann::ordered_json::parse(run.out); // throws on anything but one JSON document
  std::vector<std::string> keys;
  for (const auto & item : document.items())
  {
    keys.push_back(item.key());
  }
  EXPECT_EQ(keys, (std::vector<std::string>{ "tool", "mode", "done", "skipped", "failed", "seconds", "volumes" }));
  EXPECT_EQ(document["tool"], "SVDLowRankReconstructImage");
  EXPECT_EQ(document["done"], 3);
  EXPECT_EQ(document["failed"], 1);
  ASSERT_EQ(document["volumes"].size(), 4u) << run.out;
  std::size_t failed = 0;
  for (const auto & volume : document["volumes"])
  {
    failed += volume["status"] == "failed" ? 1 : 0;
    if (volume["status"] == "done")
    {
      EXPECT_EQ(volume["rankMax"], 5) << volume;
      EXPECT_TRUE(volume["sigmaMin"].is_null() && volume["sigmaMax"].is_null()) << volume;
    }
  }
  EXPECT_EQ(failed, 1u) << run.out;
  const auto sidecar =
    nlohmann::json::parse(std::ifstream(m_Directory / "out/site-a/sub-01/anat/sub-01_T1w_svd-rank5.json"));
  EXPECT_EQ(sidecar["parameters"]["rank"], 5);
  EXPECT_EQ(sidecar["inputs"].size(), 1u);
}

TEST_F(SVDLowRankBatchTool, UnreadableSubfolderStopsTheRunBeforeAnyWorkWithExitCode3)
{
  const svdlr_test::UnreadableFolder locked(m_Directory / "study/site-b");
  if (svdlr_test::RunToolWithoutPermissionOverride(m_Directory, "/bin/true", "").exitCode != 0 ||
      svdlr_test::RunToolWithoutPermissionOverride(m_Directory, "/bin/ls", "study/site-b").exitCode == 0)
  {
    GTEST_SKIP() << "a tool run here lists a folder of mode 000 (root without setpriv or CAP_SETPCAP)";
  }
  const auto run = svdlr_test::RunToolWithoutPermissionOverride(
    m_Directory, SVDLR_TOOL, "--batch --rank 5 --backend cpu -o out study");
  EXPECT_EQ(run.exitCode, 3) << run.out << run.err;
  EXPECT_NE(run.err.find("cannot list the folder 'study/site-b'"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(m_Directory / "out/site-a")); // site-a's volumes are not done without site-b's
}

TEST_F(SVDLowRankBatchTool, ReRunSkipsCompleteOutputsAndSucceedsOnceTheBrokenFileIsGone)
{
  ASSERT_EQ(RunToolIn(m_Directory, SVDLR_TOOL, "--batch --rank 5 --backend cpu -o out study").exitCode, 4);
  const auto again = RunToolIn(m_Directory, SVDLR_TOOL, "--batch --rank 5 --backend cpu -o out study");
  EXPECT_EQ(again.exitCode, 4);
  EXPECT_NE(again.out.find("(0 done, 3 skipped, 1 failed)"), std::string::npos) << again.out;
  fs::remove(m_Directory / "study/site-b/sub-04/anat/sub-04_T1w.nii.gz");
  const auto clean = RunToolIn(m_Directory, SVDLR_TOOL, "--batch --rank 5 --backend cpu -o out study");
  EXPECT_EQ(clean.exitCode, 0) << clean.err;
  EXPECT_NE(clean.out.find("volumes:  3 (0 done, 3 skipped, 0 failed)"), std::string::npos) << clean.out;
  // Another policy is another output: nothing is skipped.
  const auto energy = RunToolIn(m_Directory, SVDLR_TOOL, "--energy 0.9 --batch --backend cpu -o out study");
  EXPECT_EQ(energy.exitCode, 0) << energy.err;
  EXPECT_NE(energy.out.find("(3 done, 0 skipped, 0 failed)"), std::string::npos) << energy.out;
  EXPECT_TRUE(fs::exists(m_Directory / "out/site-b/sub-03/anat/sub-03_T1w_svd-energy0.9.nrrd"));
}

TEST_F(SVDLowRankBatchTool, GlobAndBidsPickTheirFiles)
{
  const auto nrrd = RunToolIn(m_Directory, SVDLR_TOOL, "--glob '*.nrrd' --backend cpu -o nrrd study --table t.tsv");
  EXPECT_EQ(nrrd.exitCode, 0) << nrrd.err;
  EXPECT_NE(nrrd.out.find("volumes:  1 (1 done"), std::string::npos) << nrrd.out;
  const std::string table = svdlr_test::ReadText((m_Directory / "t.tsv").string());
  EXPECT_NE(table.find("site-b/sub-03/anat/sub-03_T1w_svd-rank20.nrrd\tdone\t4\t20\t20"), std::string::npos)
    << table;
  // --bids looks for sub-*/anat directly under each folder it is given.
  const auto bids = RunToolIn(m_Directory, SVDLR_TOOL, "--bids --backend cpu -o bids study/site-a");
  EXPECT_EQ(bids.exitCode, 0) << bids.err;
  EXPECT_TRUE(fs::exists(m_Directory / "bids/sub-02/anat/sub-02_T1w_svd-rank20.nii.gz"));
}

TEST_F(SVDLowRankBatchTool, DevicesTakesOneWordSoTheInputsAfterItStayInputs)
{
  // Found on the GPU machine: `--devices 0 folder` once read the folder as a second device.
  const auto run = RunToolIn(m_Directory, SVDLR_TOOL, "--glob '*.nrrd' --rank 3 --devices 0 -o out study");
  EXPECT_NE(run.exitCode, 2) << run.err;
  EXPECT_EQ(run.err.find("--devices"), std::string::npos) << run.err;
  EXPECT_NE(run.out.find("volumes:  1 (1 done"), std::string::npos) << run.out << run.err;
  EXPECT_EQ(RunToolIn(m_Directory, SVDLR_TOOL, "--glob '*.nrrd' --devices 0,x -o out2 study").exitCode, 2);
}

TEST_F(SVDLowRankBatchTool, BatchOptionsAreUsageErrorsOutsideBatchModeAndWithoutOutput)
{
  EXPECT_EQ(RunToolIn(m_Directory, SVDLR_TOOL, "--devices 0,1 study/x.nii.gz y.nii.gz").exitCode, 2);
  EXPECT_EQ(RunToolIn(m_Directory, SVDLR_TOOL, "--batch study").exitCode, 2);
  EXPECT_EQ(RunToolIn(m_Directory, SVDLR_TOOL, "--batch -o out missing-folder").exitCode, 3);
  EXPECT_FALSE(fs::exists(m_Directory / "out"));
}

#if defined(SVDLR_DICOM_TEST_DATA_DIR) && defined(SVDLR_HAVE_DCMTK)
TEST_F(SVDLowRankBatchTool, EachDicomSeriesBecomesADerivedSeriesFolder)
{
  const fs::path data = fs::path(SVDLR_DICOM_TEST_DATA_DIR) / "nibabel";
  if (!fs::is_directory(data))
  {
    GTEST_SKIP() << "no DICOM test data in " << data;
  }
  const auto run = RunToolIn(m_Directory, SVDLR_TOOL, "--dicom-series --rank 5 --backend cpu -o series '" +
                                                        data.string() + "'");
  ASSERT_TRUE(run.exitCode == 0 || run.exitCode == 4) << run.out << run.err;
  std::size_t written = 0;
  for (const auto & entry : fs::recursive_directory_iterator(m_Directory / "series"))
  {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && name.find("_svd-rank5") != std::string::npos)
    {
      ++written;
      EXPECT_EQ(name.rfind("series-", 0), 0u) << name;
      EXPECT_FALSE(fs::is_empty(entry.path())) << entry.path();
    }
  }
  EXPECT_GE(written, 1u);
  EXPECT_NE(run.out.find("(" + std::to_string(written) + " done"), std::string::npos) << run.out;
}
#endif

} // namespace
