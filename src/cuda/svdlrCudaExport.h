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
#ifndef svdlr_CudaExport_h
#define svdlr_CudaExport_h

// Marks the few internal functions of the CUDA backend that tests and benchmarks call directly, so that
// they stay reachable when the engine is a shared library built with hidden symbols (as in ITK's module
// builds). Not part of the engine's API.

#if defined(__GNUC__) || defined(__clang__)
#  define SVDLR_CUDA_EXPORT __attribute__((visibility("default")))
#else
#  define SVDLR_CUDA_EXPORT
#endif

#endif
