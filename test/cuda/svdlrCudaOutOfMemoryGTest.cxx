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

// The device running out of memory in the middle of a multi-batch run, injected at each of the run's device
// allocations in turn (svdlrCudaTestHooks.h, ScopedDeviceAllocationFaults): Backend::Auto must finish on the CPU
// with a note, or absorb the fault by shrinking its batch, and give the CPU's answer either way; Backend::CUDA
// must throw OutOfMemory. Nothing may be lost: every matrix of the output is the answer, none stale.

#include "svdlrCudaTestFixture.h"
#include "svdlrCudaTestHooks.h"

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

namespace
{
using namespace svdlr::test;
using svdlr::detail::testing::ScopedDeviceAllocationFaults;

constexpr std::size_t kCount = 40, kRows = 24, kCols = 20, kRank = 4;

/** kCount matrices with a clear gap after kRank singular values, so the GPU and the CPU agree closely. */
std::vector<double>
GappedBatch(Random & random)
{
  std::vector<Matrix> matrices;
  for (std::size_t m = 0; m < kCount; ++m)
  {
    matrices.push_back(MatrixWithSpectrum(kRows, kCols, SpectrumWithGap(kRows, kCols, kRank, 100.0), random));
  }
  return Pack<double>(matrices);
}

svdlr::Options
MultiBatchOptions(svdlr::Backend backend)
{
  auto options = OptionsFor(svdlr::RankPolicy::Fixed(kRank), backend);
  options.maxMatricesPerBatch = 8; // five batches over the two slots
  return options;
}

/** Reconstructs `input` into an output poisoned with NaN, so that a matrix nobody wrote is seen. */
svdlr::Report
RunInto(const std::vector<double> & input, std::vector<double> & output, const svdlr::Options & options)
{
  output.assign(input.size(), std::numeric_limits<double>::quiet_NaN());
  return svdlr::Reconstruct(ConstBatch(input, kCount, kRows, kCols), MutableBatch(output, kCount, kRows, kCols),
                            options);
}

/** How many device allocations a run from released resources makes (none are made to fail). */
std::int64_t
DeviceAllocationsOfOneRun(const std::vector<double> & input)
{
  svdlr::ReleaseCudaResources();
  const ScopedDeviceAllocationFaults counting(std::numeric_limits<std::int64_t>::max(), -1);
  std::vector<double>                output;
  RunInto(input, output, MultiBatchOptions(svdlr::Backend::CUDA));
  return counting.Seen();
}

TEST_F(SVDLowRankEngineCuda, OutOfDeviceMemoryAtAnyAllocationOfAMultiBatchRunLosesNothing)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::vector<double> input = GappedBatch(random);
  std::vector<double>       cpu;
  RunInto(input, cpu, MultiBatchOptions(svdlr::Backend::CPU));
  const double tolerance = 1e-6 * Norm(cpu); // far below what one lost or stale matrix costs

  const std::int64_t allocations = DeviceAllocationsOfOneRun(input);
  ASSERT_GT(allocations, 0) << "the run allocated nothing on the device: the faults below would test nothing";
  std::cout << "a run from released resources makes " << allocations << " device allocations\n";

  const std::int64_t step = std::max<std::int64_t>(1, allocations / 32); // every allocation, or 32 spread over them
  for (std::int64_t n = 0; n < allocations; n += step)
  {
    SCOPED_TRACE("device memory runs out at allocation " + std::to_string(n));
    std::vector<double> output;

    // Out of memory for good from allocation n on: Auto finishes on the CPU and says why.
    svdlr::ReleaseCudaResources();
    {
      const ScopedDeviceAllocationFaults faults(n, -1);
      const svdlr::Report                report = RunInto(input, output, MultiBatchOptions(svdlr::Backend::Auto));
      EXPECT_GT(faults.Failed(), 0);
      EXPECT_EQ(report.backend, svdlr::Backend::CPU);
      EXPECT_NE(report.notes.find("ran on the CPU"), std::string::npos) << report.notes;
      // The CPU's answer over a NaN-poisoned output (a NaN fails the bound): nothing stale or lost.
      EXPECT_LE(DifferenceNorm(output, cpu), 1e-12 * Norm(cpu));
    }
    // The same with CUDA asked for: the documented error, naming the cause.
    svdlr::ReleaseCudaResources();
    {
      const ScopedDeviceAllocationFaults faults(n, -1);
      std::vector<double>                ignored(input.size());
      const svdlr::Error                 error = FailureOf(ConstBatch(input, kCount, kRows, kCols),
                                           MutableBatch(ignored, kCount, kRows, kCols),
                                           MultiBatchOptions(svdlr::Backend::CUDA));
      EXPECT_EQ(error.Code(), svdlr::ErrorCode::OutOfMemory) << error.what();
    }
    // One allocation fails, the device then has memory again: Auto either shrinks its batch and stays on the GPU,
    // or falls back; the answer is the CPU's either way.
    svdlr::ReleaseCudaResources();
    {
      const ScopedDeviceAllocationFaults faults(n, 1);
      const svdlr::Report                report = RunInto(input, output, MultiBatchOptions(svdlr::Backend::Auto));
      EXPECT_EQ(faults.Failed(), 1);
      if (report.backend == svdlr::Backend::CPU)
      {
        EXPECT_NE(report.notes.find("ran on the CPU"), std::string::npos) << report.notes;
      }
      EXPECT_LE(DifferenceNorm(output, cpu), tolerance) << "on " << svdlr::ToString(report.backend);
    }
  }
  svdlr::ReleaseCudaResources();
  std::vector<double> after;
  EXPECT_EQ(RunInto(input, after, MultiBatchOptions(svdlr::Backend::CUDA)).backend, svdlr::Backend::CUDA);
  EXPECT_LE(DifferenceNorm(after, cpu), tolerance) << "the faults left the device resources broken";
}

} // namespace
