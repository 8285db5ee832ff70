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
#ifndef svdlr_WarpSum_cuh
#define svdlr_WarpSum_cuh

// The sum of a double over the 32 lanes of a warp, in every lane (the same bits in each: a butterfly).

namespace svdlr
{
namespace detail
{

__device__ __forceinline__ double
WarpSum(double value)
{
  for (int offset = 16; offset > 0; offset /= 2)
  {
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  }
  return value;
}

} // namespace detail
} // namespace svdlr

#endif
