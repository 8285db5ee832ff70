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
#ifndef svdlr_SmallEigenTuning_h
#define svdlr_SmallEigenTuning_h

// The knobs of the small-matrix eigen-solver (svdlrSmallEigenSolver.h), apart so that host code (tests,
// benchmarks, svdlrLocalDenoiseCuda.h) can name them without CUDA headers.

namespace svdlr
{
namespace detail
{

/** Variants of the solver's kernels, kept side by side so that one device run can time them against each other
 * (docs/denoising-cuda.md). The defaults are the kernels measured and sanitised on the H100; the three variants
 * were written after that run and are verified only by what runs without a GPU (the QL arithmetic on the CPU),
 * until the next device run (benchmarks/device.sh denoise-kernels times them all). */
struct SmallEigenTuning
{
  bool lowerTridiagonalization{ false }; // stage 1 updates the lower triangle only, q threads per row of A v
  bool sharedQL{ false };                // stage 2 iterates on d and e in shared memory, not in the global workspace
  bool fastRotation{ false };            // stage 2: one square root and one division per QL rotation
};

} // namespace detail
} // namespace svdlr

#endif
