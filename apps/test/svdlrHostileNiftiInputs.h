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
// The hostile suite's NIfTI-1 inputs made byte by byte (docs/reliability.md, "The NIfTI read path"): each lies in
// one field of its header or is damaged in one way, so that the read path's judgement of each can be tested.
#ifndef svdlrHostileNiftiInputs_h
#define svdlrHostileNiftiInputs_h

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>
#include <zlib.h>

namespace
{
namespace fs = std::filesystem;

/** Round 2 (the NIfTI read path): NIfTI-1 files made byte by byte, each lying in one field or damaged in one way. */
namespace round2
{

/** A single-file NIfTI-1 (n+1, this machine's byte order) of `dims` (dim[0]
 * first), unit spacing, then `voxels` from byte 352 whatever vox_offset says.
 */
std::string
NiftiFile(const std::vector<std::int16_t> & dims,
          std::int16_t                      datatype,
          std::int16_t                      bitpix,
          const std::string &               voxels,
          float                             voxOffset = 352.0f,
          float                             slope = 0.0f)
{
  std::string bytes(352, '\0');
  const auto  put = [&](std::size_t at, const auto value) { std::memcpy(&bytes[at], &value, sizeof(value)); };
  put(0, std::int32_t{ 348 });
  for (std::size_t i = 0; i < dims.size(); ++i)
  {
    put(40 + 2 * i, dims[i]);
  }
  put(70, datatype);
  put(72, bitpix);
  for (int axis = 1; axis <= 3; ++axis)
  {
    put(76 + 4 * axis, 1.0f); // pixdim[1..3]
  }
  put(108, voxOffset);
  put(112, slope);
  std::memcpy(&bytes[344], "n+1", 4);
  return bytes + voxels;
}

/** `count` values of T, smooth enough to compress, `odd` at index `at` when given. */
template<typename T>
std::string
Values(std::size_t count, double odd = 0.0, std::size_t at = SIZE_MAX)
{
  std::string bytes(count * sizeof(T), '\0');
  for (std::size_t i = 0; i < count; ++i)
  {
    const T value = static_cast<T>(i == at ? odd : 100.0 + static_cast<double>((i * 37) % 17));
    std::memcpy(&bytes[i * sizeof(T)], &value, sizeof(T));
  }
  return bytes;
}

/** One gzip member of `bytes` at zlib `level` (0: stored blocks, where a flipped byte fails only the CRC). */
std::string
Gzipped(const std::string & bytes, int level)
{
  z_stream z{};
  deflateInit2(&z, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, bytes.size()), '\0');
  z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef *>(&out[0]);
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

void
Put(const fs::path & path, const std::string & bytes)
{
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void
MakeInputs(const fs::path & in)
{
  const fs::path d = in / "r2nii";
  fs::create_directories(d);
  const std::vector<std::int16_t> volume{ 3, 16, 16, 8 }, series{ 4, 8, 8, 8, 6 };
  const std::string               floats = Values<float>(16 * 16 * 8), seriesFloats = Values<float>(8 * 8 * 8 * 6);
  // Impossible headers: a dimension of 0 over 16 times the data it says, a negative one, voxels inside the header, a
  // bitpix that is not its datatype's.
  Put(d / "dimzero.nii.gz", Gzipped(NiftiFile({ 4, 16, 16, 0, 5 }, 16, 32, Values<float>(16 * 16 * 16 * 5)), 6));
  Put(d / "dimnegative.nii", NiftiFile({ 3, 16, -16, 4 }, 16, 32, Values<float>(16 * 16 * 4)));
  Put(d / "voxoffset.nii.gz", Gzipped(NiftiFile(volume, 16, 32, floats, 100.0f), 6));
  Put(d / "bitpix.nii.gz", Gzipped(NiftiFile(volume, 16, 64, floats + floats), 6));
  // One flipped voxel byte in a stored (uncompressed) gzip member: only its CRC-32 tells.
  const auto flipped = [](std::string bytes) {
    bytes[10 + 5 + 352 + 100] ^= 0x40; // gzip header, stored block header, NIfTI header, then voxels
    return bytes;
  };
  Put(d / "crc32.nii.gz", flipped(Gzipped(NiftiFile(volume, 16, 32, floats), 0)));
  Put(d / "crc64.nii.gz", flipped(Gzipped(NiftiFile(volume, 64, 64, Values<double>(16 * 16 * 8)), 0)));
  Put(d / "crcseries.nii.gz", flipped(Gzipped(NiftiFile(series, 16, 32, seriesFloats), 0)));
  // Gzip bombs: a sound image, then 16 MiB of zeros in the same member.
  const std::string zeros(std::size_t{ 16 } << 20, '\0');
  Put(d / "bomb.nii.gz", Gzipped(NiftiFile(volume, 16, 32, floats) + zeros, 6));
  Put(d / "bombseries.nii.gz", Gzipped(NiftiFile(series, 16, 32, seriesFloats) + zeros, 6));
  // Headers that declare 32767^3 voxels and 50 GiB over a few KiB of data.
  Put(d / "huge.nii.gz", Gzipped(NiftiFile({ 3, 32767, 32767, 32767 }, 16, 32, floats), 6));
  Put(d / "hugeseries.nii.gz", Gzipped(NiftiFile({ 4, 1024, 1024, 256, 50 }, 16, 32, seriesFloats), 6));
  // A trailer whose size (ISIZE) is one more than the data; compressed data overwritten in its middle.
  std::string isize = Gzipped(NiftiFile(volume, 16, 32, floats), 6);
  isize[isize.size() - 4] = static_cast<char>(isize[isize.size() - 4] + 1);
  Put(d / "isize.nii.gz", isize);
  std::string corrupt = Gzipped(NiftiFile(volume, 16, 32, floats), 6);
  std::fill_n(corrupt.begin() + static_cast<std::ptrdiff_t>(corrupt.size() / 2), 16, '\xff');
  Put(d / "corrupt.nii.gz", corrupt);
  // Files that are not files to read: no permission, a symbolic link loop, a FIFO.
  Put(d / "private.nii.gz", Gzipped(NiftiFile(volume, 16, 32, floats), 6));
  fs::permissions(d / "private.nii.gz", fs::perms::none);
  fs::create_symlink("loop2.nii.gz", d / "loop.nii.gz");
  fs::create_symlink("loop.nii.gz", d / "loop2.nii.gz");
  mkfifo((d / "fifo.nii.gz").c_str(), 0644);
  // Finite values that float32 cannot hold: int16 scaled by 1e38, float64 1e300.
  Put(d / "slope.nii.gz", Gzipped(NiftiFile(volume, 4, 16, Values<std::int16_t>(16 * 16 * 8), 352.0f, 1e38f), 6));
  Put(d / "float64big.nii.gz", Gzipped(NiftiFile(volume, 64, 64, Values<double>(16 * 16 * 8, 1e300, 5)), 6));
  Put(d / "float64bigseries.nii.gz", Gzipped(NiftiFile(series, 64, 64, Values<double>(8 * 8 * 8 * 6, 1e300, 5)), 6));
}

} // namespace round2
} // namespace

#endif
