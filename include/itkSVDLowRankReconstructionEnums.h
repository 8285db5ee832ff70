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
#ifndef itkSVDLowRankReconstructionEnums_h
#define itkSVDLowRankReconstructionEnums_h

#include <cstddef>
#include <cstdint>
#include <ostream>

namespace itk
{
/** \class SVDLowRankReconstructionEnums
 * \brief Enums of SVDLowRankReconstructionImageFilter.
 * \ingroup SVDLowRankReconstruction
 */
class SVDLowRankReconstructionEnums
{
public:
  /** Where the filter computes: Auto takes a CUDA GPU when the module was built with CUDA and one
   * is usable, and otherwise the CPU. */
  enum class Backend : uint8_t
  {
    Auto,
    CPU,
    CUDA
  };

  /** How the CUDA backend finds each slice's leading singular subspace.
   * Exact: every singular value, at about float64 accuracy.
   * Subspace: subspace iteration on a block of w > rank vectors, then a Rayleigh-Ritz step; much faster for
   * small ranks, within the same accuracy bounds, but only the leading w singular values are computed, and
   * it needs a fixed rank below 160.
   * Auto: Subspace when the filter computes in float (neither pixel type is double) with a fixed rank where
   * it pays off, else Exact.
   * The CPU backend always computes the exact SVD. */
  enum class Solver : uint8_t
  {
    Auto,
    Exact,
    Subspace
  };

  /** How each slice's rank is chosen: a fixed rank; the fewest singular values that hold a given fraction of the
   * slice's energy (its squared Frobenius norm); or the singular values that stand out of the noise, for a slice
   * that is a low-rank signal plus white noise of one σ per pixel:
   *  GavishDonoho:    above Gavish & Donoho's (2014) optimal hard threshold, with σ given (SetNoiseSigma) or
   *                   estimated from the slice's median singular value;
   *  MarchenkoPastur: above the Marchenko-Pastur noise bulk, with σ estimated as MP-PCA does (Veraart et al.
   *                   2016; MRtrix3 dwidenoise), see MarchenkoPasturEstimator;
   *  Nordic:          above NORDIC's threshold σ(√m + √n) (Moeller et al. 2021), σ given (SetNoiseSigma, or the
   *                   denoiser's NoiseSigmaImage), never estimated. */
  enum class RankSelection : uint8_t
  {
    FixedRank,
    EnergyFraction,
    GavishDonoho,
    MarchenkoPastur,
    Nordic
  };

  /** How RankSelection MarchenkoPastur estimates σ: Veraart2016 (dwidenoise's `-estimator Exp1`) or
   * CorderoGrande2019 (`Exp2`: the noise bulk's aspect ratio uses the larger dimension less the signal
   * components, which admits fewer noise components as signal when min(rows, cols) is close to max(rows, cols)). */
  enum class MarchenkoPasturEstimator : uint8_t
  {
    Veraart2016,
    CorderoGrande2019
  };
};

/** Prints names[value], the enum's values in their order, or "INVALID VALUE FOR <enumName>" past them: what the
 * enums' operator<< print. */
template <typename TEnum, std::size_t VCount>
std::ostream &
PrintSVDLowRankEnum(std::ostream & out, TEnum value, const char * const (&names)[VCount], const char * enumName)
{
  const auto index = static_cast<std::size_t>(value);
  return index < VCount ? out << names[index] : out << "INVALID VALUE FOR " << enumName;
}

inline std::ostream &
operator<<(std::ostream & out, const SVDLowRankReconstructionEnums::Backend value)
{
  return PrintSVDLowRankEnum(out, value, { "Auto", "CPU", "CUDA" }, "SVDLowRankReconstructionEnums::Backend");
}

inline std::ostream &
operator<<(std::ostream & out, const SVDLowRankReconstructionEnums::Solver value)
{
  return PrintSVDLowRankEnum(out, value, { "Auto", "Exact", "Subspace" }, "SVDLowRankReconstructionEnums::Solver");
}

inline std::ostream &
operator<<(std::ostream & out, const SVDLowRankReconstructionEnums::RankSelection value)
{
  return PrintSVDLowRankEnum(out,
                             value,
                             { "FixedRank", "EnergyFraction", "GavishDonoho", "MarchenkoPastur", "Nordic" },
                             "SVDLowRankReconstructionEnums::RankSelection");
}

inline std::ostream &
operator<<(std::ostream & out, const SVDLowRankReconstructionEnums::MarchenkoPasturEstimator value)
{
  return PrintSVDLowRankEnum(
    out, value, { "Veraart2016", "CorderoGrande2019" }, "SVDLowRankReconstructionEnums::MarchenkoPasturEstimator");
}

} // namespace itk

#endif
