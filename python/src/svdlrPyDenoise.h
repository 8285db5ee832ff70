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
#ifndef svdlrPyDenoise_h
#define svdlrPyDenoise_h

#include <nanobind/nanobind.h>

namespace svdlr
{
namespace python
{

/** Adds `denoise_local_low_rank(series, *, volume_axis, patch_size, patch_stride, aggregation, shrinkage, policy,
 * rank, mask, noise_sigma, backend, device_id, max_patches_per_batch, threads, progress)` to `module`. */
void
DefineDenoise(nanobind::module_ & module);

/** Adds the engine's rules that the Python layer and the BIDS App read before a run, each the engine's one function:
 * shrinkage_used, magnitude_noise_used, gfactor_known_sigma_problem, sigma_floor_correction_problem,
 * patch_size_used, patch_stride_used, sphere_patch_used (svdlrPyDenoiseRules.cpp). */
void
DefineDenoiseRules(nanobind::module_ & module);

} // namespace python
} // namespace svdlr

#endif
