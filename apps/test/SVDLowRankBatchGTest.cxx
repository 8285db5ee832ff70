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
// The batch pipeline (apps/batch): which inputs a run finds, what its outputs are called, and a run on a folder
// of volumes generated from Colin27 with noise, one of them broken: the rest are written and equal a float64
// reconstruction of each slice, the broken one is reported, and a re-run skips what is done.
#include "SVDLowRankBatchBuffers.h"
#include "SVDLowRankBatchInputs.h"
#include "SVDLowRankBatchPipeline.h"
#include "svdlrTestScratch.h"
#include "svdlrUnreadableFolder.h"
#if defined(SVDLR_WITH_CUDA)
#  include "svdlrCudaTestHooks.h"
#endif

#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <limits>
#include <thread>

namespace
{
namespace fs = std::filesystem;
using namespace svdlr_batch;
using VolumeType = itk::Image<float, 3>;

void
Touch(const std::string & path, const std::string & content = "x")
{
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << content;
}

std::vector<std::string>
RelativesOf(const std::vector<BatchInput> & inputs)
{
  std::vector<std::string> relatives;
  for (const auto & input : inputs)
  {
    relatives.push_back(input.relative);
  }
  return relatives;
}

TEST(SVDLowRankBatchInputs, PatternWithSlashMatchesTheWholePathAndStarStopsAtSlash)
{
  EXPECT_TRUE(MatchesPattern("sub-01/anat/sub-01_T1w.nii.gz", "sub-*/anat/*.nii.gz"));
  EXPECT_FALSE(MatchesPattern("sub-01/func/sub-01_bold.nii.gz", "sub-*/anat/*.nii.gz"));
  EXPECT_FALSE(MatchesPattern("sub-01/ses-1/anat/sub-01_T1w.nii.gz", "sub-*/anat/*.nii.gz"));
  EXPECT_TRUE(MatchesPattern("a/b/c/brain.nii.gz", "*.nii.gz"));
  EXPECT_FALSE(MatchesPattern("a/b/c/brain.nii", "*.nii.gz"));
}

TEST(SVDLowRankBatchInputs, OutputNamesMirrorTheTreeAndSayWhatWasDone)
{
  BatchInput input;
  input.path = "/data/sub-01/anat/sub-01_T1w.nii.gz";
  input.relative = "sub-01/anat/sub-01_T1w.nii.gz";
  EXPECT_EQ(OutputPathFor(input, "/out", MethodTag(svdlr::RankPolicy::Fixed(20))),
            "/out/sub-01/anat/sub-01_T1w_svd-rank20.nii.gz");
  input.relative = "scan.v2.nrrd";
  EXPECT_EQ(OutputPathFor(input, "out", MethodTag(svdlr::RankPolicy::MarchenkoPastur())), "out/scan.v2_svd-mp.nrrd");
  EXPECT_EQ(MethodTag(svdlr::RankPolicy::Energy(0.95)), "svd-energy0.95");
  EXPECT_EQ(MethodTag(svdlr::RankPolicy::GavishDonoho(12.5)), "svd-gd-sigma12.5");
  input.source = VolumeSource::DicomSeries;
  input.relative = "patient/mr/series-3";
  EXPECT_EQ(OutputPathFor(input, "/out", "svd-rank5"), "/out/patient/mr/series-3_svd-rank5");
}

class SVDLowRankBatchFolders : public svdlr_test::RandomTest
{};

TEST_F(SVDLowRankBatchFolders, BidsPatternsFindAnatomicalImagesOnly)
{
  const std::string root = Folder("bids");
  Touch(root + "/sub-01/anat/sub-01_T1w.nii.gz");
  Touch(root + "/sub-02/ses-1/anat/sub-02_ses-1_T2w.nii");
  Touch(root + "/sub-01/func/sub-01_bold.nii.gz");
  Touch(root + "/sub-01/anat/sub-01_T1w.json");
  Touch(root + "/sub-01/anat/.sub-01_T1w_svd-rank20.partial-7.nii.gz");
  Touch(root + "/participants.tsv");
  InputSelection selection;
  selection.paths = { root };
  selection.patterns = BidsPatterns();
  EXPECT_EQ(RelativesOf(FindBatchInputs(selection)),
            (std::vector<std::string>{ "sub-01/anat/sub-01_T1w.nii.gz", "sub-02/ses-1/anat/sub-02_ses-1_T2w.nii" }));
}

TEST_F(SVDLowRankBatchFolders, FolderSearchSkipsTheOutputTreeInsideIt)
{
  const std::string root = Folder("data");
  Touch(root + "/a.nii.gz");
  Touch(root + "/deeper/b.nrrd");
  Touch(root + "/out/a_svd-rank20.nii.gz");
  InputSelection selection;
  selection.paths = { root };
  selection.exclude = root + "/out";
  EXPECT_EQ(RelativesOf(FindBatchInputs(selection)), (std::vector<std::string>{ "a.nii.gz", "deeper/b.nrrd" }));
}

TEST_F(SVDLowRankBatchFolders, MissingPathAndClashingOutputsAreRefusedBeforeAnyWork)
{
  InputSelection selection;
  selection.paths = { Path("nothing-here") };
  EXPECT_THROW(FindBatchInputs(selection), BatchInputError);
  Touch(Path("one/brain.nii.gz"));
  Touch(Path("two/brain.nii.gz"));
  selection.paths = { Path("one/brain.nii.gz"), Path("two/brain.nii.gz") };
  EXPECT_THROW(FindBatchInputs(selection), BatchInputError);
  selection.paths = { Folder("empty") };
  EXPECT_THROW(FindBatchInputs(selection), BatchInputError);
}

TEST_F(SVDLowRankBatchFolders, UnreadableSubfolderIsAnErrorNamingIt)
{
  const std::string root = Folder("data");
  Touch(root + "/a.nii.gz");
  Touch(root + "/locked/b.nii.gz");
  InputSelection selection;
  selection.paths = { root };
  const svdlr_test::UnreadableFolder          locked(root + "/locked");
  const svdlr_test::WithoutPermissionOverride asAnyUser;
  if (locked.CanBeListed())
  {
    GTEST_SKIP() << "this process lists a folder of mode 000 (root whose CAP_DAC_OVERRIDE cannot be dropped here)";
  }
  try
  {
    const auto inputs = FindBatchInputs(selection);
    ADD_FAILURE() << "found " << inputs.size() << " volumes, b.nii.gz left out without a word";
  }
  catch (const BatchInputError & error)
  {
    EXPECT_NE(std::string(error.what()).find("cannot list the folder '" + root + "/locked'"), std::string::npos)
      << error.what();
  }
}

TEST(SVDLowRankBatchBuffers, LeasesWaitWhileTheBudgetIsTaken)
{
  HostBufferPool    pool(1000 * sizeof(float), false);
  BufferLease       first = pool.Lease(600);
  std::atomic<bool> leased{ false };
  std::thread       other([&] {
    BufferLease second = pool.Lease(600);
    leased = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(leased.load()); // 1200 floats would exceed the budget of 1000
  first = BufferLease();
  other.join();
  EXPECT_TRUE(leased.load());
  EXPECT_LE(pool.PeakLeasedBytes(), 1000 * sizeof(float));
  // A volume larger than the whole budget still goes, alone.
  const BufferLease large = pool.Lease(5000);
  EXPECT_EQ(large.Size(), 5000u);
}

TEST(SVDLowRankBatchBackend, NamedDevicesAreCheckedAndAutoFallsBackToTheCpuWithANote)
{
  BatchOptions      options;
  svdlr::Backend    backend{};
  std::vector<int>  devices;
  std::string       notes;
  options.backend = svdlr::Backend::CPU;
  options.devices = { 0, 1 };
  ResolveBackend(options, backend, devices, notes);
  EXPECT_EQ(backend, svdlr::Backend::CPU);
  EXPECT_TRUE(devices.empty());
  if (svdlr::CudaDeviceCount() > 0)
  {
    GTEST_SKIP() << "this machine has a CUDA device: the fallbacks below are for machines without one";
  }
  options.backend = svdlr::Backend::Auto;
  ResolveBackend(options, backend, devices, notes);
  EXPECT_EQ(backend, svdlr::Backend::CPU);
  EXPECT_NE(notes.find("CUDA device 1 skipped"), std::string::npos) << notes;
  options.backend = svdlr::Backend::CUDA;
  EXPECT_THROW(ResolveBackend(options, backend, devices, notes), svdlr::Error);
  options.devices.clear();
  EXPECT_THROW(ResolveBackend(options, backend, devices, notes), svdlr::Error);
  // With nothing to do (no reader started) the run still ends with that error.
  EXPECT_THROW(RunBatch({}, "unused", options), svdlr::Error);
}

#ifdef SVDLR_COLIN27_NII
/** A folder of small volumes cut from Colin27 with Gaussian noise of different strengths, and a broken file. */
class SVDLowRankBatchRun : public svdlr_test::RandomTest
{
protected:
  void
  SetUp() override
  {
    RandomTest::SetUp();
    const auto colin = itk::ReadImage<VolumeType>(SVDLR_COLIN27_NII);
    m_Input = Folder("study");
    const char * names[] = { "sub-01/anat/sub-01_T1w.nii.gz", "sub-02/anat/sub-02_T1w.nii.gz",
                             "sub-03/anat/sub-03_T1w.nii.gz" };
    std::normal_distribution<float> noise(0.0f, 1.0f);
    for (std::size_t v = 0; v < 3; ++v)
    {
      auto volume = VolumeType::New();
      volume->SetRegions(VolumeType::SizeType{ { 48, 56, 5 } });
      VolumeType::SpacingType spacing;
      spacing[0] = 1.0;
      spacing[1] = 1.5;
      spacing[2] = 2.0 + v;
      volume->SetSpacing(spacing);
      volume->Allocate();
      const float sigma = 2.0f + 4.0f * static_cast<float>(v);
      for (itk::IndexValueType z = 0; z < 5; ++z)
        for (itk::IndexValueType y = 0; y < 56; ++y)
          for (itk::IndexValueType x = 0; x < 48; ++x)
          {
            const float value = colin->GetPixel({ { 60 + 2 * x, 70 + 2 * y, 70 + 10 * z + 3 * static_cast<long>(v) } });
            volume->SetPixel({ { x, y, z } }, value + sigma * noise(m_Random));
          }
      const std::string path = m_Input + "/" + names[v];
      fs::create_directories(fs::path(path).parent_path());
      itk::WriteImage(volume, path, true);
      m_Volumes.push_back(volume);
    }
    Touch(m_Input + "/sub-04/anat/sub-04_T1w.nii.gz", "not a NIfTI file");
  }

  std::vector<BatchInput>
  Inputs() const
  {
    InputSelection selection;
    selection.paths = { m_Input };
    selection.patterns = BidsPatterns();
    return FindBatchInputs(selection);
  }

  std::string                  m_Input;
  std::vector<VolumeType::Pointer> m_Volumes;
};

/** The largest difference between `output`'s slices and each slice's rank-k reconstruction in float64. */
double
LargestErrorAgainstFloat64(const VolumeType * input, const VolumeType * output, std::size_t rank)
{
  const auto        size = input->GetLargestPossibleRegion().GetSize();
  const std::size_t n = input->GetLargestPossibleRegion().GetNumberOfPixels();
  std::vector<double> in(input->GetBufferPointer(), input->GetBufferPointer() + n);
  std::vector<double> reference(n);
  svdlr::Options      options;
  options.policy = svdlr::RankPolicy::Fixed(rank);
  options.backend = svdlr::Backend::CPU;
  svdlr::Reconstruct({ in.data(), size[2], size[1], size[0], size[0] * size[1] },
                     { reference.data(), size[2], size[1], size[0], size[0] * size[1] }, options);
  double largest = 0;
  for (std::size_t i = 0; i < n; ++i)
  {
    largest = std::max(largest, std::abs(reference[i] - output->GetBufferPointer()[i]));
  }
  return largest;
}

TEST_F(SVDLowRankBatchRun, BrokenInputFailsAloneAndTheRestAreWrittenAsFloat64Says)
{
  BatchOptions options;
  options.policy = svdlr::RankPolicy::Fixed(4);
  options.backend = svdlr::Backend::CPU;
  options.readers = 2;
  options.writers = 2;
  const std::string out = Path("out");
  const auto        summary = RunBatch(Inputs(), out, options);
  EXPECT_EQ(summary.done, 3u);
  EXPECT_EQ(summary.failed, 1u);
  EXPECT_EQ(summary.skipped, 0u);
  ASSERT_EQ(summary.volumes.size(), 4u);
  EXPECT_EQ(summary.volumes[3].status, VolumeStatus::Failed);
  EXPECT_NE(summary.volumes[3].message.find("sub-04_T1w.nii.gz"), std::string::npos) << summary.volumes[3].message;
  EXPECT_FALSE(fs::exists(out + "/sub-04")); // nothing at all for the broken one

  for (std::size_t v = 0; v < 3; ++v)
  {
    const std::string expected =
      out + "/sub-0" + std::to_string(v + 1) + "/anat/sub-0" + std::to_string(v + 1) + "_T1w_svd-rank4.nii.gz";
    ASSERT_EQ(summary.volumes[v].output, expected);
    ASSERT_TRUE(fs::exists(expected));
    EXPECT_EQ(summary.volumes[v].rankMin, 4u);
    EXPECT_EQ(summary.volumes[v].slices, 5u);
    const auto written = itk::ReadImage<VolumeType>(expected);
    EXPECT_EQ(written->GetLargestPossibleRegion(), m_Volumes[v]->GetLargestPossibleRegion());
    EXPECT_EQ(written->GetSpacing(), m_Volumes[v]->GetSpacing());
    // Float32 against float64 on values up to ~100: well below the change rank 4 makes (the noise, sigma >= 2).
    EXPECT_LT(LargestErrorAgainstFloat64(m_Volumes[v], written, 4), 1e-2);
    double changed = 0;
    for (std::size_t i = 0; i < m_Volumes[v]->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
    {
      changed = std::max(changed, double(std::abs(written->GetBufferPointer()[i] - m_Volumes[v]->GetBufferPointer()[i])));
    }
    EXPECT_GT(changed, 1.0);
  }
  for (const auto & entry : fs::recursive_directory_iterator(out))
  {
    EXPECT_NE(entry.path().filename().string()[0], '.') << "temporary left behind: " << entry.path();
  }
}

TEST_F(SVDLowRankBatchRun, ReRunSkipsCompleteOutputsAndRedoesOnlyWhatIsMissing)
{
  BatchOptions options;
  options.policy = svdlr::RankPolicy::Fixed(3);
  options.backend = svdlr::Backend::CPU;
  const std::string out = Path("out");
  const auto        first = RunBatch(Inputs(), out, options);
  ASSERT_EQ(first.done, 3u);
  const std::string kept = first.volumes[0].output;
  const auto        keptTime = fs::last_write_time(kept);
  fs::remove(first.volumes[1].output); // as if the first run had been stopped before writing it

  const auto second = RunBatch(Inputs(), out, options);
  EXPECT_EQ(second.skipped, 2u);
  EXPECT_EQ(second.done, 1u);
  EXPECT_EQ(second.failed, 1u); // the broken file is tried again, and fails again
  EXPECT_EQ(second.volumes[0].status, VolumeStatus::Skipped);
  EXPECT_EQ(second.volumes[1].status, VolumeStatus::Done);
  EXPECT_EQ(fs::last_write_time(kept), keptTime);
}

TEST_F(SVDLowRankBatchRun, BudgetSmallerThanOneVolumeStillFinishes)
{
  BatchOptions options;
  options.policy = svdlr::RankPolicy::MarchenkoPastur();
  options.backend = svdlr::Backend::CPU;
  options.readers = 3;
  options.memoryBudget = 1024; // bytes: every volume goes alone
  const auto summary = RunBatch(Inputs(), Path("out"), options);
  EXPECT_EQ(summary.done, 3u);
  EXPECT_EQ(summary.failed, 1u);
  EXPECT_LE(summary.peakBytes, 48u * 56u * 5u * sizeof(float));
  for (std::size_t v = 0; v < 3; ++v)
  {
    EXPECT_FALSE(std::isnan(summary.volumes[v].sigmaMin)); // Marchenko-Pastur estimates the noise
    EXPECT_NE(summary.volumes[v].output.find("_svd-mp.nii.gz"), std::string::npos);
  }
}

#  if defined(SVDLR_WITH_CUDA)
/** Checks one batch run's outcome volume by volume: each good volume written complete (the rank-k answer) or
 * reported as failed by name with nothing at its output name; the broken sub-04 failed; no temporary left. */
void
ExpectEachVolumeWrittenOrReported(const BatchSummary & summary, const std::string & out,
                                  const std::vector<VolumeType::Pointer> & volumes, std::size_t rank)
{
  ASSERT_EQ(summary.volumes.size(), 4u);
  EXPECT_EQ(summary.volumes[3].status, VolumeStatus::Failed);
  EXPECT_EQ(summary.done + summary.failed + summary.skipped, 4u);
  for (std::size_t v = 0; v < 3; ++v)
  {
    const VolumeResult & result = summary.volumes[v];
    SCOPED_TRACE(result.input + ": " + result.message);
    EXPECT_NE(result.input.find("sub-0" + std::to_string(v + 1) + "_T1w.nii.gz"), std::string::npos);
    // Skipped: written complete by an earlier run over the same folder (the re-run below), so checked the same way.
    if (result.status == VolumeStatus::Done || result.status == VolumeStatus::Skipped)
    {
      ASSERT_TRUE(fs::exists(result.output));
      EXPECT_LT(LargestErrorAgainstFloat64(volumes[v], itk::ReadImage<VolumeType>(result.output), rank), 1e-2);
    }
    else
    {
      EXPECT_EQ(result.status, VolumeStatus::Failed);
      EXPECT_FALSE(result.message.empty());
      EXPECT_FALSE(fs::exists(result.output));
    }
  }
  if (!fs::exists(out))
  {
    return; // no volume was written, so the output folder was never made: nothing can be left behind in it
  }
  for (const auto & entry : fs::recursive_directory_iterator(out))
  {
    EXPECT_NE(entry.path().filename().string()[0], '.') << "temporary left behind: " << entry.path();
  }
}

// The device runs out of memory at the n-th device allocation of a GPU batch run, for good or for a few
// allocations (svdlrCudaTestHooks.h): nothing may be lost or half-written, and a re-run finishes the rest.
TEST_F(SVDLowRankBatchRun, OutOfDeviceMemoryMidBatchLosesNoVolume)
{
  std::string why;
  if (!svdlr::CudaDeviceUsable(0, &why))
  {
    GTEST_SKIP() << "no usable CUDA device: " << why;
  }
  using svdlr::detail::testing::ScopedDeviceAllocationFaults;
  BatchOptions options;
  options.policy = svdlr::RankPolicy::Fixed(4);
  options.backend = svdlr::Backend::CUDA;
  options.devices = { 0 };

  std::int64_t allocations = 0;
  {
    svdlr::ReleaseCudaResources();
    const ScopedDeviceAllocationFaults counting(std::numeric_limits<std::int64_t>::max(), -1);
    const auto clean = RunBatch(Inputs(), Path("clean"), options);
    allocations = counting.Seen();
    ASSERT_EQ(clean.done, 3u);
  }
  ASSERT_GT(allocations, 0) << "the batch allocated nothing on the device: the faults below would test nothing";
  std::cout << "a GPU batch run from released resources makes " << allocations << " device allocations\n";

  const std::int64_t step = std::max<std::int64_t>(1, allocations / 8);
  int                run = 0;
  for (std::int64_t n = 0; n < allocations; n += step)
  {
    for (const std::int64_t failures : { std::int64_t{ -1 }, std::int64_t{ 1 }, std::int64_t{ 8 } })
    {
      SCOPED_TRACE("device memory runs out at allocation " + std::to_string(n) + " for " +
                   (failures < 0 ? std::string("good") : std::to_string(failures) + " allocation(s)"));
      const std::string out = Path("out" + std::to_string(run++));
      svdlr::ReleaseCudaResources();
      BatchSummary summary;
      {
        const ScopedDeviceAllocationFaults faults(n, failures);
        summary = RunBatch(Inputs(), out, options);
        EXPECT_GT(faults.Failed(), 0);
      }
      ExpectEachVolumeWrittenOrReported(summary, out, m_Volumes, 4);
      if (failures < 0)
      {
        EXPECT_LT(summary.done, 3u) << "the device never had memory again, yet every volume was solved on it";
      }
      // With the device healthy again, a re-run does exactly what the faulty run left undone.
      const std::size_t undone = 3 - summary.done;
      const auto        rerun = RunBatch(Inputs(), out, options);
      EXPECT_EQ(rerun.skipped, summary.done);
      EXPECT_EQ(rerun.done, undone);
      ExpectEachVolumeWrittenOrReported(rerun, out, m_Volumes, 4);
    }
  }
}
#  endif
#endif

} // namespace
