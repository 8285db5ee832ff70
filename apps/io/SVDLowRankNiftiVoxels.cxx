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

#include <cstdint>
#include <algorithm>

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
  const auto            is = [&](int datatype, int bitpix) { return header.datatype == datatype && header.bitpix == bitpix; };
  if (is(2, 8))
    ConvertNiftiVoxels<std::uint8_t>(data, n, swapped, true, r, out);
  else if (is(256, 8))
    ConvertNiftiVoxels<std::int8_t>(data, n, swapped, true, r, out);
  else if (is(4, 16))
    ConvertNiftiVoxels<std::int16_t>(data, n, swapped, true, r, out);
  else if (is(512, 16))
    ConvertNiftiVoxels<std::uint16_t>(data, n, swapped, true, r, out);
  else if (is(8, 32))
    ConvertNiftiVoxels<std::int32_t>(data, n, swapped, true, r, out);
  else if (is(768, 32))
    ConvertNiftiVoxels<std::uint32_t>(data, n, swapped, true, r, out);
  else if (is(1024, 64))
    ConvertNiftiVoxels<std::int64_t>(data, n, swapped, true, r, out);
  else if (is(1280, 64))
    ConvertNiftiVoxels<std::uint64_t>(data, n, swapped, true, r, out);
  else if (is(16, 32))
    ConvertNiftiVoxels<float>(data, n, swapped, false, r, out);
  else if (is(64, 64))
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
    return false;
  }
  return true;
}

} // namespace svdlr_io
