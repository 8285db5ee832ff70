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
#ifndef svdlr_OutputMaps_h
#define svdlr_OutputMaps_h

// What the denoiser's two maps hold, said once for every sidecar written beside them: SVDLowRankDenoiseSeries's
// (apps/tool/SVDLowRankProvenance.cxx) and the BIDS App's (python/.../bids/_outputs.py, through the extension).
// ITK-free, like Names.h.

namespace svdlr
{

/** One map output: its BIDS derivative label (the `stat-<label>` entity of `_dwimap` / `_boldmap`), and its
 * sidecar's "Description" and "Units". */
struct OutputMap
{
  const char * label;
  const char * description;
  /** BIDS "Units": MRI intensities have no physical unit, so a noise level in the series' intensities is
   * "arbitrary" (as BIDS writes it for such maps); a count of components is dimensionless, "1" in SI/CMIXF. A
   * writer that knows the series' own "Units" uses them for the noise map instead. */
  const char * units;
};

/** The noise map: sigma per voxel. */
inline constexpr OutputMap kNoiseMap{
  "noise",
  "Noise level: the standard deviation (sigma) of the Gaussian noise at each voxel, in the series' intensity units, "
  "as the local low-rank denoiser estimated it from the patches holding the voxel (or was given it); 0 where the "
  "voxel was not denoised (outside the mask)",
  "arbitrary"
};

/** The rank map: components kept per voxel. */
inline constexpr OutputMap kRankMap{
  "rank",
  "Rank: the number of principal components the local low-rank denoiser kept in the patches holding each voxel "
  "(their signal's degrees of freedom); 0 where the voxel was not denoised (outside the mask)",
  "1"
};

} // namespace svdlr

#endif
