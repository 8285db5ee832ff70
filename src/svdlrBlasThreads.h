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

/** Keeps a multithreaded BLAS (OpenBLAS) to one thread per call while it lives, restoring the previous
 * setting afterwards. The CPU backend already runs one matrix per thread; letting every LAPACK call
 * start its own threads on top would oversubscribe the cores. Does nothing with other BLAS libraries. */
class SingleThreadedBlasScope
{
public:
  SingleThreadedBlasScope();
  ~SingleThreadedBlasScope();
  SingleThreadedBlasScope(const SingleThreadedBlasScope &) = delete;
  SingleThreadedBlasScope &
  operator=(const SingleThreadedBlasScope &) = delete;

private:
  int m_PreviousThreads{ 0 };
};

} // namespace detail
} // namespace svdlr

#endif
