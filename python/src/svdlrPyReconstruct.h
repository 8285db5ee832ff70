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
#ifndef svdlrPyReconstruct_h
#define svdlrPyReconstruct_h

#include <nanobind/nanobind.h>

namespace svdlr
{
namespace python
{

/** Whether `reconstruct` works on CUDA device arrays where they are (svdlr::ReconstructOnDevice): true in
 * a build with the CUDA backend. Without it, the Python layer copies device arrays to the host. */
bool
DeviceInputSupported() noexcept;

/** Adds `reconstruct(matrices, *, rank, energy_fraction, noise_rank, noise_sigma, backend, solver, device_id,
 * max_matrices_per_batch, threads, progress, out, stream)` to `module`. */
void
DefineReconstruct(nanobind::module_ & module);

} // namespace python
} // namespace svdlr

#endif
