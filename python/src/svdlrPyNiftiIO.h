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
#ifndef svdlrPyNiftiIO_h
#define svdlrPyNiftiIO_h

#include <nanobind/nanobind.h>

namespace svdlr
{
namespace python
{

/** Adds the tools' NIfTI pixel reader and gzip writer, so that the Python per-series path (_nifti_series.py: the BIDS
 * App, Dask, Nipype) reads and writes .nii.gz as fast as the tools and gives the denoiser the same numbers:
 * `load_nifti_float32(path)` (apps/io/SVDLowRankNiftiBytes.h, SVDLowRankNiftiVoxels.h) and
 * `write_gzip_file(path, header, pixels, level, threads)` (apps/io/SVDLowRankGzipFile.h). nibabel keeps the headers. */
void
DefineNiftiIO(nanobind::module_ & module);

} // namespace python
} // namespace svdlr

#endif
