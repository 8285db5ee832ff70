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
#ifndef svdlrCudaTestFixture_h
#define svdlrCudaTestFixture_h

// What the CUDA backend's GPU test files share: the fixture that skips, saying why, without a usable
// device, and small helpers.

#include "svdlr/Engine.h"
#include "svdlrTestBatches.h"
#include "svdlrTestMatrices.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace svdlr
{
namespace test
{

inline Options
GpuOptions(RankPolicy policy)
{
  return OptionsFor(policy, Backend::CUDA);
}

class SVDLowRankEngineCuda : public ::testing::Test
{
protected:
  void
  SetUp() override
  {
    std::string why;
    if (!svdlr::CudaDeviceUsable(0, &why))
    {
      GTEST_SKIP() << "no usable CUDA device: " << why;
    }
  }

  // Singular values from the float64 Gram matrix: exact to float64 precision for the leading ones.
  template <typename T>
  void
  ExpectMatchesReferenceWithGap(std::size_t count, std::size_t rows, std::size_t cols, std::size_t k, double bound)
  {
    svdlr::test::ExpectMatchesReferenceWithGap<T>(svdlr::Backend::CUDA, count, rows, cols, k, bound, 1e-9);
  }
};

} // namespace test
} // namespace svdlr

#endif
