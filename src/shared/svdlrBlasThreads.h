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
#ifndef svdlr_BlasThreads_h
#define svdlr_BlasThreads_h

#include <string>

namespace svdlr
{
namespace detail
{

/** Sets the thread count of a multithreaded BLAS (OpenBLAS) while it lives, restoring the previous
 * setting afterwards. The CPU backend runs one matrix per worker thread: with as many matrices as
 * workers each LAPACK call must stay on one thread, or the calls would oversubscribe the cores; with
 * fewer, each call may use the cores the idle workers leave. Never raises the count above the previous
 * setting (OPENBLAS_NUM_THREADS, or the caller's own limit). Does nothing with other BLAS libraries. */
class BlasThreadsScope
{
public:
  explicit BlasThreadsScope(int threads);
  ~BlasThreadsScope();
  BlasThreadsScope(const BlasThreadsScope &) = delete;
  BlasThreadsScope &
  operator=(const BlasThreadsScope &) = delete;

private:
  int m_PreviousThreads{ 0 };
};

// OpenBLAS picks its kernels from the CPU's model number at load time. On a virtual machine that hides the
// model (the H100 machine reports a generic "Intel Xeon") an older OpenBLAS falls back to kernels without
// AVX2, several times slower, unless the user sets OPENBLAS_CORETYPE. The CPU backend checks once, from the
// instruction sets the CPU reports, and asks OpenBLAS for the kernels it can run.

/** The OpenBLAS core type to switch to when `detected` (openblas_get_corename) is a generic fallback that the
 * CPU outgrows, or "" to keep it. `avx2Fma`: the CPU has AVX2 and FMA; `avx512`: AVX-512 F, BW, DQ and VL. */
std::string
BetterOpenBlasCore(const std::string & detected, bool avx2Fma, bool avx512);

/** Once per process, before the CPU backend's first BLAS call: switches OpenBLAS to the kernels of
 * BetterOpenBlasCore unless OPENBLAS_CORETYPE is set or the BLAS is not an OpenBLAS with run-time dispatch.
 * Returns the core in use afterwards ("" when unknown), for reports and benchmarks. */
std::string
EnsureBlasCoreMatchesCpu();

} // namespace detail
} // namespace svdlr

#endif
