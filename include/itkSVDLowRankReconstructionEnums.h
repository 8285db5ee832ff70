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
   * it needs a fixed rank below svdlr::kMaxSubspaceWidth (svdlr/Names.h).
   * Auto: Subspace when the filter computes in float (neither pixel type is double) with a fixed rank where
   * it pays off, else Exact.
   * The CPU backend always computes the exact SVD. */
  enum class Solver : uint8_t
  {
    Auto,
    Exact,
    Subspace
  };

  /** How each slice's rank is chosen: a fixed rank, or the fewest singular values that hold a given
   * fraction of the slice's energy (its squared Frobenius norm). */
  enum class RankSelection : uint8_t
  {
    FixedRank,
    EnergyFraction
  };
};

inline std::ostream &
operator<<(std::ostream & out, const SVDLowRankReconstructionEnums::Backend value)
{
  switch (value)
  {
    case SVDLowRankReconstructionEnums::Backend::Auto:
      return out << "Auto";
    case SVDLowRankReconstructionEnums::Backend::CPU:
      return out << "CPU";
    case SVDLowRankReconstructionEnums::Backend::CUDA:
      return out << "CUDA";
  }
  return out << "INVALID VALUE FOR SVDLowRankReconstructionEnums::Backend";
}

inline std::ostream &
operator<<(std::ostream & out, const SVDLowRankReconstructionEnums::Solver value)
{
  switch (value)
  {
    case SVDLowRankReconstructionEnums::Solver::Auto:
      return out << "Auto";
    case SVDLowRankReconstructionEnums::Solver::Exact:
      return out << "Exact";
    case SVDLowRankReconstructionEnums::Solver::Subspace:
      return out << "Subspace";
  }
  return out << "INVALID VALUE FOR SVDLowRankReconstructionEnums::Solver";
}

inline std::ostream &
operator<<(std::ostream & out, const SVDLowRankReconstructionEnums::RankSelection value)
{
  switch (value)
  {
    case SVDLowRankReconstructionEnums::RankSelection::FixedRank:
      return out << "FixedRank";
    case SVDLowRankReconstructionEnums::RankSelection::EnergyFraction:
      return out << "EnergyFraction";
  }
  return out << "INVALID VALUE FOR SVDLowRankReconstructionEnums::RankSelection";
}

} // namespace itk

#endif
