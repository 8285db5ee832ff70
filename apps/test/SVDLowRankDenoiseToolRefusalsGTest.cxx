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
// SVDLowRankDenoiseSeries end to end, what it refuses and how it fails: bad command lines (exit 2), bad inputs
// (exit 3) and failed runs (exit 1), each leaving nothing written; the memory its summary reports and the GPU
// memory limit.
#include "svdlrDenoiseSeriesFixture.h"

namespace
{
using namespace svdlr_test;

TEST_F(DenoiseTool, BadCommandLinesExitWithTwoAndWriteNothing)
{
  for (const char * arguments : { "--policy foo dwi.nii.gz out.nii.gz",
                                  "--patch 4 dwi.nii.gz out.nii.gz",
                                  "--patch 3,3 dwi.nii.gz out.nii.gz",
                                  "--patch 1,1,1 dwi.nii.gz out.nii.gz",
                                  "--stride 0 dwi.nii.gz out.nii.gz",
                                  "--stride 2 --aggregation centre dwi.nii.gz out.nii.gz",
                                  "--stride 5 --patch 3,3,3 dwi.nii.gz out.nii.gz",
                                  "--aggregation middle dwi.nii.gz out.nii.gz",
                                  "--patch-shape ball dwi.nii.gz out.nii.gz",
                                  "--patch-shape sphere --patch 3 dwi.nii.gz out.nii.gz",
                                  "--patch-shape cuboid --patch-radius 2 dwi.nii.gz out.nii.gz",
                                  "--patch-radius 0.5 dwi.nii.gz out.nii.gz",
                                  "--patch-shape sphere --stride 2 dwi.nii.gz out.nii.gz",
                                  "--shrinkage soft dwi.nii.gz out.nii.gz",
                                  "--noise-estimator exp2 dwi.nii.gz out.nii.gz",
                                  "--rank 3 --policy mp dwi.nii.gz out.nii.gz",
                                  "--policy fixed dwi.nii.gz out.nii.gz",
                                  "--rank 0 dwi.nii.gz out.nii.gz",
                                  "--noise-sigma -1 dwi.nii.gz out.nii.gz",
                                  "--noise-sigma 1 --noise-sigma-map dwi.nii.gz dwi.nii.gz out.nii.gz",
                                  "--shrinkage frobenius --rank 2 dwi.nii.gz out.nii.gz",
                                  "--preset best dwi.nii.gz out.nii.gz",
                                  "--preset dwidenoise --stride 2 dwi.nii.gz out.nii.gz",
                                  "--backend gpu dwi.nii.gz out.nii.gz",
                                  "--device -1 dwi.nii.gz out.nii.gz",
                                  "--gpu-memory-limit 8X dwi.nii.gz out.nii.gz",
                                  "--gpu-memory-limit 0 dwi.nii.gz out.nii.gz",
                                  "--gpu-memory-limit -1G dwi.nii.gz out.nii.gz",
                                  "--no-such-option dwi.nii.gz out.nii.gz",
                                  "dwi.nii.gz",
                                  "dwi.nii.gz out.nii.gz extra.nii.gz",
                                  "dwi.nii.gz out.unknown-format",
                                  "dwi.nii.gz dwi.nii.gz",
                                  "--noise-map dwi.nii.gz dwi.nii.gz out.nii.gz",
                                  "--noise-map same.nii.gz --rank-map same.nii.gz dwi.nii.gz out.nii.gz" })
  {
    const auto run = ExpectRefused(arguments, 2);
    EXPECT_NE(run.err.find("SVDLowRankDenoiseSeries: "), std::string::npos) << arguments << "\n" << run.err;
  }
}

TEST_F(DenoiseTool, PatchLargerThanTheImageExitsWithTwo)
{
  const auto run = ExpectRefused("--patch 3,3,13 dwi.nii.gz out.nii.gz", 2);
  EXPECT_NE(run.err.find("larger than the image along z (12 voxels)"), std::string::npos) << run.err;
  ExpectRefused("--stride 7 dwi.nii.gz out.nii.gz", 2); // above the default patch's extent, 5
}

TEST_F(DenoiseTool, AnExistingOutputIsReplacedOnlyWithOverwrite)
{
  std::ofstream(Path("out.nii.gz")) << "someone's file";
  const auto refused = ExpectRefused("--backend cpu dwi.nii.gz out.nii.gz", 2);
  EXPECT_NE(refused.err.find("--overwrite"), std::string::npos) << refused.err;
  EXPECT_EQ(ReadText(Path("out.nii.gz")), "someone's file");
  const auto replaced = Run("--backend cpu --overwrite dwi.nii.gz out.nii.gz");
  ASSERT_EQ(replaced.exitCode, 0) << replaced.err;
  EXPECT_EQ(itk::ReadImage<Series4D>(Path("out.nii.gz"))->GetLargestPossibleRegion(),
            m_Noisy->GetLargestPossibleRegion());
}

TEST_F(DenoiseTool, BadInputsExitWithThreeAndWriteNothing)
{
  // Missing.
  ExpectRefused("nowhere.nii.gz out.nii.gz", 3);
  ExpectRefused("--mask nowhere.nii.gz dwi.nii.gz out.nii.gz", 3);

  // A 3D image: one volume, no series.
  auto volume = SpatialMap<Map>(m_Noisy, 1.0f);
  volume->GetBufferPointer()[5] = 2.0f;
  itk::WriteImage(volume, Path("volume.nii.gz"));
  const auto threeD = ExpectRefused("--noise-map s.nii.gz volume.nii.gz out.nii.gz", 3);
  EXPECT_NE(threeD.err.find("is a 3D image"), std::string::npos) << threeD.err;

  // A 4D image of one volume.
  auto single = Series4D::New();
  single->SetRegions(Series4D::SizeType{ { 6, 5, 4, 1 } });
  single->Allocate();
  single->FillBuffer(3.0f);
  itk::WriteImage(single, Path("single.mha"));
  const auto one = ExpectRefused("single.mha out.mha", 3);
  EXPECT_NE(one.err.find("1 volume"), std::string::npos) << one.err;

  // NaN, named by voxel and volume.
  auto withNaN = ToImage(m_Series.noisy);
  const std::size_t voxel = 3 + 16 * (4 + 14 * 5); // [3, 4, 5]
  withNaN->GetBufferPointer()[voxel + 7 * m_Series.noisy.Voxels()] = std::numeric_limits<float>::quiet_NaN();
  itk::WriteImage(withNaN, Path("nan.mha")); // not NIfTI: ITK's NIfTI reader (nifti1_io) reads NaN as 0
  const auto nan = ExpectRefused("--rank-map r.nii.gz nan.mha out.nii.gz", 3);
  EXPECT_NE(nan.err.find("NaN or Inf at voxel [3, 4, 5], volume 7"), std::string::npos) << nan.err;

  // A mask, and a σ map, on another grid.
  auto smallMask = MaskImage::New();
  smallMask->SetRegions(MaskImage::SizeType{ { 16, 14, 11 } });
  smallMask->Allocate();
  smallMask->FillBuffer(1);
  itk::WriteImage(smallMask, Path("small_mask.nii.gz"));
  const auto mask = ExpectRefused("--mask small_mask.nii.gz dwi.nii.gz out.nii.gz", 3);
  EXPECT_NE(mask.err.find("16 x 14 x 11 voxels, the series 16 x 14 x 12"), std::string::npos) << mask.err;
  ExpectRefused("--noise-sigma-map small_mask.nii.gz dwi.nii.gz out.nii.gz", 3);

  // A σ map with a negative value.
  auto negative = SpatialMap<Map>(m_Noisy, 2.0f);
  negative->GetBufferPointer()[1] = -1.0f;
  itk::WriteImage(negative, Path("negative.nii.gz"));
  const auto sigma = ExpectRefused("--noise-sigma-map negative.nii.gz dwi.nii.gz out.nii.gz", 3);
  EXPECT_NE(sigma.err.find("at voxel [1, 0, 0]"), std::string::npos) << sigma.err;

  // Not an image at all.
  std::ofstream(Path("notes.nii.gz")) << "not an image";
  ExpectRefused("notes.nii.gz out.nii.gz", 3);
}

namespace
{
/** The MiB after `label` on the summary's memory line ("memory:   peak host 81.2 MiB (resident), GPU 3.1 MiB ..."),
 * or -1 when the line or the label is missing. */
double
SummaryMiB(const std::string & out, const std::string & label)
{
  const auto line = out.find("memory:   ");
  if (line == std::string::npos)
  {
    return -1.0;
  }
  const std::string text = out.substr(line, out.find('\n', line) - line);
  const auto        at = text.find(label);
  return at == std::string::npos ? -1.0 : std::stod(text.substr(at + label.size()));
}
} // namespace

TEST_F(DenoiseTool, SummaryReportsPeakHostAndGpuMemory)
{
  SCOPED_TRACE(m_SeriesRandom.SeedTrace());
  // The process holds the series it read and the one it wrote: its peak resident set cannot be smaller.
  const double seriesMiB = static_cast<double>(m_Series.clean.values.size() * sizeof(float)) / (1024.0 * 1024.0);
  const auto   cpu = Run("--backend cpu dwi.nii.gz cpu.nii.gz");
  ASSERT_EQ(cpu.exitCode, 0) << cpu.err;
  EXPECT_GE(SummaryMiB(cpu.out, "peak host "), 2.0 * seriesMiB) << cpu.out;
  EXPECT_EQ(SummaryMiB(cpu.out, "GPU "), -1.0) << "no GPU figure when the CPU did the work\n" << cpu.out;

  const auto cuda = Run("--backend cuda dwi.nii.gz cuda.nii.gz");
  if (cuda.exitCode != 0)
  {
    GTEST_SKIP() << "no usable CUDA device: " << cuda.err;
  }
  // The two slab buffers each hold a window of at least 5 of the 12 planes (the patch depth) as packed input,
  // working copy, float64 sums and packed output (20 bytes a value): above twice the series' float bytes.
  EXPECT_GE(SummaryMiB(cuda.out, "GPU "), 2.0 * seriesMiB) << cuda.out;
  EXPECT_GE(SummaryMiB(cuda.out, "peak host "), 2.0 * seriesMiB) << cuda.out;
}

TEST_F(DenoiseTool, GpuMemoryLimitBoundsTheGpuBuffersOrFailsSayingSo)
{
  const auto roomy = Run("--backend cuda dwi.nii.gz roomy.nii.gz");
  if (roomy.exitCode != 0)
  {
    GTEST_SKIP() << "no usable CUDA device: " << roomy.err;
  }
  const double roomyMiB = SummaryMiB(roomy.out, "GPU ");
  ASSERT_GT(roomyMiB, 0.0) << roomy.out;
  // Half of what the run took unlimited, in bytes: smaller slabs and batches, the buffers within it.
  const auto limitBytes = static_cast<std::size_t>(roomyMiB / 2 * 1024 * 1024);
  const auto limited = Run("--backend cuda --gpu-memory-limit " + std::to_string(limitBytes) + " dwi.nii.gz limited.nii.gz");
  ASSERT_EQ(limited.exitCode, 0) << limited.err;
  EXPECT_LE(SummaryMiB(limited.out, "GPU "), roomyMiB / 2 + 0.05) << limited.out; // the summary rounds to 0.1 MiB
  // Too little for one plane and one patch: the work fails (exit 1), naming the limit, and writes nothing.
  const auto before = Listing(m_Directory);
  const auto tiny = Run("--backend cuda --gpu-memory-limit 1K dwi.nii.gz tiny.nii.gz");
  EXPECT_EQ(tiny.exitCode, 1) << tiny.err;
  EXPECT_NE(tiny.err.find("device memory limit of 1024 bytes"), std::string::npos) << tiny.err;
  EXPECT_EQ(Listing(m_Directory), before);
}

TEST_F(DenoiseTool, AFailedRunExitsWithOneAndWritesNothing)
{
  // The CUDA backend asked for where there is none: the work fails after the inputs were read and checked.
  const auto before = Listing(m_Directory);
  const auto run = Run("--backend cuda --noise-map s.nii.gz --rank-map r.nii.gz dwi.nii.gz out.nii.gz");
  if (run.exitCode == 0)
  {
    GTEST_SKIP() << "a usable CUDA device ran the work";
  }
  EXPECT_EQ(run.exitCode, 1) << run.err;
  EXPECT_EQ(Listing(m_Directory), before);
}

} // namespace
