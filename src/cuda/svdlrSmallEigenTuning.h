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

#include <string>
#include <vector>

namespace svdlr
{
namespace detail
{

/** Stage 1's kernel (svdlrSmallEigenSolver.cu). */
enum class TridiagonalKernel
{
  RegisterColumns, // each thread holds one column of the trailing matrix in registers (3 <= n <= 65; else SharedFull)
  SharedFull,      // the matrix in shared memory, both triangles updated, one thread per row of A v (the first one)
  SharedLower      // the matrix in shared memory, the lower triangle only, q threads per row of A v
};

/** Variants of the solver's kernels, kept side by side so that one device run can time them against each other
 * (docs/denoising-cuda.md; benchmarks/device.sh denoise-kernels times them all, the tests check them all against
 * cuSOLVER). The QL defaults are the fastest measured on the H100 (QL in shared memory with fast rotations: 60 ms
 * against 78 ms at 96x96x60x65); RegisterColumns was written after that run and is not yet measured. */
struct SmallEigenTuning
{
  TridiagonalKernel tridiagonal{ TridiagonalKernel::RegisterColumns };
  bool              sharedQL{ true };      // stage 2 iterates on d and e in shared memory, not in the global workspace
  bool              fastRotation{ true };  // stage 2: one square root and one division per QL rotation
};

inline bool
operator==(const SmallEigenTuning & a, const SmallEigenTuning & b)
{
  return a.tridiagonal == b.tridiagonal && a.sharedQL == b.sharedQL && a.fastRotation == b.fastRotation;
}

/** Every combination of the variants, the default first. */
inline std::vector<SmallEigenTuning>
AllSmallEigenTunings()
{
  std::vector<SmallEigenTuning> all{ SmallEigenTuning{} };
  for (const TridiagonalKernel kernel :
       { TridiagonalKernel::RegisterColumns, TridiagonalKernel::SharedFull, TridiagonalKernel::SharedLower })
  {
    for (const bool shared : { false, true })
    {
      for (const bool fast : { false, true })
      {
        const SmallEigenTuning tuning{ kernel, shared, fast };
        if (!(tuning == all.front()))
        {
          all.push_back(tuning);
        }
      }
    }
  }
  return all;
}

/** The variant in words, for test traces and benchmark rows. */
inline std::string
SmallEigenTuningName(const SmallEigenTuning & tuning)
{
  const char * stage1 = tuning.tridiagonal == TridiagonalKernel::RegisterColumns
                          ? "register-column"
                          : (tuning.tridiagonal == TridiagonalKernel::SharedFull ? "full" : "lower");
  return std::string(stage1) + " tridiagonalisation, QL in " + (tuning.sharedQL ? "shared" : "global") + " memory" +
         (tuning.fastRotation ? ", fast rotations" : "");
}

} // namespace detail
} // namespace svdlr

#endif
