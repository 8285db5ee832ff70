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
#ifndef svdlr_Progress_h
#define svdlr_Progress_h

#include "svdlr/Engine.h"

#include <string>

namespace svdlr
{
namespace detail
{

/** Tells the caller how far the work is, `done` of `total` `units` (e.g. "matrices", "patches"); throws
 * Error(Aborted) when the callback asks to stop. An empty callback does nothing. */
inline void
ReportProgress(const ProgressCallback & progress, std::size_t done, std::size_t total, const char * units)
{
  if (progress && !progress(done, total))
  {
    throw Error(ErrorCode::Aborted, "svdlr: aborted by the caller after " + std::to_string(done) + " of " +
                                      std::to_string(total) + " " + units);
  }
}

/** Reconstruct's progress, in matrices. */
inline void
ReportProgress(const Options & options, std::size_t done, std::size_t total)
{
  ReportProgress(options.progress, done, total, "matrices");
}

} // namespace detail
} // namespace svdlr

#endif
