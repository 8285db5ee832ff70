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
// What the CPU backend promises beyond the contract every backend keeps (svdlrBackendContractGTest.cxx, which
// this suite instantiates for the CPU): LAPACK's accuracy on single, row and rank-deficient matrices, energy
// fractions at their boundaries, request errors, the Auto backend's rule, and OpenBLAS's kernels.
#include "svdlr/Engine.h"
#include "shared/svdlrBlasThreads.h"
#include "shared/svdlrBackendChoice.h"
#include "svdlr/LocalDenoise.h"
#include "svdlrTestBatches.h"
#include "svdlrTestMatrices.h"

#include <gtest/gtest.h>

#include <chrono>
#include <sys/resource.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace
{
using namespace svdlr::test;

svdlr::Options
CpuOptions(svdlr::RankPolicy policy)
{
  return OptionsFor(policy, svdlr::Backend::CPU);
}

// The CPU backend's singular values come from LAPACK in the working precision.
template <typename T>
void
ExpectMatchesReferenceWithGap(std::size_t count, std::size_t rows, std::size_t cols, std::size_t k, double bound)
{
  svdlr::test::ExpectMatchesReferenceWithGap<T>(svdlr::Backend::CPU, count, rows, cols, k, bound, 1e-5);
}

TEST(SVDLowRankEngineCpu, RowVectorIsItsOwnRankOneReconstruction)
{
  Random             random;
  std::vector<float> input(300);
  for (float & v : input)
  {
    v = static_cast<float>(random.Uniform(1.0, 2.0));
  }
  std::vector<float>  output(input.size());
  const svdlr::Report report = svdlr::Reconstruct(ConstBatch(input, 1, 1, 300), MutableBatch(output, 1, 1, 300),
                                                  CpuOptions(svdlr::RankPolicy::Fixed(3)));
  EXPECT_EQ(report.ranks[0], 1u);
  ASSERT_EQ(report.singularValues[0].size(), 1u);
  EXPECT_NEAR(report.singularValues[0][0], Norm(input), 1e-4 * Norm(input));
  EXPECT_LE(DifferenceNorm(input, output) / Norm(input), 1e-6);
}

TEST(SVDLowRankEngineCpu, SingleMatrixMatchesFloat64Reference)
{
  // One matrix for many workers: its LAPACK calls get the idle workers' cores.
  ExpectMatchesReferenceWithGap<float>(1, 256, 256, 100, 1e-5);
}

TEST(SVDLowRankEngineCpu, RankDeficientFloat32MatrixIsReproducedWithZeroTail)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  for (const auto & [rows, cols] : std::vector<std::pair<std::size_t, std::size_t>>{ { 90, 60 }, { 60, 90 } })
  {
    const Matrix             a = RoundedTo<float>(MatrixWithSpectrum(rows, cols, { 5.0, 4.0, 3.0, 2.0, 1.0 }, random));
    const std::vector<float> input(a.values.begin(), a.values.end());
    std::vector<float>       output(input.size());
    const svdlr::Report      report = svdlr::Reconstruct(
      ConstBatch(input, 1, rows, cols), MutableBatch(output, 1, rows, cols), CpuOptions(svdlr::RankPolicy::Fixed(10)));
    const std::vector<double> & values = report.singularValues[0];
    ASSERT_EQ(values.size(), 60u);
    EXPECT_TRUE(std::is_sorted(values.rbegin(), values.rend()));
    EXPECT_NEAR(values[4], 1.0, 1e-5);
    for (std::size_t i = 5; i < values.size(); ++i)
    {
      EXPECT_LE(values[i], 1e-6 * values[0]) << "value " << i;
    }
    EXPECT_LE(DifferenceNorm(input, output) / Norm(input), 1e-6) << rows << " x " << cols;
  }
}

TEST(SVDLowRankEngineCpu, EnergyFractionPicksFewestValuesHoldingTheFraction)
{
  // Singular values 4, 3, 2, 1: energies 16, 9, 4, 1 of 30, so cumulative fractions .533, .833, .967, 1.
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const Matrix              a = MatrixWithSpectrum(12, 9, { 4.0, 3.0, 2.0, 1.0 }, random);
  const std::vector<double> input = a.values;
  const std::vector<std::pair<double, std::size_t>> expectations = {
    { 0.5, 1 }, { 0.533, 1 }, { 0.534, 2 }, { 0.8, 2 }, { 0.9, 3 }, { 0.97, 4 }, { 1.0, 4 }
  };
  for (const auto & [fraction, expectedRank] : expectations)
  {
    std::vector<double> output(input.size());
    const svdlr::Report report = svdlr::Reconstruct(ConstBatch(input, 1, 12, 9), MutableBatch(output, 1, 12, 9),
                                                    CpuOptions(svdlr::RankPolicy::Energy(fraction)));
    EXPECT_EQ(report.ranks[0], expectedRank) << "energy fraction " << fraction;
    const ReferenceSvd reference(a);
    EXPECT_LE(RelativeError(output, 0, reference.Truncated(expectedRank)), 1e-10);
  }
}

class SVDLowRankEngineErrors : public ::testing::Test
{
protected:
  void
  SetUp() override
  {
    m_Input =
      Pack<float>({ RandomMatrix(8, 6, m_Random), RandomMatrix(8, 6, m_Random), RandomMatrix(8, 6, m_Random) });
    m_Output.assign(m_Input.size(), 0.0f);
  }
  svdlr::MatrixBatch<const float>
  In()
  {
    return ConstBatch(m_Input, 3, 8, 6);
  }
  svdlr::MatrixBatch<float>
  Out()
  {
    return MutableBatch(m_Output, 3, 8, 6);
  }
  Random                 m_Random;
  ::testing::ScopedTrace m_SeedTrace{ __FILE__, __LINE__, m_Random.SeedTrace() };
  std::vector<float>     m_Input;
  std::vector<float>     m_Output;
};

TEST_F(SVDLowRankEngineErrors, RankZeroIsRejected)
{
  const auto error = FailureOf(In(), Out(), CpuOptions(svdlr::RankPolicy::Fixed(0)));
  EXPECT_EQ(error.Code(), svdlr::ErrorCode::InvalidArgument);
  EXPECT_NE(std::string(error.what()).find("rank must be at least 1"), std::string::npos) << error.what();
}

TEST_F(SVDLowRankEngineErrors, EnergyFractionOutsideUnitIntervalIsRejected)
{
  for (const double fraction : { 0.0, -0.5, 1.5, std::numeric_limits<double>::quiet_NaN() })
  {
    const auto error = FailureOf(In(), Out(), CpuOptions(svdlr::RankPolicy::Energy(fraction)));
    EXPECT_EQ(error.Code(), svdlr::ErrorCode::InvalidArgument) << fraction;
    EXPECT_NE(std::string(error.what()).find("energy fraction must be in (0, 1]"), std::string::npos) << error.what();
  }
}

TEST_F(SVDLowRankEngineErrors, SubspaceSolverWithAnEnergyFractionIsRejected)
{
  auto options = CpuOptions(svdlr::RankPolicy::Energy(0.9));
  options.solver = svdlr::Solver::Subspace;
  const auto error = FailureOf(In(), Out(), options);
  EXPECT_EQ(error.Code(), svdlr::ErrorCode::InvalidArgument);
  EXPECT_NE(std::string(error.what()).find("subspace solver needs a fixed rank"), std::string::npos) << error.what();
}

TEST_F(SVDLowRankEngineErrors, CpuBackendIsAlwaysExact)
{
  auto options = CpuOptions(svdlr::RankPolicy::Fixed(2));
  options.solver = svdlr::Solver::Subspace;
  const svdlr::Report report = svdlr::Reconstruct(In(), Out(), options);
  EXPECT_EQ(report.solver, svdlr::Solver::Exact);
  EXPECT_EQ(report.singularValues[0].size(), 6u);
}

TEST_F(SVDLowRankEngineErrors, EmptyBatchIsRejected)
{
  auto in = In();
  in.rows = 0;
  auto out = Out();
  out.rows = 0;
  EXPECT_EQ(FailureOf(in, out, CpuOptions(svdlr::RankPolicy::Fixed(1))).Code(), svdlr::ErrorCode::InvalidArgument);
}

TEST_F(SVDLowRankEngineErrors, MismatchedOutputIsRejected)
{
  auto out = Out();
  out.cols = 5;
  EXPECT_EQ(FailureOf(In(), out, CpuOptions(svdlr::RankPolicy::Fixed(1))).Code(), svdlr::ErrorCode::InvalidArgument);
}

TEST_F(SVDLowRankEngineErrors, CudaRequestedWithoutUsableDeviceSaysWhy)
{
  std::string why;
  if (svdlr::CudaDeviceUsable(0, &why))
  {
    GTEST_SKIP() << "a CUDA device is usable here; this test covers machines without one";
  }
  auto options = CpuOptions(svdlr::RankPolicy::Fixed(1));
  options.backend = svdlr::Backend::CUDA;
  const auto error = FailureOf(In(), Out(), options);
  EXPECT_EQ(error.Code(), svdlr::ErrorCode::BackendUnavailable);
  EXPECT_NE(std::string(error.what()).find(why), std::string::npos) << error.what();
}

TEST_F(SVDLowRankEngineErrors, AutoWithoutUsableDeviceRunsOnTheCpu)
{
  if (svdlr::CudaDeviceUsable(0))
  {
    GTEST_SKIP() << "a CUDA device is usable here; this test covers machines without one";
  }
  // A small job goes to the CPU without asking the GPU (the cold-start rule), so there is nothing to note.
  auto options = CpuOptions(svdlr::RankPolicy::Fixed(1));
  options.backend = svdlr::Backend::Auto;
  svdlr::Report report = svdlr::Reconstruct(In(), Out(), options);
  EXPECT_EQ(report.backend, svdlr::Backend::CPU);
  EXPECT_TRUE(report.notes.empty()) << report.notes;

  // A job too large for that rule asks the GPU first; with CUDA built in, the notes say why it could not run.
  const std::size_t side = 800; // about 0.8 s on one thread by the rule's estimate
  options.threads = 1;
  ASSERT_FALSE(svdlr::detail::AutoPrefersCpuWhenCold(1, side, side, options));
  std::vector<float> big(side * side);
  for (std::size_t i = 0; i < big.size(); ++i)
  {
    big[i] = static_cast<float>((i * 2654435761u) % 1000u) / 1000.0f;
  }
  report = svdlr::Reconstruct(svdlr::MatrixBatch<const float>{ big.data(), 1, side, side, side * side },
                              svdlr::MatrixBatch<float>{ big.data(), 1, side, side, side * side },
                              options);
  EXPECT_EQ(report.backend, svdlr::Backend::CPU);
  EXPECT_EQ(report.notes.empty(), !svdlr::CudaBackendBuilt()) << report.notes;
}

TEST(SVDLowRankAutoBackend, ColdStartRuleWeighsTheCpuTimeAgainstTheGpuStartUp)
{
  svdlr::Options options;
  options.policy = svdlr::RankPolicy::Fixed(20);
  options.threads = 16;
  // Colin27 (181 slices of 217 x 181) on 16 threads: about 0.1 s, less than a cold GPU's start-up.
  EXPECT_TRUE(svdlr::detail::AutoPrefersCpuWhenCold(181, 217, 181, options));
  // The same on 2 threads, and W1 (256 slices of 256 x 256) on 16, take longer than the start-up.
  options.threads = 2;
  EXPECT_FALSE(svdlr::detail::AutoPrefersCpuWhenCold(181, 217, 181, options));
  options.threads = 16;
  options.policy = svdlr::RankPolicy::Fixed(32);
  EXPECT_FALSE(svdlr::detail::AutoPrefersCpuWhenCold(256, 256, 256, options));
  // One small slice is always quicker on the CPU than a cold GPU.
  EXPECT_TRUE(svdlr::detail::AutoPrefersCpuWhenCold(1, 256, 256, options));
  // The estimate grows with the work and shrinks with the threads.
  EXPECT_LT(svdlr::detail::EstimatedCpuSeconds(10, 100, 100, 10, 4), svdlr::detail::EstimatedCpuSeconds(20, 100, 100, 10, 4));
  EXPECT_LT(svdlr::detail::EstimatedCpuSeconds(10, 100, 100, 10, 8), svdlr::detail::EstimatedCpuSeconds(10, 100, 100, 10, 4));
}

TEST(SVDLowRankAutoBackend, WarmUpIsHarmlessWithoutAUsableGpu)
{
  if (svdlr::CudaDeviceUsable(0))
  {
    GTEST_SKIP() << "a CUDA device is usable here; this test covers machines without one";
  }
  svdlr::Options options;
  options.policy = svdlr::RankPolicy::Fixed(4);
  options.backend = svdlr::Backend::CUDA;
  options.threads = 1;
  svdlr::StartCudaDeviceWarmUp(options.backend, options.deviceId);
  svdlr::StartCudaWarmUp(64, 512, 512, options); // queued after the device's: both fail on the thread, dropped
  svdlr::WaitForCudaWarmUp();
  svdlr::WaitForCudaWarmUp(); // nothing left to wait for
  svdlr::ReleaseCudaDevices(); // no device was used: nothing to do
  // The real call then reports the problem itself.
  std::vector<float> data(16 * 16, 1.5f);
  data[3] = 2.0f;
  EXPECT_THROW(svdlr::Reconstruct(svdlr::MatrixBatch<const float>{ data.data(), 1, 16, 16, 256 },
                                  svdlr::MatrixBatch<float>{ data.data(), 1, 16, 16, 256 },
                                  options),
               svdlr::Error);
}

// Issue 23, row 6: a header claiming 32767^3 voxels made the warm-up fill a 4.3 GB slice of random numbers before it
// learned that there is no GPU. It allocates nothing before a device is found, and never more than a bound of its
// own (16 matrices of at most 1024 x 1024), whatever the input claims.
TEST(SVDLowRankCudaWarmUp, HugeInputClaimAllocatesLittleAndEndsSoon)
{
  svdlr::Options options;
  options.policy = svdlr::RankPolicy::Fixed(4);
  options.backend = svdlr::Backend::CUDA;
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  const auto start = std::chrono::steady_clock::now();
  svdlr::StartCudaWarmUp(32767, 32767, 32767, options);
  svdlr::WaitForCudaWarmUp();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  EXPECT_LT(seconds, 10.0);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 500L * 1024) << "KiB of peak resident memory added by the warm-up";
}

// The denoiser's warm-up, started from a header's claims before the pixels are read: nothing allocated before a
// device is found, a bound of its own after, and without a device the real call on the CPU is untouched.
TEST(SVDLowRankCudaWarmUp, DenoiseWarmUpOfAHugeClaimAllocatesLittleAndLeavesTheCpuRunAlone)
{
  svdlr::LocalDenoiseOptions options;
  options.backend = svdlr::Backend::Auto;
  options.patchSize = { 99, 99, 99 };
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  svdlr::StartCudaDenoiseWarmUp(32767, options);
  svdlr::WaitForCudaWarmUp();
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 500L * 1024) << "KiB of peak resident memory added by the warm-up "
                                                               "(a CUDA context included, where there is a GPU)";

  const std::array<std::size_t, 3> size{ { 7, 6, 5 } };
  const std::size_t                volumes = 8, voxels = 7 * 6 * 5;
  std::vector<float>               series(voxels * volumes);
  for (std::size_t i = 0; i < series.size(); ++i)
  {
    series[i] = 10.0f + static_cast<float>((i * 7919) % 101) / 50.0f;
  }
  const std::array<std::ptrdiff_t, 4> strides{ { 1, 7, 42, 210 } };
  std::vector<float>                  cold(series.size()), warm(series.size());
  svdlr::LocalDenoiseOptions          cpu;
  cpu.backend = svdlr::Backend::CPU;
  cpu.threads = 1;
  (void)svdlr::DenoiseLocalLowRank({ series.data(), size, volumes, strides }, { cold.data(), size, volumes, strides },
                                   {}, cpu);
  svdlr::StartCudaDenoiseWarmUp(volumes, cpu); // the CPU backend: nothing to warm
  (void)svdlr::DenoiseLocalLowRank({ series.data(), size, volumes, strides }, { warm.data(), size, volumes, strides },
                                   {}, cpu);
  EXPECT_EQ(cold, warm);
}

TEST(SVDLowRankBlasCore, GenericOpenBlasKernelsAreReplacedOnlyByWhatTheCpuRuns)
{
  using svdlr::detail::BetterOpenBlasCore;
  EXPECT_EQ(BetterOpenBlasCore("Prescott", true, true), "SkylakeX");
  EXPECT_EQ(BetterOpenBlasCore("Prescott", true, false), "Haswell");
  EXPECT_EQ(BetterOpenBlasCore("NEHALEM", true, false), "Haswell");
  EXPECT_EQ(BetterOpenBlasCore("Prescott", false, false), "");  // an SSE-only CPU keeps its kernels
  EXPECT_EQ(BetterOpenBlasCore("Haswell", true, true), "");     // a model OpenBLAS recognised is left alone
  EXPECT_EQ(BetterOpenBlasCore("Cooperlake", true, true), "");
  EXPECT_EQ(BetterOpenBlasCore("Zen", true, false), "");
}

TEST(SVDLowRankBlasCore, TheCpuBackendRunsOnKernelsTheCpuSupports)
{
  const std::string core = svdlr::detail::EnsureBlasCoreMatchesCpu();
  if (core.empty())
  {
    GTEST_SKIP() << "the BLAS linked here is not an OpenBLAS with run-time kernel selection";
  }
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && std::getenv("OPENBLAS_CORETYPE") == nullptr)
  {
    EXPECT_EQ(svdlr::detail::BetterOpenBlasCore(core, true, false), "") << "still on generic kernels: " << core;
  }
#endif
  // And the CPU backend still computes right after any switch.
  std::vector<float> data(24 * 20);
  for (std::size_t i = 0; i < data.size(); ++i)
  {
    data[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)) + 0.01 * static_cast<double>(i % 7));
  }
  const std::vector<float> original = data;
  svdlr::Options           options;
  options.backend = svdlr::Backend::CPU;
  options.policy = svdlr::RankPolicy::Fixed(20);
  (void)svdlr::Reconstruct(svdlr::MatrixBatch<const float>{ data.data(), 1, 24, 20, 480 },
                           svdlr::MatrixBatch<float>{ data.data(), 1, 24, 20, 480 },
                           options);
  for (std::size_t i = 0; i < data.size(); ++i)
  {
    EXPECT_NEAR(data[i], original[i], 1e-5) << "full rank must give the input back, at " << i;
  }
}

TEST(SVDLowRankBlasCore, SwitchesFromGenericKernels)
{
  // Run by its own CTest entry with OPENBLAS_CORETYPE=Prescott, which OpenBLAS read when it loaded.
  if (std::getenv("SVDLR_TEST_UNSET_OPENBLAS_CORETYPE") == nullptr)
  {
    GTEST_SKIP() << "runs only from its CTest entry, which loads OpenBLAS on its generic kernels";
  }
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")))
  {
    GTEST_SKIP() << "this CPU has no AVX2: the generic kernels are right for it";
  }
#endif
  unsetenv("OPENBLAS_CORETYPE"); // as if the user had set nothing
  const std::string core = svdlr::detail::EnsureBlasCoreMatchesCpu();
  if (core.empty())
  {
    GTEST_SKIP() << "the BLAS linked here is not an OpenBLAS with run-time kernel selection";
  }
  EXPECT_NE(core, "Prescott");
  EXPECT_EQ(svdlr::detail::BetterOpenBlasCore(core, true, false), "") << core;
}

} // namespace
