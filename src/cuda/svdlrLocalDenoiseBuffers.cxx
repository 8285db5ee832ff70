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
#include "svdlrLocalDenoiseResources.h"

namespace svdlr
{
namespace detail
{

SlabBuffers
CarveSlab(unsigned char * base, std::int64_t planes, std::int64_t planeVoxels, std::int64_t volumes)
{
  const std::size_t voxels = static_cast<std::size_t>(planes * planeVoxels);
  const std::size_t elements = voxels * static_cast<std::size_t>(volumes);
  Carver            carve(base);
  SlabBuffers       b;
  b.packedIn = carve.Take<float>(elements);
  b.slab = carve.Take<float>(elements);
  b.sums.values = carve.Take<double>(elements);
  b.sums.weights = carve.Take<double>(voxels);
  b.sums.sigma = carve.Take<double>(voxels);
  b.sums.rank = carve.Take<double>(voxels);
  b.packedOut = carve.Take<float>(elements);
  // The maps share one piece (SlabSlotBytes): σ first, the ranks after it.
  unsigned char * maps = carve.Take<unsigned char>(voxels * (sizeof(float) + sizeof(std::uint16_t)));
  b.sigmaMap = reinterpret_cast<float *>(maps);
  b.rankMap = reinterpret_cast<std::uint16_t *>(maps + voxels * sizeof(float));
  b.centres = carve.Take<std::int64_t>(voxels);
  return b;
}

BatchBuffers
CarveBatch(unsigned char * base, std::int64_t batch, std::int64_t n, std::int64_t maxVectors, std::size_t solverBytes)
{
  const std::size_t b = static_cast<std::size_t>(batch);
  const std::size_t side = static_cast<std::size_t>(n);
  const std::size_t k = static_cast<std::size_t>(maxVectors);
  Carver            carve(base);
  BatchBuffers      buffers;
  buffers.gram = carve.Take<double>(b * side * side);
  buffers.vectors = carve.Take<double>(b * side * k);
  buffers.eigenvalues = carve.Take<double>(b * side);
  buffers.weights = carve.Take<double>(b * k);
  buffers.sigmas = carve.Take<double>(b);
  buffers.ranks = carve.Take<int>(b);
  buffers.info = carve.Take<int>(b);
  buffers.solverBytes = solverBytes;
  buffers.solver = carve.Take<unsigned char>(solverBytes);
  return buffers;
}

std::size_t
FixedBytes(std::size_t voxels, bool mask, bool sigma, std::size_t sphereOffsets)
{
  return AlignedBytes(4 * sizeof(unsigned long long)) + (mask ? AlignedBytes(voxels) : 0) +
         (sigma ? AlignedBytes(voxels * sizeof(float)) : 0) + AlignedBytes(sphereOffsets * sizeof(PatchOffset));
}

FixedBuffers
CarveFixed(unsigned char * base, std::size_t voxels, bool mask, bool sigma, std::size_t sphereOffsets)
{
  Carver       carve(base);
  FixedBuffers fixed;
  fixed.flags = carve.Take<unsigned long long>(4);
  fixed.mask = mask ? carve.Take<std::uint8_t>(voxels) : nullptr;
  fixed.sigma = sigma ? carve.Take<float>(voxels) : nullptr;
  fixed.sphereOrder = sphereOffsets > 0 ? carve.Take<PatchOffset>(sphereOffsets) : nullptr;
  return fixed;
}

} // namespace detail
} // namespace svdlr
