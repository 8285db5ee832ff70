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
// What the CUDA backend promises beyond the contract every backend keeps (engine/svdlrBackendContractGTest.cxx,
// which this suite instantiates for CUDA): agreement with the CPU backend, the default pipelined split, cached
// resources, device choice, real MRI, and the tiled reconstruction kernel against its naive reference. Every test
// skips, saying why, on a machine without a usable CUDA device.
#include "svdlrCudaTestFixture.h"

#include "svdlrCudaTestHooks.h"
#include "cuda/svdlrCudaDevice.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace
{
using namespace svdlr::test;

TEST_F(SVDLowRankEngineCuda, AgreesWithTheCpuBackend)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::size_t   count = 6, rows = 72, cols = 56, k = 9;
  std::vector<Matrix> matrices;
  for (std::size_t i = 0; i < count; ++i)
  {
    matrices.push_back(RoundedTo<float>(MatrixWithSpectrum(rows, cols, SpectrumWithGap(rows, cols, k), random)));
  }
  const std::vector<float> input = Pack<float>(matrices);
  std::vector<float>       gpu(input.size()), cpu(input.size());
  auto                     options = GpuOptions(svdlr::RankPolicy::Fixed(k));
  const svdlr::Report      gpuReport =
    svdlr::Reconstruct(ConstBatch(input, count, rows, cols), MutableBatch(gpu, count, rows, cols), options);
  options.backend = svdlr::Backend::CPU;
  const svdlr::Report cpuReport =
    svdlr::Reconstruct(ConstBatch(input, count, rows, cols), MutableBatch(cpu, count, rows, cols), options);
  ASSERT_EQ(gpuReport.backend, svdlr::Backend::CUDA);
  ASSERT_EQ(cpuReport.backend, svdlr::Backend::CPU);
  EXPECT_EQ(gpuReport.ranks, cpuReport.ranks);
  EXPECT_LE(DifferenceNorm(cpu, gpu) / Norm(cpu), 1e-5);
  for (std::size_t i = 0; i < count; ++i)
  {
    for (std::size_t j = 0; j < k; ++j)
    {
      EXPECT_NEAR(gpuReport.singularValues[i][j], cpuReport.singularValues[i][j], 1e-5) << i << ", " << j;
    }
  }
}

TEST_F(SVDLowRankEngineCuda, DefaultPipelinedSplitEqualsOneBatch)
{
  // 256 matrices, 16 MiB: by default the pipeline splits this into two batches so that copies overlap.
  Random             random;
  const std::size_t  count = 256, rows = 128, cols = 128;
  const std::vector<float> input = NormalValues<float>(count * rows * cols, random);
  std::vector<float>       split(input.size()), whole(input.size());
  std::vector<std::size_t> progress;
  auto                     options = GpuOptions(svdlr::RankPolicy::Fixed(6));
  options.progress = [&](std::size_t done, std::size_t) {
    progress.push_back(done);
    return true;
  };
  svdlr::Reconstruct(ConstBatch(input, count, rows, cols), MutableBatch(split, count, rows, cols), options);
  EXPECT_EQ(progress, (std::vector<std::size_t>{ 128, 256 }));
  options.maxMatricesPerBatch = count;
  svdlr::Reconstruct(ConstBatch(input, count, rows, cols), MutableBatch(whole, count, rows, cols), options);
  ASSERT_TRUE(AllFinite(split));
  EXPECT_LE(DifferenceNorm(whole, split) / Norm(whole), 1e-6);
}

/** Runs `count` random matrices through the cached resources of element type T: a first run, a run on the set it
 * cached, a run that fails on a non-finite value (its set is freed, not cached), a run after it, and a run after
 * ReleaseCudaResources; every successful run must give the first one's result. */
template <typename T>
void
ExpectCachedResourcesGiveTheSameResult(Random & random)
{
  const std::size_t count = 40, rows = 24, cols = 20;
  const std::vector<T> input = NormalValues<T>(count * rows * cols, random);
  auto options = GpuOptions(svdlr::RankPolicy::Fixed(4));
  options.maxMatricesPerBatch = 16; // several batches on both slots
  const auto run = [&](const std::vector<T> & from, std::vector<T> & to) {
    return svdlr::Reconstruct(ConstBatch(from, count, rows, cols), MutableBatch(to, count, rows, cols), options);
  };
  std::vector<T>      first(input.size());
  const svdlr::Report firstReport = run(input, first);

  std::vector<T> cached(input.size()), afterFailure(input.size()), afterRelease(input.size());
  const svdlr::Report cachedReport = run(input, cached);
  std::vector<T>      broken = input;
  broken[21 * rows * cols + 5] = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> ignored(input.size());
  EXPECT_EQ(FailureOf(ConstBatch(broken, count, rows, cols), MutableBatch(ignored, count, rows, cols), options).Code(),
            svdlr::ErrorCode::NonFiniteInput);
  const svdlr::Report afterFailureReport = run(input, afterFailure);
  svdlr::ReleaseCudaResources();
  const svdlr::Report afterReleaseReport = run(input, afterRelease);

  ASSERT_TRUE(std::all_of(first.begin(), first.end(), [](T v) { return std::isfinite(v); }));
  for (const auto * again : { &cached, &afterFailure, &afterRelease })
  {
    EXPECT_LE(DifferenceNorm(*again, first) / Norm(first), 1e-6);
  }
  for (const auto * report : { &cachedReport, &afterFailureReport, &afterReleaseReport })
  {
    EXPECT_EQ(report->ranks, firstReport.ranks);
  }
}

TEST_F(SVDLowRankEngineCuda, CachedResourcesGiveTheSameResultAfterAFailedRunAndAfterARelease)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  ExpectCachedResourcesGiveTheSameResult<float>(random);
  ExpectCachedResourcesGiveTheSameResult<double>(random);
}

TEST_F(SVDLowRankEngineCuda, DeviceIdOutOfRangeIsUnusableWithAReason)
{
  std::string why;
  EXPECT_FALSE(svdlr::CudaDeviceUsable(4096, &why));
  EXPECT_NE(why.find("out of range"), std::string::npos) << why;

  std::vector<float> input(12, 1.0f), output(12);
  auto               options = GpuOptions(svdlr::RankPolicy::Fixed(1));
  options.deviceId = 4096;
  const auto error = FailureOf(ConstBatch(input, 1, 3, 4), MutableBatch(output, 1, 3, 4), options);
  EXPECT_EQ(error.Code(), svdlr::ErrorCode::BackendUnavailable);
}

// A CUDA call that fails leaves its error in the thread's last-error slot, which the next kernel launch's check would
// read and report as its own: a run after a refused device id failed with "invalid device ordinal" at its first
// launch (found on the H200 when the resource cache's tests, which ask for device 4096, ran before this suite).
TEST_F(SVDLowRankEngineCuda, ARunAfterAFailedCudaCallSucceeds)
{
  EXPECT_THROW(svdlr::detail::ScopedDevice(4096), svdlr::Error);
  std::vector<float> input(12, 1.0f), output(12);
  const svdlr::Report report = svdlr::Reconstruct(ConstBatch(input, 1, 3, 4), MutableBatch(output, 1, 3, 4),
                                                  GpuOptions(svdlr::RankPolicy::Fixed(1)));
  EXPECT_EQ(report.backend, svdlr::Backend::CUDA);
  for (const float value : output)
  {
    EXPECT_NEAR(value, 1.0f, 1e-6f); // all ones is rank one
  }
}

// How far the tiled kernel may be from the naive one (which accumulates in double) at one pixel, given the
// naive value and sumAbs = sum_l |p_l q_l| over the matrix's components. Double output: the tiled kernel
// also computes in double, so the two differ by summation order only. Float output: the tiled kernel rounds
// the factors to float and accumulates in float, at most (rank + 2) * FLT_EPSILON / 2 * sumAbs, which
// 2 * rank * FLT_EPSILON * sumAbs covers for every rank >= 1 along with the naive kernel's own double
// error; the naive value is rounded to float as well, half an ulp of it.
template <typename TOut>
double
TiledProductTolerance(TOut naive, double sumAbs, int rank)
{
  if constexpr (std::is_same<TOut, float>::value)
  {
    const float magnitude = std::abs(naive);
    const float ulp = std::nextafter(magnitude, std::numeric_limits<float>::infinity()) - magnitude;
    return 2.0 * rank * std::numeric_limits<float>::epsilon() * sumAbs + 0.5 * static_cast<double>(ulp);
  }
  else
  {
    return 1e-13 * std::max(1.0, std::abs(static_cast<double>(naive)));
  }
}

// The tiled kernel against the naive one, on awkward sizes: edges that cut tiles, a component count that is
// not a multiple of the tile depth, and per-matrix ranks from 0 to all components. The tolerance must stay
// tight enough to catch a wrong component: dropping matrix m's last component must exceed it somewhere.
template <typename TOut>
void
ExpectTiledMatchesNaive(std::int64_t rows, std::int64_t cols, std::int64_t components, std::vector<int> ranks)
{
  using svdlr::detail::testing::ProductKernel;
  using svdlr::detail::testing::RunLowRankProduct;
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const std::size_t   count = ranks.size();
  std::vector<double> p(count * rows * components), q(count * cols * components);
  for (double & v : p)
  {
    v = random.Normal();
  }
  for (double & v : q)
  {
    v = random.Normal();
  }
  const std::vector<TOut> tiled = RunLowRankProduct<TOut>(ProductKernel::Tiled, p, q, ranks, rows, cols, components, 0);
  const std::vector<TOut> naive = RunLowRankProduct<TOut>(ProductKernel::Naive, p, q, ranks, rows, cols, components, 0);
  ASSERT_EQ(tiled.size(), naive.size());
  for (std::size_t m = 0; m < count; ++m)
  {
    const double * pm = p.data() + m * rows * components; // (rows, components) column-major
    const double * qm = q.data() + m * cols * components; // (cols, components) column-major
    const int      rank = ranks[m];
    bool           droppingLastComponentIsCaught = false;
    for (std::int64_t e = 0; e < rows * cols; ++e)
    {
      const std::size_t  at = m * rows * cols + e;
      const std::int64_t row = e / cols;
      const std::int64_t col = e % cols;
      ASSERT_TRUE(std::isfinite(tiled[at])) << "matrix " << m << " pixel " << e << " not written";
      if (rank == 0)
      {
        ASSERT_EQ(tiled[at], TOut(0)) << "matrix " << m << " pixel " << e;
        continue;
      }
      double sumAbs = 0.0;
      for (int l = 0; l < rank; ++l)
      {
        sumAbs += std::abs(pm[row + rows * l] * qm[col + cols * l]);
      }
      const double tolerance = TiledProductTolerance(naive[at], sumAbs, rank);
      const double difference = std::abs(static_cast<double>(tiled[at]) - static_cast<double>(naive[at]));
      ASSERT_LE(difference, tolerance) << "matrix " << m << " pixel " << e << " rank " << rank << ": tiled "
                                       << tiled[at] << ", naive " << naive[at];
      const double lastTerm = std::abs(pm[row + rows * (rank - 1)] * qm[col + cols * (rank - 1)]);
      droppingLastComponentIsCaught = droppingLastComponentIsCaught || lastTerm > tolerance;
    }
    if (rank > 0)
    {
      EXPECT_TRUE(droppingLastComponentIsCaught)
        << "matrix " << m << ": tolerance too loose to catch a wrong component";
    }
  }
}

TEST_F(SVDLowRankEngineCuda, TiledProductKernelMatchesNaiveKernel)
{
  ExpectTiledMatchesNaive<float>(181, 217, 40, { 40, 0, 1, 17, 16, 33 });
  ExpectTiledMatchesNaive<double>(217, 181, 40, { 0, 40, 15, 32, 7 });
  ExpectTiledMatchesNaive<double>(5, 3, 2, { 2, 1 });
  ExpectTiledMatchesNaive<float>(256, 256, 32, std::vector<int>(9, 32));
}

// Real MRI on the GPU: the Colin27 volume (181 x 217 x 181, unsigned char) as raw bytes, x fastest, named
// by SVDLR_COLIN27_RAW (the GPU machine has no ITK to read the NIfTI; the ITK filter test reads it on the
// CPU). Every slice along every axis must meet the bound; rank-deficient and empty slices come back whole.
TEST_F(SVDLowRankEngineCuda, Colin27SlicesAlongEveryAxisMeetTheBounds)
{
  const char * path = std::getenv("SVDLR_COLIN27_RAW");
  if (path == nullptr)
  {
    GTEST_SKIP() << "set SVDLR_COLIN27_RAW to the Colin27 volume as raw 181x217x181 unsigned char";
  }
  const std::size_t          nx = 181, ny = 217, nz = 181, k = 20;
  std::vector<unsigned char> voxels(nx * ny * nz);
  std::FILE *                file = std::fopen(path, "rb");
  ASSERT_NE(file, nullptr) << path;
  ASSERT_EQ(std::fread(voxels.data(), 1, voxels.size(), file), voxels.size());
  std::fclose(file);
  const auto at = [&](std::size_t x, std::size_t y, std::size_t z) { return voxels[(z * ny + y) * nx + x]; };

  // Axis a: slices normal to it; rows along the higher in-plane axis, columns along the lower one.
  const std::size_t sizes[3] = { nx, ny, nz };
  for (unsigned int axis = 0; axis < 3; ++axis)
  {
    const unsigned int  colAxis = axis == 0 ? 1 : 0, rowAxis = axis == 2 ? 1 : 2;
    const std::size_t   count = sizes[axis], rows = sizes[rowAxis], cols = sizes[colAxis];
    std::vector<Matrix> slices(count, Matrix(rows, cols));
    for (std::size_t s = 0; s < count; ++s)
    {
      for (std::size_t r = 0; r < rows; ++r)
      {
        for (std::size_t c = 0; c < cols; ++c)
        {
          std::size_t index[3];
          index[axis] = s;
          index[rowAxis] = r;
          index[colAxis] = c;
          slices[s](r, c) = at(index[0], index[1], index[2]);
        }
      }
    }
    const std::vector<float> input = Pack<float>(slices);
    std::vector<float>       output(input.size(), std::numeric_limits<float>::quiet_NaN());
    const svdlr::Report      report = svdlr::Reconstruct(ConstBatch(input, count, rows, cols),
                                                    MutableBatch(output, count, rows, cols),
                                                    GpuOptions(svdlr::RankPolicy::Fixed(k)));
    ASSERT_EQ(report.backend, svdlr::Backend::CUDA);
    ASSERT_TRUE(AllFinite(output));
    for (std::size_t s = 0; s < count; ++s)
    {
      const ReferenceSvd reference(slices[s]);
      const double       tail = reference.TailNorm(k);
      const double       norm = Norm(slices[s].values);
      const double       error = DifferenceNorm(slices[s].values, output, s * rows * cols);
      if (tail <= 1e-6 * (norm + 1.0))
      {
        EXPECT_LE(error, 1e-5 * (norm + 1.0)) << "axis " << axis << " slice " << s;
      }
      else
      {
        EXPECT_LE(error / tail, 1.0 + 1e-4) << "axis " << axis << " slice " << s;
      }
    }
  }
}

} // namespace
