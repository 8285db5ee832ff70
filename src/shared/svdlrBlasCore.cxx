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
#include <array>
#include <cctype>
#include <cstdlib>
#include <mutex>

#include <dlfcn.h>

namespace svdlr
{
namespace detail
{

std::string
BetterOpenBlasCore(const std::string & detected, bool avx2Fma, bool avx512)
{
  std::string core = detected;
  std::transform(core.begin(), core.end(), core.begin(), [](unsigned char c) { return std::tolower(c); });
  // OpenBLAS's x86-64 fallbacks for a model it does not know: SSE-era kernels.
  static const std::array<const char *, 12> generic = { "prescott", "core2",     "penryn", "dunnington",
                                                        "nehalem",  "atom",      "katmai", "coppermine",
                                                        "northwood", "barcelona", "opteron", "unknown" };
  if (std::find(generic.begin(), generic.end(), core) == generic.end())
  {
    return {};
  }
  if (avx512)
  {
    return "SkylakeX";
  }
  if (avx2Fma)
  {
    return "Haswell";
  }
  return {};
}

std::string
EnsureBlasCoreMatchesCpu()
{
  static std::string inUse;
  static std::once_flag once;
  std::call_once(once, [] {
    // Looked up at run time, like the thread control (svdlrBlasThreads.cxx): any BLAS links, and only an
    // OpenBLAS built with DYNAMIC_ARCH has these.
    using CoreName = char * (*)();
    using Dispatch = void (*)();
    const auto coreName = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
    const auto dispatchInit = reinterpret_cast<Dispatch>(dlsym(RTLD_DEFAULT, "gotoblas_dynamic_init"));
    const auto dispatchQuit = reinterpret_cast<Dispatch>(dlsym(RTLD_DEFAULT, "gotoblas_dynamic_quit"));
    if (coreName == nullptr)
    {
      return;
    }
    inUse = coreName();
    if (std::getenv("OPENBLAS_CORETYPE") != nullptr || dispatchInit == nullptr || dispatchQuit == nullptr)
    {
      return;
    }
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    const bool avx2Fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    const std::string better = BetterOpenBlasCore(inUse, avx2Fma, avx512);
    if (better.empty())
    {
      return;
    }
    // OpenBLAS reads OPENBLAS_CORETYPE when it (re)selects its kernel table; no BLAS call runs yet in this
    // library, and the table is swapped between calls, never during one.
    setenv("OPENBLAS_CORETYPE", better.c_str(), 0);
    dispatchQuit();
    dispatchInit();
    inUse = coreName();
#endif
  });
  return inUse;
}

} // namespace detail
} // namespace svdlr
