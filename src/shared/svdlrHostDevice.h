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
#ifndef svdlr_HostDevice_h
#define svdlr_HostDevice_h

// SVDLR_HOST_DEVICE marks the functions that both backends run: compiled for the GPU too when nvcc reads them, and
// plain host functions for the C++ compiler (the CPU backend and the tests).
#if defined(__CUDACC__)
#  define SVDLR_HOST_DEVICE __host__ __device__
#else
#  define SVDLR_HOST_DEVICE
#endif

#endif
