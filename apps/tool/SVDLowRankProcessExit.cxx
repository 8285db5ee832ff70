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
#include "SVDLowRankProcessExit.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#  define SVDLR_SANITIZED_BUILD 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer) || \
    __has_feature(leak_sanitizer)
#    define SVDLR_SANITIZED_BUILD 1
#  endif
#endif

namespace svdlr_tools
{

int
EndProcess(int code)
{
#ifdef SVDLR_SANITIZED_BUILD
  return code;
#else
  const char * full = std::getenv("SVDLR_FULL_EXIT");
  if (full != nullptr && std::strcmp(full, "0") != 0 && full[0] != '\0')
  {
    return code;
  }
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(code);
#endif
}

} // namespace svdlr_tools
