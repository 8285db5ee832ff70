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
// DenoiseLocalLowRank's progress callback on the CPU backend: it reports every patch, in order, to the end, and
// returning false from it stops the run with ErrorCode::Aborted.
#include "svdlr/LocalDenoise.h"
#include "svdlrLocalDenoiseSeriesShape.h"
#include "svdlrTestSeries.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace
{
using namespace svdlr::test;
using svdlr::LocalDenoiseOptions;

using namespace svdlr::test::local_denoise_series; // kSize, kVolumes, kSigma

LocalDenoiseOptions
CpuOptions()
{
  LocalDenoiseOptions options;
  options.backend = svdlr::Backend::CPU;
  return options;
}

/** Denoises `input` into a fresh series, without maps. */
svdlr::LocalDenoiseReport
Denoise(const Series & input, const LocalDenoiseOptions & options)
{
  Series output = EmptySeries(input.size, input.volumes);
  return svdlr::DenoiseLocalLowRank(input.View(), output.View(), {}, options);
}

TEST(SVDLowRankLocalDenoise, ProgressCountsEveryPatchInOrder)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const NoisySeries                                  series = LowRankSeries(kSize, kVolumes, 2, kSigma, 4.0, random);
  std::vector<std::pair<std::size_t, std::size_t>> calls;
  LocalDenoiseOptions                                options = CpuOptions();
  options.threads = 16; // as on a 16-core host, where a small volume once made a single step: one report
  options.progress = [&](std::size_t done, std::size_t total) {
    calls.emplace_back(done, total);
    return true;
  };
  const svdlr::LocalDenoiseReport report = Denoise(series.noisy, options);
  ASSERT_GE(calls.size(), 2u);
  for (std::size_t i = 1; i < calls.size(); ++i)
  {
    EXPECT_GE(calls[i].first, calls[i - 1].first);
  }
  EXPECT_EQ(calls.back(), std::make_pair(report.patches, report.patches));
  // The default stride's lattice: fewer patches than voxels, each voxel in at least one.
  EXPECT_GT(report.patches, 0u);
  EXPECT_LE(report.patches, series.noisy.Voxels());
  options.patchStride = 1; // dense: a patch on every voxel
  calls.clear();
  EXPECT_EQ(Denoise(series.noisy, options).patches, series.noisy.Voxels());
  EXPECT_EQ(calls.back(), std::make_pair(series.noisy.Voxels(), series.noisy.Voxels()));
}

TEST(SVDLowRankLocalDenoise, ProgressCallbackCanAbort)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const NoisySeries   series = LowRankSeries(kSize, kVolumes, 2, kSigma, 4.0, random);
  std::size_t         calls = 0;
  LocalDenoiseOptions options = CpuOptions();
  options.threads = 16; // as on a 16-core host, where a small volume once made a single step: no abort
  options.progress = [&](std::size_t, std::size_t) { return ++calls < 3; };
  try
  {
    Denoise(series.noisy, options);
    FAIL() << "expected an abort";
  }
  catch (const svdlr::Error & error)
  {
    EXPECT_EQ(error.Code(), svdlr::ErrorCode::Aborted);
    EXPECT_NE(std::string(error.what()).find("patches"), std::string::npos) << error.what();
  }
  EXPECT_EQ(calls, 3u);
}

} // namespace
