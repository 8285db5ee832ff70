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
#ifndef svdlr_CudaEngineCalls_h
#define svdlr_CudaEngineCalls_h

// The CUDA backend's link to the engine that loaded it: the engine's functions (svdlrCudaBackendTable.h), set once by
// the backend's entry point before any other of its functions runs.

#include "shared/svdlrCudaBackendTable.h"

namespace svdlr
{
namespace detail
{

/** Keeps `host` (which outlives the backend: the engine that loaded it never unloads it) for the functions below. */
void
UseEngineCalls(const CudaHostTable & host) noexcept;

} // namespace detail
} // namespace svdlr

#endif
