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
// Timings of the slice engine on the CUDA backend, disabled by default (they measure, they do not check):
// run with --gtest_also_run_disabled_tests --gtest_filter='*Timing*'. Benchmarks proper are in benchmarks/.
#include "svdlrCudaTestFixture.h"

#include "svdlrCudaTestHooks.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <iostream>
#include <vector>

namespace
{
using namespace svdlr::test;

// ---------------------------------------------------------------------------------------------------------
// Timings (disabled by default): end-to-end Reconstruct() from pageable memory, median of 5 after a warm-up.

std::vector<float>
MriLikeSlices(std::size_t count, std::size_t rows, std::size_t cols, Random & random)
{
  // Smooth structure plus 2% noise, as PERFORMANCE.md's synthetic data.
  std::vector<float> data(count * rows * cols);
  for (std::size_t m = 0; m < count; ++m)
  {
    const double phase = 0.05 * static_cast<double>(m);
    for (std::size_t r = 0; r < rows; ++r)
    {
      for (std::size_t c = 0; c < cols; ++c)
      {
        const double x = static_cast<double>(r) / rows, y = static_cast<double>(c) / cols;
        const double smooth = std::sin(6.0 * x + phase) * std::cos(4.0 * y) +
                              std::exp(-8.0 * ((x - 0.5) * (x - 0.5) + (y - 0.4) * (y - 0.4))) +
                              0.3 * std::sin(17.0 * x * y + phase);
        data[(m * rows + r) * cols + c] = static_cast<float>(smooth + 0.02 * random.Normal());
      }
    }
  }
  return data;
}

double
MedianMilliseconds(const std::function<void()> & run)
{
  run(); // warm-up: context, handles, first-call costs
  std::vector<double> times;
  for (int i = 0; i < 5; ++i)
  {
    const auto start = std::chrono::steady_clock::now();
    run();
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

void
TimeWorkload(const char * name, std::size_t count, std::size_t rows, std::size_t cols, std::size_t k,
             std::size_t maxPerBatch)
{
  Random                   random;
  const std::vector<float> input = MriLikeSlices(count, rows, cols, random);
  std::vector<float>       output(input.size());
  auto                     options = GpuOptions(svdlr::RankPolicy::Fixed(k));
  options.maxMatricesPerBatch = maxPerBatch;
  svdlr::Report report;
  const double  ms = MedianMilliseconds([&] {
    report = svdlr::Reconstruct(ConstBatch(input, count, rows, cols), MutableBatch(output, count, rows, cols), options);
  });
  std::cout << "[timing] " << name << ": " << count << " x " << rows << "x" << cols << " k=" << k
            << " maxPerBatch=" << maxPerBatch << ": " << ms << " ms (median of 5, end to end)" << std::endl;
  EXPECT_TRUE(AllFinite(output));
}

TEST_F(SVDLowRankEngineCuda, DISABLED_Timing)
{
  TimeWorkload("W1", 256, 256, 256, 32, 0);
  TimeWorkload("W1", 256, 256, 256, 32, 128);
  TimeWorkload("W1", 256, 256, 256, 32, 64);
  TimeWorkload("Colin27-like axial", 181, 181, 217, 20, 0);
  TimeWorkload("Colin27-like axial", 181, 217, 181, 20, 0);
  TimeWorkload("W4", 1, 256, 256, 100, 0);
  TimeWorkload("W2", 64, 512, 512, 64, 0);
  TimeWorkload("W3", 16, 1024, 1024, 64, 0);
}

// Where the host's time goes in one run, mean of 5 runs after a warm-up, under a staging configuration.
void
TraceWorkload(const char * name, std::size_t count, std::size_t rows, std::size_t cols, std::size_t k,
              std::size_t maxPerBatch, std::size_t lanes, std::size_t chunkBytes)
{
  using svdlr::detail::CudaPipelineTrace;
  Random                   random;
  const std::vector<float> input = MriLikeSlices(count, rows, cols, random);
  std::vector<float>       output(input.size());
  auto                     options = GpuOptions(svdlr::RankPolicy::Fixed(k));
  options.maxMatricesPerBatch = maxPerBatch;
  svdlr::detail::CudaPipelineTuning tuning;
  tuning.stagingLanes = lanes;
  tuning.stagingChunkBytes = chunkBytes;
  const auto run = [&] {
    svdlr::Report report;
    report.ranks.assign(count, 0);
    report.singularValues.assign(count, {});
    report.noiseSigmas.assign(count, std::numeric_limits<double>::quiet_NaN());
    const auto              start = std::chrono::steady_clock::now();
    const CudaPipelineTrace trace = svdlr::detail::testing::ReconstructWithTrace(
      ConstBatch(input, count, rows, cols), MutableBatch(output, count, rows, cols), options, report, tuning);
    return std::make_pair(trace,
                          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  };
  run();
  CudaPipelineTrace sum;
  double            total = 0.0;
  constexpr int     runs = 5;
  for (int i = 0; i < runs; ++i)
  {
    const auto [trace, ms] = run();
    total += ms / runs;
    sum.handles += trace.handles / runs;
    sum.deviceAlloc += trace.deviceAlloc / runs;
    sum.stagingAlloc += trace.stagingAlloc / runs;
    sum.upload += trace.upload / runs;
    sum.launch += trace.launch / runs;
    sum.waitEigen += trace.waitEigen / runs;
    sum.finish += trace.finish / runs;
    sum.download += trace.download / runs;
    sum.teardown += trace.teardown / runs;
    sum.batches = trace.batches;
    sum.batchSize = trace.batchSize;
    sum.slots = trace.slots;
    sum.stagingLanes = trace.stagingLanes;
    sum.stagingChunkBytes = trace.stagingChunkBytes;
  }
  std::cout << "[trace] " << name << " " << count << "x" << rows << "x" << cols << " k=" << k
            << " batches=" << sum.batches << "x" << sum.batchSize << " slots=" << sum.slots
            << " lanes=" << sum.stagingLanes << " chunk=" << (sum.stagingChunkBytes >> 10) << "KiB | total " << total
            << " ms: handles " << sum.handles << ", devAlloc " << sum.deviceAlloc << ", pinAlloc " << sum.stagingAlloc
            << ", upload " << sum.upload << ", launch " << sum.launch << ", waitEigen " << sum.waitEigen << ", finish "
            << sum.finish << ", download " << sum.download << ", teardown " << sum.teardown << std::endl;
  EXPECT_TRUE(AllFinite(output));
}

TEST_F(SVDLowRankEngineCuda, DISABLED_TimingBreakdown)
{
  TraceWorkload("W1", 256, 256, 256, 32, 0, 0, 0);
  TraceWorkload("W1 one batch", 256, 256, 256, 32, 256, 0, 0);
  TraceWorkload("Colin27", 181, 181, 217, 20, 0, 0, 0);
  TraceWorkload("W4", 1, 256, 256, 100, 0, 0, 0);
  TraceWorkload("W3", 16, 1024, 1024, 64, 0, 0, 0);
  TraceWorkload("4xW1", 1024, 256, 256, 32, 0, 0, 0);
  TraceWorkload("4xW1 one batch", 1024, 256, 256, 32, 1024, 0, 0);
}

} // namespace
