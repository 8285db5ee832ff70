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
  SharedFull,      // the matrix in shared memory, both triangles updated, one thread per row of A v (the first one)
  SharedLower,     // the matrix in shared memory, the lower triangle only, q threads per row of A v
  SharedPacked,    // as SharedLower, the lower triangle packed (half the shared memory: n = 200 fits, more blocks
                   // an SM), 512 threads a block past n = 96
  SharedFused,     // the matrix in shared memory, both triangles; step j's rank-2 update and step j + 1's A v in
                   // one pass, each lane holding its rows of v and w in registers; two barriers a step
                   // (svdlrFusedTridiagonalKernel.cuh). Past n = 165 (H100) the same with the lower triangle
                   // packed (n <= 223), past that SharedPacked's kernel.
  SharedFusedWide  // as SharedFused with twice the warps a block (8 up to n = 96)
};

/** Variants of the solver's kernels, kept side by side so that one device run can time them against each other
 * (docs/denoising-cuda.md; benchmarks/device.sh denoise-kernels times them all, the tests check them all against
 * cuSOLVER). The defaults are the fastest measured on the H100: SharedFused's stage 1 (135 ms against SharedFull's
 * 175 ms at 96x96x60x65, n = 65; 375 ms against 947 ms at 40x40x24x200, n = 200, where SharedFull falls back to
 * global memory), and QL in shared memory with fast rotations (60 ms against 78 ms at n = 65). A register-column
 * stage 1 was tried and removed: it measured 331 ms against SharedFull's 171 ms, and left QL unconverged on
 * clustered spectra (docs/denoising-cuda.md, version 3). */
struct SmallEigenTuning
{
  TridiagonalKernel tridiagonal{ TridiagonalKernel::SharedFused };
  bool              sharedQL{ true };      // stage 2 iterates on d and e in shared memory, not in the global workspace
  bool              fastRotation{ true };  // stage 2: one square root and one division per QL rotation
  /** Stage 2 by bisection, one thread per eigenvalue (BisectEigenvalue), instead of QL, one thread per matrix
   * (sharedQL and fastRotation then do not apply). QL's chain is a whole matrix's iteration: within a memory limit
   * (n = 200 in 8 GB: 2,184 matrices a batch) a batch took as long as its longest chain, 18 ms, and stage 2 2.5 s
   * of a 176x176x120x200 series' 8.5 s on the H200. */
  bool bisection{ true };
  /** Stage 3 (inverse iteration, one thread per matrix) on T, its LU factors and the vector in shared memory, not
   * in the global workspace, whose loads each of its long chains waited on (2.3 s of the same 8.5 s). */
  bool sharedInverseIteration{ true };
};

inline bool
operator==(const SmallEigenTuning & a, const SmallEigenTuning & b)
{
  return a.tridiagonal == b.tridiagonal && a.sharedQL == b.sharedQL && a.fastRotation == b.fastRotation &&
         a.bisection == b.bisection && a.sharedInverseIteration == b.sharedInverseIteration;
}

/** The variants, the default first: every combination of the first two stage-1 kernels with the QL options, then
 * each later stage-1 kernel with the default stages 2 and 3 (one row each keeps the device run short), then the
 * defaults but QL, and the defaults but stage 3 in global memory. */
inline std::vector<SmallEigenTuning>
AllSmallEigenTunings()
{
  std::vector<SmallEigenTuning> all{ SmallEigenTuning{} };
  for (const TridiagonalKernel kernel : { TridiagonalKernel::SharedFull, TridiagonalKernel::SharedLower })
  {
    for (const bool shared : { false, true })
    {
      for (const bool fast : { false, true })
      {
        const SmallEigenTuning tuning{ kernel, shared, fast, false };
        if (!(tuning == all.front()))
        {
          all.push_back(tuning);
        }
      }
    }
  }
  for (const TridiagonalKernel kernel :
       { TridiagonalKernel::SharedPacked, TridiagonalKernel::SharedFused, TridiagonalKernel::SharedFusedWide })
  {
    SmallEigenTuning tuning;
    tuning.tridiagonal = kernel;
    if (!(tuning == all.front()))
    {
      all.push_back(tuning);
    }
  }
  SmallEigenTuning ql;
  ql.bisection = false;
  all.push_back(ql);
  SmallEigenTuning globalInverseIteration;
  globalInverseIteration.sharedInverseIteration = false;
  all.push_back(globalInverseIteration);
  return all;
}

/** Stage 1's kernel in a word. */
inline const char *
TridiagonalKernelName(TridiagonalKernel kernel)
{
  switch (kernel)
  {
    case TridiagonalKernel::SharedFull:
      return "full";
    case TridiagonalKernel::SharedLower:
      return "lower";
    case TridiagonalKernel::SharedPacked:
      return "packed lower";
    case TridiagonalKernel::SharedFused:
      return "fused";
    case TridiagonalKernel::SharedFusedWide:
      return "fused wide";
  }
  return "unknown";
}

/** The variant in words, for test traces and benchmark rows. */
inline std::string
SmallEigenTuningName(const SmallEigenTuning & tuning)
{
  const std::string stage1 = std::string(TridiagonalKernelName(tuning.tridiagonal)) + " tridiagonalisation, ";
  const std::string stage3 = tuning.sharedInverseIteration ? "" : ", inverse iteration in global memory";
  if (tuning.bisection)
  {
    return stage1 + "bisection" + stage3;
  }
  return stage1 + "QL in " + (tuning.sharedQL ? "shared" : "global") + " memory" +
         (tuning.fastRotation ? ", fast rotations" : "") + stage3;
}

} // namespace detail
} // namespace svdlr

#endif
