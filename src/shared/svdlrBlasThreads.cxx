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
#include "shared/svdlrBlasThreads.h"

#include <algorithm>

#include <dlfcn.h>

namespace svdlr
{
namespace detail
{
namespace
{
// Looked up at run time so the engine links against any BLAS, not only OpenBLAS.
using SetThreadsFunction = void (*)(int);
using GetThreadsFunction = int (*)();

SetThreadsFunction
OpenBlasSetThreads()
{
  static const auto function = reinterpret_cast<SetThreadsFunction>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  return function;
}

GetThreadsFunction
OpenBlasGetThreads()
{
  static const auto function = reinterpret_cast<GetThreadsFunction>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  return function;
}
} // namespace

BlasThreadsScope::BlasThreadsScope(int threads)
{
  (void)EnsureBlasCoreMatchesCpu(); // every CPU path sets its BLAS threads first: the one place to check
  if (OpenBlasSetThreads() != nullptr && OpenBlasGetThreads() != nullptr)
  {
    m_PreviousThreads = OpenBlasGetThreads()();
    OpenBlasSetThreads()(std::clamp(threads, 1, std::max(1, m_PreviousThreads)));
  }
}

BlasThreadsScope::~BlasThreadsScope()
{
  if (m_PreviousThreads > 0)
  {
    OpenBlasSetThreads()(m_PreviousThreads);
  }
}

} // namespace detail
} // namespace svdlr
