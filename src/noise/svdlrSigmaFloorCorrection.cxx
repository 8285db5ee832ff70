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
// The σ map of a magnitude series corrected for the noise floor's smaller spread (svdlr/MagnitudeNoise.h). Host code
// after either backend's pass, so the CPU and the GPU maps are corrected alike.
#include "svdlr/MagnitudeNoise.h"

#include "noise/svdlrComplexSeriesDetail.h"
#include "shared/svdlrParallel.h"
#include "denoise/svdlrPatchGeometry.h"
#include "denoise/svdlrWindowSums.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace svdlr
{
namespace
{

/** values(i) <- the sum of values over the patch of voxel i (its window along each axis: PatchWindow). */
void
SumOverPatches(std::vector<double> & values, const std::array<std::size_t, 3> & size,
               const std::array<std::size_t, 3> & extent)
{
  for (unsigned axis = 0; axis < 3; ++axis)
  {
    detail::SumOverWindowsAlongAxis(values, size, axis, detail::PatchWindow(extent[axis]));
  }
}

} // namespace

std::string
SigmaFloorCorrectionProblem(const MagnitudeNoiseOptions & model, bool knownSigma)
{
  if (!model.sigmaFloorCorrection)
  {
    return {};
  }
  if (knownSigma)
  {
    return "the sigma floor correction corrects a sigma measured on the magnitude; a known sigma (a sigma map, noise "
           "volumes, a noise scan) is not, and needs none";
  }
  if (model.stabilise)
  {
    return "the sigma floor correction corrects the magnitude's sigma map; with variance stabilisation the map is "
           "measured on the stabilised series, whose spread has no floor to correct";
  }
  return {};
}

void
CorrectSigmaForNoiseFloor(const SeriesView<const float> & denoised, const float * measured, const std::uint8_t * mask,
                          const std::array<std::size_t, 3> & patchExtent, unsigned coils, float * corrected,
                          unsigned threads)
{
  detail::RequireSeries(denoised, "the sigma floor correction's denoised series");
  if (!measured || !corrected)
  {
    throw Error(ErrorCode::InvalidArgument, "svdlr: the sigma floor correction needs the measured and the output map");
  }
  for (unsigned axis = 0; axis < 3; ++axis)
  {
    if (patchExtent[axis] % 2 == 0 || patchExtent[axis] > denoised.size[axis])
    {
      throw Error(ErrorCode::InvalidArgument, "svdlr: the sigma floor correction's patch extent must be odd and fit "
                                              "the image, got " + std::to_string(patchExtent[axis]) + " along axis " +
                                              std::to_string(axis));
    }
  }
  const NoncentralChiModel & model = NoncentralChiModel::ForCoils(coils);
  const std::size_t          voxels = denoised.VoxelCount();
  std::vector<double>        sigma(voxels), inside(voxels);
  for (std::size_t v = 0; v < voxels; ++v)
  {
    if (!(std::isfinite(measured[v]) && measured[v] >= 0.0f))
    {
      throw Error(ErrorCode::InvalidArgument, "svdlr: sigma must be finite and >= 0, got " +
                                                std::to_string(measured[v]) + " at voxel " + std::to_string(v));
    }
    sigma[v] = measured[v];
    inside[v] = measured[v] > 0.0f && (!mask || mask[v]) ? 1.0 : 0.0;
  }
  // A patch reads every voxel it covers, inside the mask or not, and its sigma measures them all. A voxel outside
  // (where the series was copied, so its noisy magnitude stands in for E[M]) takes the mean sigma of the voxels
  // inside in its window; one with none there is in no window of a voxel inside and takes no part.
  std::vector<double> insideCount = inside;
  SumOverPatches(insideCount, denoised.size, patchExtent);
  std::vector<double> counted(voxels);
  for (std::size_t v = 0; v < voxels; ++v)
  {
    counted[v] = inside[v] != 0.0 || insideCount[v] > 0.0 ? 1.0 : 0.0;
  }
  std::vector<double> countedCount = counted;
  SumOverPatches(countedCount, denoised.size, patchExtent);

  std::vector<double>   ratio(voxels), atVoxel(voxels);
  constexpr std::size_t kVoxelsPerTask = 1024;
  const std::size_t     tasks = (voxels + kVoxelsPerTask - 1) / kVoxelsPerTask;
  for (unsigned pass = 0; pass < kSigmaFloorPasses; ++pass)
  {
    for (std::size_t v = 0; v < voxels; ++v)
    {
      atVoxel[v] = sigma[v] * inside[v];
    }
    SumOverPatches(atVoxel, denoised.size, patchExtent);
    for (std::size_t v = 0; v < voxels; ++v)
    {
      atVoxel[v] = inside[v] != 0.0 ? sigma[v] : counted[v] != 0.0 ? atVoxel[v] / insideCount[v] : 0.0;
    }
    // Each counted voxel's variance ratio, averaged over its volumes, at the SNR of the current sigma.
    detail::PoolParallelFor(detail::WorkerCount(threads), tasks, [&](std::size_t task) {
      const std::size_t end = std::min(voxels, (task + 1) * kVoxelsPerTask);
      for (std::size_t v = task * kVoxelsPerTask; v < end; ++v)
      {
        double sum = 0.0;
        for (std::size_t t = 0; counted[v] != 0.0 && t < denoised.volumes; ++t)
        {
          sum += model.MagnitudeVarianceAtMean(denoised.data[detail::ElementOffset(denoised, v, t)] / atVoxel[v]);
        }
        ratio[v] = sum / static_cast<double>(denoised.volumes);
      }
    });
    SumOverPatches(ratio, denoised.size, patchExtent);
    for (std::size_t v = 0; v < voxels; ++v)
    {
      sigma[v] = inside[v] != 0.0 ? measured[v] / std::sqrt(ratio[v] / countedCount[v]) : measured[v];
    }
  }
  for (std::size_t v = 0; v < voxels; ++v)
  {
    corrected[v] = static_cast<float>(sigma[v]);
  }
}

} // namespace svdlr
