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
#ifndef itkLocalLowRankDenoisingEnums_h
#define itkLocalLowRankDenoisingEnums_h

#include "itkSVDLowRankReconstructionEnums.h" // PrintSVDLowRankEnum

#include <cstdint>
#include <ostream>

namespace itk
{
/** \class LocalLowRankDenoisingEnums
 * \brief Enums of LocalLowRankDenoisingImageFilter.
 * \ingroup SVDLowRankReconstruction
 */
class LocalLowRankDenoisingEnums
{
public:
  /** How a voxel's denoised signal is formed: from the patch centred on it (CentreVoxel, as MRtrix3's dwidenoise
   * does), or as the mean over every patch that holds it (OverlapAverage, which also allows a patch stride),
   * weighted by 1 / (1 + the patch's rank) (OverlapRankWeighted) or by a Gaussian of the voxel's distance from the
   * patch's centre voxel, FWHM 2 voxels (OverlapGaussianWeighted): svdlr/DenoiseChoices.h. */
  enum class Aggregation : uint8_t
  {
    CentreVoxel,
    OverlapAverage,
    OverlapRankWeighted,
    OverlapGaussianWeighted
  };

  /** The patch: a box of PatchSize (Cuboid) or the voxels within PatchRadius of the centre (Sphere). */
  enum class PatchShape : uint8_t
  {
    Cuboid,
    Sphere
  };

  /** What becomes of the singular values a patch keeps: kept as they are (Hard, a truncated SVD), or shrunk by
   * Gavish & Donoho's (2017) optimal shrinker for the Frobenius loss (OptimalFrobenius). Auto (the default):
   * OptimalFrobenius where the patches have σ (a noise policy, or a known σ map), Hard where they have none. */
  enum class Shrinkage : uint8_t
  {
    Hard,
    OptimalFrobenius,
    Auto
  };

  /** How a patch's σ is measured once its rank is chosen, where the rank selection estimates σ
   * (svdlr::NoiseEstimator): MarchenkoPasturMean, the selection's own σ (MP-PCA's, as dwidenoise), or
   * ResidualRefit, the energy outside the kept rank over its (rows - rank)(cols - rank) degrees of freedom. */
  enum class NoiseEstimator : uint8_t
  {
    MarchenkoPasturMean,
    ResidualRefit
  };
};

inline std::ostream &
operator<<(std::ostream & out, const LocalLowRankDenoisingEnums::Aggregation value)
{
  return PrintSVDLowRankEnum(out,
                             value,
                             { "CentreVoxel", "OverlapAverage", "OverlapRankWeighted", "OverlapGaussianWeighted" },
                             "LocalLowRankDenoisingEnums::Aggregation");
}

inline std::ostream &
operator<<(std::ostream & out, const LocalLowRankDenoisingEnums::PatchShape value)
{
  return PrintSVDLowRankEnum(out, value, { "Cuboid", "Sphere" }, "LocalLowRankDenoisingEnums::PatchShape");
}

inline std::ostream &
operator<<(std::ostream & out, const LocalLowRankDenoisingEnums::Shrinkage value)
{
  return PrintSVDLowRankEnum(
    out, value, { "Hard", "OptimalFrobenius", "Auto" }, "LocalLowRankDenoisingEnums::Shrinkage");
}

inline std::ostream &
operator<<(std::ostream & out, const LocalLowRankDenoisingEnums::NoiseEstimator value)
{
  return PrintSVDLowRankEnum(
    out, value, { "MarchenkoPasturMean", "ResidualRefit" }, "LocalLowRankDenoisingEnums::NoiseEstimator");
}

} // namespace itk

#endif
