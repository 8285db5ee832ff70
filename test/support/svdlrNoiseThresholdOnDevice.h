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
#ifndef svdlrNoiseThresholdOnDevice_h
#define svdlrNoiseThresholdOnDevice_h

// Runs src/noise/svdlrNoiseThreshold.h's functions in a CUDA kernel, one thread per matrix, so that the tests can
// compare the device's decisions with the host's on the same eigenvalues. Host vectors in and out: the test
// files that call it need no CUDA header.

#include "svdlr/Engine.h"

#include <vector>

namespace svdlr
{
namespace test
{

/** What the device decided for one matrix. */
struct DeviceNoiseDecision
{
  int    rank{ 0 };
  double sigma{ 0.0 };
  double largestShrunk{ 0.0 }; // OptimalFrobeniusShrinkage of the largest singular value with that σ
};

/** `eigenvalues` holds `count` matrices' min(rows, cols) Gram eigenvalues each, ascending, one matrix after the
 * other. Policy kinds GavishDonoho and MarchenkoPastur. Throws svdlr::Error on a CUDA failure. */
std::vector<DeviceNoiseDecision>
DecideNoiseRanksOnDevice(const std::vector<double> & eigenvalues, int count, int rows, int cols,
                         const RankPolicy & policy);

} // namespace test
} // namespace svdlr

#endif
