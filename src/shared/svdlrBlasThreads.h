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

} // namespace detail
} // namespace svdlr

#endif
