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
#include "SVDLowRankNiftiVoxels.h"

#include <algorithm>
#include <cstdint>

namespace svdlr_io
{
bool
NiftiVoxelsAsFloat(const NiftiFileBytes & file, float * out)
{
  const NiftiHeader & header = file.header;
  if (header.version != 1 || !header.singleFile || !ItkReadsVoxOffset(header))
  {
    return false;
  }
  const std::uint64_t voxels = header.Voxels();
  const unsigned      bytes = static_cast<unsigned>(header.bitpix) / 8;
  if (header.bitpix % 8 != 0 || header.voxOffset > file.stream.size() ||
      (file.stream.size() - header.voxOffset) / std::max(1u, bytes) < voxels)
  {
    return false;
  }
  const unsigned char * data = file.stream.data() + header.voxOffset;
  const bool            swapped = header.swapped;
  const std::size_t     n = static_cast<std::size_t>(voxels);
  const NiftiRescale    r = RescaleOf(header);
  bool                  read = false;
  VisitNiftiScalar(header.datatype, [&](auto zero) {
    using T = decltype(zero);
    if (header.bitpix != static_cast<int>(8 * sizeof(T)))
    {
      return;
    }
    read = true;
    if constexpr (std::is_same_v<T, double>)
    {
      // Read as double (rescaled in double), then cast to float, as ITK's reader into a float image does.
      for (std::size_t i = 0; i < n; ++i)
      {
        const double value = CleanedNiftiValue(NiftiValueAt<double>(data, i, swapped));
        out[i] = static_cast<float>(r.rescale ? value * r.slope + r.intercept : value);
      }
    }
    else
    {
      ConvertNiftiVoxels<T>(data, n, swapped, !std::is_same_v<T, float>, r, out);
    }
  });
  return read;
}

} // namespace svdlr_io
