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
#ifndef SVDLowRankGradientTable_h
#define SVDLowRankGradientTable_h

// A diffusion series' FSL/BIDS gradient table, its .bval and .bvec beside it, checked against the series' volume count:
// one rule for the denoiser (up front, exit 3) and Python (the BIDS App copies both files into the derivative, so a
// table that disagrees with its series must be refused before the work, not copied without a word).

#include "SVDLowRankImageFileErrors.h"

#include <cstddef>
#include <string>
#include <vector>

namespace svdlr_io
{

/** A gradient table that cannot be read or disagrees with its series (std::invalid_argument: Python's ValueError). */
SVDLR_DECLARE_ERROR(BadGradientTable, std::invalid_argument);

/** `series` without its image extension (.nii.gz, .nii, .mha, .mhd, .nrrd): "sub-01_dwi.nii.gz" -> "sub-01_dwi". */
std::string
SeriesStem(const std::string & series);

/** The .bval and .bvec files of a series; "" where there is none. */
struct GradientTableFiles
{
  std::string bval;
  std::string bvec;
};

/** SeriesStem(series) + ".bval" and + ".bvec", each where such a file exists. */
GradientTableFiles
GradientTableBeside(const std::string & series);

/** The b-values of an FSL/BIDS .bval file: numbers >= 0 separated by white space. BadGradientTable when the file cannot
 * be read or holds anything else (named). */
std::vector<double>
ReadBValues(const std::string & path);

/** Each file of `files` ("" skipped) holds one entry per volume of `series`, which has `volumes` volumes (per echo).
 * BadGradientTable naming the file, the series and both counts otherwise: "the b-values 'dwi.bval' hold 3 values for
 * the 25 volumes of 'dwi.nii.gz'". */
void
CheckGradientTable(const GradientTableFiles & files, std::size_t volumes, const std::string & series);

} // namespace svdlr_io

#endif
