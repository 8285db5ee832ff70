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
#include "svdlrReconstructionKernels.cuh"

#include <string>

namespace svdlr
{
namespace detail
{
namespace
{

constexpr std::int64_t kMaxGridYZ = 65535;

template <typename TOut>
bool
IsEmpty(const LowRankProductArguments<TOut> & arguments)
{
  return arguments.count == 0 || arguments.rows == 0 || arguments.cols == 0;
}

} // namespace

template <typename TOut>
bool
CanImplementLowRankProduct(const LowRankProductArguments<TOut> & arguments, std::string & why)
{
  if (arguments.rows < 0 || arguments.cols < 0 || arguments.count < 0 || arguments.components < 0)
  {
    why = "negative size";
    return false;
  }
  if (IsEmpty(arguments))
  {
    return true;
  }
  if (arguments.count > kMaxGridYZ)
  {
    why = "more than 65535 matrices in one launch (blockIdx.z is the matrix index)";
    return false;
  }
  constexpr std::int64_t kTileM = EngineProductTile<TOut>::kTileM;
  const std::int64_t     tileRows = (arguments.rows + kTileM - 1) / kTileM;
  if (tileRows > kMaxGridYZ)
  {
    why = "too many rows for the grid's y dimension";
    return false;
  }
  if (arguments.ranks == nullptr || arguments.output == nullptr ||
      (arguments.components > 0 && (arguments.p == nullptr || arguments.q == nullptr)))
  {
    why = "null device pointer";
    return false;
  }
  return true;
}

template <typename TOut>
cudaError_t
LaunchTiledLowRankProduct(const LowRankProductArguments<TOut> & arguments, cudaStream_t stream)
{
  if (IsEmpty(arguments))
  {
    return cudaSuccess;
  }
  using Tile = EngineProductTile<TOut>; // 64 x 64 x 32 for float output, 64 x 64 x 16 for double
  const dim3 block(Tile::kThreadsX, Tile::kThreadsY);
  const dim3 grid(static_cast<unsigned>((arguments.cols + Tile::kTileN - 1) / Tile::kTileN),
                  static_cast<unsigned>((arguments.rows + Tile::kTileM - 1) / Tile::kTileM),
                  static_cast<unsigned>(arguments.count));
  TiledLowRankProductKernel<TOut><<<grid, block, 0, stream>>>(arguments);
  return cudaGetLastError();
}

template bool
CanImplementLowRankProduct<float>(const LowRankProductArguments<float> &, std::string &);
template bool
CanImplementLowRankProduct<double>(const LowRankProductArguments<double> &, std::string &);
template cudaError_t
LaunchTiledLowRankProduct<float>(const LowRankProductArguments<float> &, cudaStream_t);
template cudaError_t
LaunchTiledLowRankProduct<double>(const LowRankProductArguments<double> &, cudaStream_t);

} // namespace detail
} // namespace svdlr
