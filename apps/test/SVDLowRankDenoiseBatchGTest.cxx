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
// SVDLowRankDenoiseSeries --batch end to end (docs/batch.md): series generated with a known low rank and noise, one
// broken file among them, a list with a mask, re-runs; every output is compared with the single-series tool's, bit
// for bit, on the CPU here and on each GPU where there are some (1 and 2 devices).
#include "svdlrTestScratch.h"
#include "svdlrTestSeries.h"
#include "svdlrToolRun.h"

#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "svdlr/Engine.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

namespace
{
using namespace svdlr_test;

using Series4D = itk::Image<float, 4>;
using MaskImage = itk::Image<unsigned char, 3>;
using Map = itk::Image<float, 3>;
using RankImage = itk::Image<unsigned short, 3>;

constexpr int kExitSomeFailed = 4;
constexpr int kExitUsage = 2;

Series4D::Pointer
ToImage(const svdlr::test::Series & series)
{
  auto image = Series4D::New();
  image->SetRegions(Series4D::SizeType{ { series.size[0], series.size[1], series.size[2], series.volumes } });
  Series4D::SpacingType spacing;
  for (unsigned int i = 0; i < 4; ++i)
  {
    spacing[i] = 1.5 + 0.25 * i;
  }
  image->SetSpacing(spacing);
  image->Allocate();
  std::copy(series.values.begin(), series.values.end(), image->GetBufferPointer());
  return image;
}

/** Whether two image files hold the same grid, geometry and pixels, bit for bit. */
template <typename TImage>
::testing::AssertionResult
SameImage(const std::string & a, const std::string & b)
{
  const auto first = itk::ReadImage<TImage>(a);
  const auto second = itk::ReadImage<TImage>(b);
  if (first->GetLargestPossibleRegion() != second->GetLargestPossibleRegion() ||
      first->GetSpacing() != second->GetSpacing() || first->GetOrigin() != second->GetOrigin() ||
      first->GetDirection() != second->GetDirection())
  {
    return ::testing::AssertionFailure() << a << " and " << b << " differ in grid or geometry";
  }
  const std::size_t count = first->GetLargestPossibleRegion().GetNumberOfPixels();
  const auto *      p = first->GetBufferPointer();
  const auto *      q = second->GetBufferPointer();
  const auto        differ = std::mismatch(p, p + count, q);
  if (differ.first != p + count)
  {
    return ::testing::AssertionFailure() << a << " and " << b << " differ first at pixel " << (differ.first - p)
                                         << ": " << *differ.first << " vs " << *differ.second;
  }
  return ::testing::AssertionSuccess();
}

/** The rows of a --table file, by input path: the status and the device columns. */
std::map<std::string, std::pair<std::string, int>>
ReadTable(const std::string & path)
{
  std::map<std::string, std::pair<std::string, int>> rows;
  std::ifstream                                      table(path);
  std::string                                        line;
  std::getline(table, line); // the header
  while (std::getline(table, line))
  {
    std::vector<std::string> fields;
    std::stringstream        split(line);
    for (std::string field; std::getline(split, field, '\t');)
    {
      fields.push_back(field);
    }
    if (fields.size() >= 12)
    {
      // Keyed by file name: the table names inputs as the batch found them (relative to the list or absolute).
      rows[fs::path(fields[0]).filename().string()] = { fields[2], std::stoi(fields[11]) };
    }
  }
  return rows;
}

class DenoiseBatch : public RandomTest
{
protected:
  void
  SetUp() override
  {
    RandomTest::SetUp();
    svdlr::test::Random random(m_Seed); // the fixture's seed (printed on failure) draws the series
    // Three small series of 24 volumes (the default patch is then 3 x 3 x 3), rank 3 above noise of sigma 2, each
    // with its own noise; in a subject folder each, as a BIDS tree has them.
    for (const char * subject : { "sub-01", "sub-02", "sub-03" })
    {
      const auto series = svdlr::test::LowRankSeries({ { 12, 10, 8 } }, 24, 3, 2.0, 12.0, random);
      fs::create_directories(m_Directory / subject);
      itk::WriteImage(ToImage(series.noisy), Path(std::string(subject) + "/" + subject + "_dwi.nii.gz"));
    }
    // A brain mask for sub-02: a box inside the image.
    auto mask = MaskImage::New();
    mask->SetRegions(MaskImage::SizeType{ { 12, 10, 8 } });
    MaskImage::SpacingType spacing;
    for (unsigned int i = 0; i < 3; ++i)
    {
      spacing[i] = 1.5 + 0.25 * i; // the series' (ToImage)
    }
    mask->SetSpacing(spacing);
    mask->Allocate();
    mask->FillBuffer(0);
    for (unsigned int z = 2; z < 6; ++z)
      for (unsigned int y = 2; y < 8; ++y)
        for (unsigned int x = 3; x < 10; ++x)
          mask->SetPixel({ { x, y, z } }, 1);
    itk::WriteImage(mask, Path("sub-02/sub-02_mask.nii.gz"));
    // A series that cannot be read: a NIfTI name over bytes that are none.
    fs::create_directories(m_Directory / "sub-04");
    std::ofstream(Path("sub-04/sub-04_dwi.nii.gz")) << "not a NIfTI file";
    std::ofstream list(Path("runs.tsv"));
    list << "# series\tmask\n"
         << "sub-01/sub-01_dwi.nii.gz\n"
         << "sub-02/sub-02_dwi.nii.gz\tsub-02/sub-02_mask.nii.gz\n"
         << "sub-03/sub-03_dwi.nii.gz\t-\n"
         << "sub-04/sub-04_dwi.nii.gz\n";
  }

  std::string
  Path(const std::string & name) const
  {
    return (m_Directory / name).string();
  }

  ToolRun
  Run(const std::string & arguments)
  {
    return RunToolIn(m_Directory, SVDLR_DENOISE_TOOL, arguments);
  }

  /** The single-series tool on one run of the list, with `options`, into `reference/`. */
  void
  RunSingle(const std::string & subject, const std::string & extra, const std::string & options)
  {
    fs::create_directories(m_Directory / "reference");
    const std::string name = subject + "_dwi";
    const auto        run = Run(options + " " + extra + " --noise-map reference/" + name + "_sigma.nii.gz --rank-map reference/" +
                         name + "_rank.nii.gz " + subject + "/" + name + ".nii.gz reference/" + name + "_denoised.nii.gz");
    ASSERT_EQ(run.exitCode, 0) << run.err;
  }

  /** Every written series and map of `folder` equals the single-series tool's (reference/), bit for bit. */
  void
  ExpectSameAsSingleSeriesTool(const std::string & folder)
  {
    for (const std::string subject : { "sub-01", "sub-02", "sub-03" })
    {
      const std::string name = subject + "_dwi";
      EXPECT_TRUE(SameImage<Series4D>(Path(folder + "/" + subject + "/" + name + "_denoised.nii.gz"),
                                      Path("reference/" + name + "_denoised.nii.gz")));
      EXPECT_TRUE(SameImage<Map>(Path(folder + "/" + subject + "/" + name + "_sigma.nii.gz"),
                                 Path("reference/" + name + "_sigma.nii.gz")));
      EXPECT_TRUE(SameImage<RankImage>(Path(folder + "/" + subject + "/" + name + "_rank.nii.gz"),
                                       Path("reference/" + name + "_rank.nii.gz")));
    }
  }

  /** Hidden (temporary) entries anywhere under `folder`. */
  std::vector<std::string>
  HiddenEntries(const std::string & folder)
  {
    std::vector<std::string> hidden;
    for (const auto & entry : fs::recursive_directory_iterator(m_Directory / folder))
    {
      if (entry.path().filename().string()[0] == '.')
      {
        hidden.push_back(entry.path().string());
      }
    }
    return hidden;
  }
};

TEST_F(DenoiseBatch, BrokenSeriesIsReportedByNameWithExitCode4AndTheOthersAreWritten)
{
  const auto run = Run("--batch runs.tsv --output-dir out --backend cpu --maps");
  EXPECT_EQ(run.exitCode, kExitSomeFailed) << run.out << run.err;
  EXPECT_NE(run.err.find("failed: sub-04/sub-04_dwi.nii.gz"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("1 of 4 series failed"), std::string::npos) << run.err;
  EXPECT_NE(run.out.find("series:   4 (3 done, 0 skipped, 1 failed)"), std::string::npos) << run.out;
  for (const std::string subject : { "sub-01", "sub-02", "sub-03" })
  {
    const std::string prefix = "out/" + subject + "/" + subject + "_dwi_";
    for (const char * suffix : { "denoised.nii.gz", "sigma.nii.gz", "rank.nii.gz", "denoised.json" })
    {
      EXPECT_TRUE(fs::is_regular_file(Path(prefix + suffix))) << prefix + suffix;
    }
  }
  EXPECT_FALSE(fs::exists(Path("out/sub-04/sub-04_dwi_denoised.nii.gz")));
  EXPECT_TRUE(HiddenEntries("out").empty()) << HiddenEntries("out").front();
}

TEST_F(DenoiseBatch, OutputsEqualTheSingleSeriesToolsBitForBit)
{
  const auto run = Run("--batch runs.tsv --output-dir out --backend cpu --maps --policy mp-cg");
  EXPECT_EQ(run.exitCode, kExitSomeFailed) << run.err;
  RunSingle("sub-01", "", "--backend cpu --policy mp-cg");
  RunSingle("sub-02", "--mask sub-02/sub-02_mask.nii.gz", "--backend cpu --policy mp-cg");
  RunSingle("sub-03", "", "--backend cpu --policy mp-cg");
  ExpectSameAsSingleSeriesTool("out");
  // The mask was applied: the masked-out voxels of sub-02 have rank 0.
  const auto rank = itk::ReadImage<RankImage>(Path("out/sub-02/sub-02_dwi_rank.nii.gz"));
  EXPECT_EQ(rank->GetPixel({ { 0, 0, 0 } }), 0);
  EXPECT_GT(rank->GetPixel({ { 5, 5, 3 } }), 0);
}

TEST_F(DenoiseBatch, ReRunSkipsExistingOutputsAndRedoesMissingOnes)
{
  ASSERT_EQ(Run("--batch runs.tsv --output-dir out --backend cpu").exitCode, kExitSomeFailed);
  const std::string kept = Path("out/sub-01/sub-01_dwi_denoised.nii.gz");
  const auto        keptTime = fs::last_write_time(kept);
  fs::remove(Path("out/sub-03/sub-03_dwi_denoised.nii.gz"));
  const auto run = Run("--batch runs.tsv --output-dir out --backend cpu");
  EXPECT_EQ(run.exitCode, kExitSomeFailed) << run.err;
  EXPECT_NE(run.out.find("series:   4 (1 done, 2 skipped, 1 failed)"), std::string::npos) << run.out;
  EXPECT_EQ(fs::last_write_time(kept), keptTime);
  EXPECT_TRUE(fs::is_regular_file(Path("out/sub-03/sub-03_dwi_denoised.nii.gz")));

  // Without the broken series, a run that skips or writes everything succeeds.
  fs::remove(Path("sub-04/sub-04_dwi.nii.gz"));
  const auto clean = Run("--batch sub-01 sub-02 sub-03 --output-dir folders --backend cpu --glob '*_dwi.nii.gz'");
  EXPECT_EQ(clean.exitCode, 0) << clean.err;
  EXPECT_TRUE(fs::is_regular_file(Path("folders/sub-01_dwi_denoised.nii.gz"))); // a folder's files, mirrored
  EXPECT_EQ(Run("sub-01 sub-02 sub-03 --output-dir folders --backend cpu --glob '*_dwi.nii.gz'").exitCode, 0);
}

TEST_F(DenoiseBatch, CommandLinesThatCannotWorkAreUsageErrors)
{
  EXPECT_EQ(Run("--batch runs.tsv").exitCode, kExitUsage);                                  // no --output-dir
  EXPECT_EQ(Run("--batch runs.tsv -o out --noise-map s.nii.gz").exitCode, kExitUsage);      // one series' map
  EXPECT_EQ(Run("--batch runs.tsv -o out --mask sub-02/sub-02_mask.nii.gz").exitCode, kExitUsage);
  EXPECT_EQ(Run("--batch runs.tsv -o out --compression-level 1").exitCode, kExitUsage);     // the reconstruction's
  EXPECT_EQ(Run("--maps sub-01/sub-01_dwi.nii.gz x.nii.gz").exitCode, kExitUsage);          // batch only
  EXPECT_EQ(Run("--devices 0 sub-01/sub-01_dwi.nii.gz x.nii.gz").exitCode, kExitUsage);     // batch only
  EXPECT_EQ(Run("sub-01/sub-01_dwi.nii.gz").exitCode, kExitUsage);                          // no OUTPUT
  // Two series that would be written to one output.
  std::ofstream(Path("clash.txt")) << "sub-01/sub-01_dwi.nii.gz\n";
  std::ofstream(Path("clash2.txt")) << "sub-01/sub-01_dwi.nii.gz\n";
  const auto clash = Run("--batch clash.txt clash2.txt -o out --backend cpu");
  EXPECT_EQ(clash.exitCode, kExitUsage) << clash.err;
  EXPECT_NE(clash.err.find("would both be written"), std::string::npos) << clash.err;
  EXPECT_FALSE(fs::exists(Path("out")));
}

/** The GPU path: each series denoised on the device the table names equals the single-series tool's on that device.
 * Skips without enough usable CUDA devices. */
class DenoiseBatchGpu : public DenoiseBatch
{
protected:
  void
  RunOn(const std::string & devices, std::size_t devicesNeeded)
  {
    std::string why;
    const bool  usable = svdlr::CudaDeviceUsable(0, &why);
    if (!usable || svdlr::CudaDeviceCount() < static_cast<int>(devicesNeeded))
    {
      GTEST_SKIP() << "needs " << devicesNeeded << " usable CUDA device(s); " << svdlr::CudaDeviceCount()
                   << " found" << (usable ? "" : ": " + why);
    }
    // Centre voxel: each voxel written once, so that two GPU runs give the same bits; overlap averaging sums patches
    // with float64 atomics, whose order (and last bit) varies from run to run.
    const std::string deterministic = " --aggregation centre";
    const auto run = Run("--batch runs.tsv --output-dir out --maps --backend cuda --devices " + devices +
                         deterministic + " --table table.tsv");
    EXPECT_EQ(run.exitCode, kExitSomeFailed) << run.out << run.err;
    const auto rows = ReadTable(Path("table.tsv"));
    std::set<int> used;
    for (const std::string subject : { "sub-01", "sub-02", "sub-03" })
    {
      const auto row = rows.find(subject + "_dwi.nii.gz");
      ASSERT_NE(row, rows.end()) << subject << " is not in the table:\n" << std::ifstream(Path("table.tsv")).rdbuf();
      EXPECT_EQ(row->second.first, "done");
      used.insert(row->second.second);
      const std::string device = " --device " + std::to_string(row->second.second);
      RunSingle(subject, subject == "sub-02" ? "--mask sub-02/sub-02_mask.nii.gz" : "",
                "--backend cuda" + device + deterministic);
    }
    ExpectSameAsSingleSeriesTool("out");
    std::cout << "devices used: " << used.size() << " of " << devicesNeeded << "\n";
  }
};

TEST_F(DenoiseBatchGpu, OneDeviceWritesWhatTheSingleSeriesToolWritesOnIt)
{
  RunOn("0", 1);
}

TEST_F(DenoiseBatchGpu, TwoDevicesWriteWhatTheSingleSeriesToolWritesOnEach)
{
  RunOn("0,1", 2);
}

} // namespace
