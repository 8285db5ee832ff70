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
// svdlr::ReconstructOnDevice on the GPU: data already in device memory, the caller's stream, and the
// checks on the pointers it is given. Every test skips, saying why, without a usable CUDA device.
#include "svdlrCudaTestFixture.h"

#include "svdlrCudaTestHooks.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace
{
using namespace svdlr::test;

// ---------------------------------------------------------------------------------------------------------
// ReconstructOnDevice: the same engine on data already in GPU memory. The test hook copies host data to
// device buffers of the same layout, calls svdlr::ReconstructOnDevice on them, and copies the result back.

template <typename T>
svdlr::Report
ThroughDevice(const std::vector<T> & input, std::vector<T> & output, std::size_t count, std::size_t rows,
              std::size_t cols, const svdlr::Options & options, svdlr::detail::testing::DeviceRun run = {})
{
  return svdlr::detail::testing::ReconstructThroughDevice(
    ConstBatch(input, count, rows, cols), MutableBatch(output, count, rows, cols), options, run);
}

// Runs a ReconstructOnDevice request that must fail and returns the error.
template <typename T>
svdlr::Error
DeviceFailureOf(const std::vector<T> & input, std::size_t count, std::size_t rows, std::size_t cols,
                const svdlr::Options & options)
{
  std::vector<T> output(input.size());
  try
  {
    ThroughDevice(input, output, count, rows, cols, options);
  }
  catch (const svdlr::Error & error)
  {
    return error;
  }
  ADD_FAILURE() << "expected svdlr::Error";
  return svdlr::Error(svdlr::ErrorCode::InvalidArgument, "none");
}

template <typename T>
void
ExpectOnDeviceEqualsOnHost(std::size_t count, std::size_t rows, std::size_t cols, std::size_t maxPerBatch,
                           double bound)
{
  SCOPED_TRACE(std::to_string(count) + " x " + std::to_string(rows) + " x " + std::to_string(cols) + ", batch " +
               std::to_string(maxPerBatch) + (sizeof(T) == 4 ? ", float" : ", double"));
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::vector<T> input = NormalValues<T>(count * rows * cols, random);
  std::vector<T>       onHost(input.size()), onDevice(input.size());
  auto                 options = GpuOptions(svdlr::RankPolicy::Fixed(7));
  options.maxMatricesPerBatch = maxPerBatch;
  std::vector<std::size_t> progress;
  const svdlr::Report      hostReport =
    svdlr::Reconstruct(ConstBatch(input, count, rows, cols), MutableBatch(onHost, count, rows, cols), options);
  options.progress = [&](std::size_t done, std::size_t total) {
    EXPECT_EQ(total, count);
    progress.push_back(done);
    return true;
  };
  const svdlr::Report deviceReport = ThroughDevice(input, onDevice, count, rows, cols, options);

  EXPECT_EQ(deviceReport.backend, svdlr::Backend::CUDA);
  EXPECT_LE(DifferenceNorm(onHost, onDevice) / Norm(onHost), bound);
  EXPECT_EQ(deviceReport.ranks, hostReport.ranks);
  ASSERT_EQ(deviceReport.singularValues.size(), count);
  for (std::size_t i = 0; i < count; ++i)
  {
    EXPECT_EQ(deviceReport.singularValues[i].size(), hostReport.singularValues[i].size());
    const double largest = hostReport.singularValues[i][0];
    EXPECT_NEAR(deviceReport.singularValues[i][0], largest, 1e-9 * largest);
  }
  ASSERT_FALSE(progress.empty());
  EXPECT_TRUE(std::is_sorted(progress.begin(), progress.end()));
  EXPECT_EQ(progress.back(), count);
  if (maxPerBatch > 0)
  {
    EXPECT_EQ(progress.size(), (count + maxPerBatch - 1) / maxPerBatch);
  }
}

TEST_F(SVDLowRankEngineCuda, OnDeviceEqualsOnHostInFloat32)
{
  ExpectOnDeviceEqualsOnHost<float>(7, 181, 217, 0, 1e-6);
  ExpectOnDeviceEqualsOnHost<float>(5, 217, 181, 2, 1e-6);
  ExpectOnDeviceEqualsOnHost<float>(130, 48, 64, 16, 1e-6);
  ExpectOnDeviceEqualsOnHost<float>(1, 33, 47, 0, 1e-6);
}

TEST_F(SVDLowRankEngineCuda, OnDeviceEqualsOnHostInFloat64)
{
  ExpectOnDeviceEqualsOnHost<double>(7, 181, 217, 0, 1e-12);
  ExpectOnDeviceEqualsOnHost<double>(130, 48, 64, 16, 1e-12);
  ExpectOnDeviceEqualsOnHost<double>(1, 33, 47, 0, 1e-12);
}

TEST_F(SVDLowRankEngineCuda, OnDeviceInPlaceEqualsOutOfPlace)
{
  Random                   random;
  const std::size_t        count = 9, rows = 181, cols = 217;
  const std::vector<float> input = NormalValues<float>(count * rows * cols, random);
  std::vector<float>       outOfPlace(input.size()), inPlace(input.size());
  auto                     options = GpuOptions(svdlr::RankPolicy::Fixed(5));
  options.maxMatricesPerBatch = 2; // several batches: in place must not read what a later batch wrote
  ThroughDevice(input, outOfPlace, count, rows, cols, options);
  svdlr::detail::testing::DeviceRun run;
  run.inPlace = true;
  ThroughDevice(input, inPlace, count, rows, cols, options, run);
  ASSERT_TRUE(AllFinite(inPlace));
  EXPECT_EQ(inPlace, outOfPlace);
}

TEST_F(SVDLowRankEngineCuda, OnDeviceStridedBatchLeavesTheGapsAlone)
{
  Random                   random;
  const std::size_t        count = 5, rows = 20, cols = 30, inStride = rows * cols + 13, outStride = rows * cols + 7;
  const std::vector<float> input = NormalValues<float>(count * inStride, random);
  std::vector<float>       packedInput, packedOutput(count * rows * cols);
  for (std::size_t i = 0; i < count; ++i)
  {
    packedInput.insert(packedInput.end(), input.begin() + i * inStride, input.begin() + i * inStride + rows * cols);
  }
  auto options = GpuOptions(svdlr::RankPolicy::Fixed(4));
  options.maxMatricesPerBatch = 2;
  svdlr::Reconstruct(
    ConstBatch(packedInput, count, rows, cols), MutableBatch(packedOutput, count, rows, cols), options);

  // The hook poisons the device output with NaN, so the gaps must come back NaN and the matrices finite.
  std::vector<float> output((count - 1) * outStride + rows * cols);
  const svdlr::MatrixBatch<const float> stridedInput{ input.data(), count, rows, cols, inStride };
  const svdlr::MatrixBatch<float>       stridedOutput{ output.data(), count, rows, cols, outStride };
  svdlr::detail::testing::ReconstructThroughDevice(stridedInput, stridedOutput, options, {});
  for (std::size_t i = 0; i < count; ++i)
  {
    for (std::size_t p = 0; p < outStride && i * outStride + p < output.size(); ++p)
    {
      const float value = output[i * outStride + p];
      if (p < rows * cols)
      {
        ASSERT_NEAR(value, packedOutput[i * rows * cols + p], 1e-5f) << "matrix " << i << " pixel " << p;
      }
      else
      {
        ASSERT_TRUE(std::isnan(value)) << "gap after matrix " << i << " was written";
      }
    }
  }
}

TEST_F(SVDLowRankEngineCuda, OnDeviceWaitsForTheCallersStream)
{
  Random                   random;
  const std::size_t        count = 6, rows = 64, cols = 40;
  const std::vector<float> input = NormalValues<float>(count * rows * cols, random);
  std::vector<float>       expected(input.size()), output(input.size());
  auto                     options = GpuOptions(svdlr::RankPolicy::Fixed(3));
  options.maxMatricesPerBatch = 2;
  svdlr::Reconstruct(ConstBatch(input, count, rows, cols), MutableBatch(expected, count, rows, cols), options);
  // The input lands in the engine's device buffer only after ~20 ms of other work on the caller's stream;
  // an engine that did not wait for that stream would read the NaN poison and throw NonFiniteInput.
  svdlr::detail::testing::DeviceRun run;
  run.callerStream = true;
  ThroughDevice(input, output, count, rows, cols, options, run);
  EXPECT_LE(DifferenceNorm(expected, output) / Norm(expected), 1e-6);
}

TEST_F(SVDLowRankEngineCuda, OnDeviceNonFiniteInputNamesTheMatrix)
{
  Random             random;
  const std::size_t  count = 10, rows = 16, cols = 12;
  std::vector<float> input = NormalValues<float>(count * rows * cols, random);
  input[7 * rows * cols + 5] = std::numeric_limits<float>::quiet_NaN();
  input[9 * rows * cols] = std::numeric_limits<float>::infinity();
  auto options = GpuOptions(svdlr::RankPolicy::Fixed(3));
  options.maxMatricesPerBatch = 3; // matrix 7 is in the third batch
  const svdlr::Error error = DeviceFailureOf(input, count, rows, cols, options);
  EXPECT_EQ(error.Code(), svdlr::ErrorCode::NonFiniteInput);
  EXPECT_EQ(error.Matrix(), 7);
  EXPECT_NE(std::string(error.what()).find("matrix 7"), std::string::npos) << error.what();
}

TEST_F(SVDLowRankEngineCuda, OnDeviceProgressCallbackCanAbort)
{
  Random                   random;
  const std::size_t        count = 6, rows = 10, cols = 12;
  const std::vector<float> input = NormalValues<float>(count * rows * cols, random);
  auto                     options = GpuOptions(svdlr::RankPolicy::Fixed(2));
  options.maxMatricesPerBatch = 2;
  std::size_t calls = 0;
  options.progress = [&](std::size_t, std::size_t) { return ++calls < 2; };
  EXPECT_EQ(DeviceFailureOf(input, count, rows, cols, options).Code(), svdlr::ErrorCode::Aborted);
  EXPECT_EQ(calls, 2u);
}

TEST_F(SVDLowRankEngineCuda, OnDeviceRejectsHostPointers)
{
  std::vector<float> input(2 * 6 * 5, 1.0f), output(input.size());
  for (const auto backend : { svdlr::Backend::CUDA, svdlr::Backend::Auto })
  {
    auto options = GpuOptions(svdlr::RankPolicy::Fixed(1));
    options.backend = backend;
    try
    {
      svdlr::ReconstructOnDevice(ConstBatch(input, 2, 6, 5), MutableBatch(output, 2, 6, 5), options, nullptr);
      ADD_FAILURE() << "host pointers were accepted";
    }
    catch (const svdlr::Error & error)
    {
      EXPECT_EQ(error.Code(), svdlr::ErrorCode::InvalidArgument);
      EXPECT_NE(std::string(error.what()).find("host memory"), std::string::npos) << error.what();
      EXPECT_NE(std::string(error.what()).find("input"), std::string::npos) << error.what();
    }
  }
  EXPECT_EQ(output, std::vector<float>(input.size(), 0.0f)); // nothing was written
}

TEST_F(SVDLowRankEngineCuda, OnDeviceRejectsTheCpuBackend)
{
  Random                   random;
  const std::vector<float> input = NormalValues<float>(2 * 6 * 5, random);
  auto                     options = GpuOptions(svdlr::RankPolicy::Fixed(1));
  options.backend = svdlr::Backend::CPU;
  const svdlr::Error error = DeviceFailureOf(input, 2, 6, 5, options);
  EXPECT_EQ(error.Code(), svdlr::ErrorCode::InvalidArgument);
  EXPECT_NE(std::string(error.what()).find("CPU"), std::string::npos) << error.what();
}

TEST_F(SVDLowRankEngineCuda, OnDeviceValidatesLikeReconstruct)
{
  Random                   random;
  const std::vector<float> input = NormalValues<float>(2 * 6 * 5, random);
  auto                     options = GpuOptions(svdlr::RankPolicy::Fixed(0));
  EXPECT_EQ(DeviceFailureOf(input, 2, 6, 5, options).Code(), svdlr::ErrorCode::InvalidArgument);
  options.policy = svdlr::RankPolicy::Energy(1.5);
  EXPECT_EQ(DeviceFailureOf(input, 2, 6, 5, options).Code(), svdlr::ErrorCode::InvalidArgument);
}

} // namespace
