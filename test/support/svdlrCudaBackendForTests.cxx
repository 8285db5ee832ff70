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

// The CUDA suites, hooks and benchmarks call the backend's internal functions directly, from the backend's library
// that they link. Those functions call back into the engine, which the engine gives the backend when it loads it:
// so every program that links this support library has the engine load the backend before main() runs. The engine
// finds the library already in the process and uses that one.
#include "shared/svdlrBackends.h"

#include <cstdio>
#include <string>

namespace
{
const bool g_CudaBackendLoaded = [] {
  std::string why;
  const bool  loaded = svdlr::detail::LoadCudaBackend(why);
  if (!loaded)
  {
    std::fprintf(stderr, "svdlr test support: the CUDA backend could not be loaded: %s\n", why.c_str());
  }
  return loaded;
}();
} // namespace
