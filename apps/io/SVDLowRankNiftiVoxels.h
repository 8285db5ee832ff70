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
#ifndef SVDLowRankNiftiVoxels_h
#define SVDLowRankNiftiVoxels_h

// A NIfTI file's voxels as ITK 5.2's NiftiImageIO::Read gives them: swapped to this machine's order, NaN and Inf of
// a floating-point file read as 0 (niftilib), and scl_slope / scl_inter applied by ITK's rule. ITK-free, so that the
// tools' reader (SVDLowRankNiftiRead.h) and the Python extension's reader (python/src/svdlrPyNiftiIO.cpp) share it
// and give the denoiser the same numbers.

#include "SVDLowRankNiftiBytes.h"
#include "svdlr/CpuThreads.h"

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace svdlr_io
{

/** Elements (voxels, bytes) per chunk of ForChunksOnEveryCore: 4 MB of float32, large enough that a thread's start is
 * noise, small enough to spread 36 M voxels over every core. */
constexpr std::size_t kParallelChunk = std::size_t{ 1 } << 20;

/** Calls pass(first, count) over [0, n) in chunks of kParallelChunk (`first` a multiple of it), on up to every usable
 * core: a pass over a whole file or image (reading its bytes, converting its voxels, looking for NaN) is memory-bound,
 * and a fresh buffer's first touch goes with it: one thread took 0.11 s to convert a 144 MB series on the H100
 * machine, the largest step after the filter and the gzip. A file job (svdlr::RunningParallelJob), which shares the
 * cores with the other file jobs running now (svdlr::ShareOfCpuThreads), in a oneTBB arena that wide; one chunk runs
 * on this thread alone. `pass` must not throw. */
template <typename TPass>
void
ForChunksOnEveryCore(std::size_t n, const TPass & pass)
{
  if (n <= kParallelChunk) // no arena for one chunk: small files and headers are read on this thread
  {
    if (n > 0)
      pass(0, n);
    return;
  }
  const svdlr::RunningParallelJob running(svdlr::ParallelJobKind::FileInputOutput);
  tbb::task_arena(static_cast<int>(svdlr::ShareOfCpuThreads(svdlr::ParallelJobKind::FileInputOutput))).execute([&] {
    tbb::parallel_for(std::size_t{ 0 }, n, kParallelChunk, [&](std::size_t first) {
      pass(first, std::min(kParallelChunk, n - first));
    });
  });
}

/** scl_slope and scl_inter as NiftiImageIO::ReadImageInformation sets them, and its MustRescale(). */
struct NiftiRescale
{
  double slope{ 1.0 };
  double intercept{ 0.0 };
  bool   rescale{ false };
};

inline NiftiRescale
RescaleOf(const NiftiHeader & header)
{
  constexpr double epsilon = std::numeric_limits<double>::epsilon();
  NiftiRescale     r;
  r.slope = std::abs(header.sclSlope) < epsilon ? 1.0 : header.sclSlope;
  r.intercept = header.sclInter;
  r.rescale = std::abs(r.slope) > epsilon && (std::abs(r.slope - 1.0) > epsilon || std::abs(r.intercept) > epsilon);
  return r;
}

/** Whether ITK 5.2's NIfTI reader takes the header's vox_offset: a whole number from 352 on that fits an int. */
inline bool
ItkReadsVoxOffset(const NiftiHeader & header)
{
  return header.storedVoxOffset >= 352.0 && header.storedVoxOffset < 2147483647.0 &&
         header.storedVoxOffset == std::floor(header.storedVoxOffset);
}

/** Calls `f(T{})` with T the on-disk type of the NIfTI `datatype`, for the ten scalar types (1024 and 1280 as long long
 * and unsigned long long, ITK's LONGLONG and ULONGLONG); false, calling nothing, for any other datatype. */
template <typename F>
bool
VisitNiftiScalar(int datatype, F && f)
{
  const auto call = [&f](auto zero) {
    f(zero);
    return true;
  };
  switch (datatype)
  {
    case 2:
      return call(std::uint8_t{});
    case 256:
      return call(std::int8_t{});
    case 4:
      return call(std::int16_t{});
    case 512:
      return call(std::uint16_t{});
    case 8:
      return call(std::int32_t{});
    case 768:
      return call(std::uint32_t{});
    case 1024:
      return call(0LL);
    case 1280:
      return call(0ULL);
    case 16:
      return call(0.0f);
    case 64:
      return call(0.0);
    default:
      return false;
  }
}

/** One on-disk value, in this machine's byte order. */
template <typename T>
T
NiftiValueAt(const unsigned char * data, std::size_t i, bool swapped)
{
  return StoredValue<T>(data + i * sizeof(T), swapped);
}

/** niftilib's nifti_read_buffer: NaN and Inf of a floating-point file read as 0. */
template <typename T>
T
CleanedNiftiValue(T value)
{
  if constexpr (std::is_floating_point_v<T>)
  {
    return std::isfinite(value) ? value : T{ 0 };
  }
  return value;
}

/** NiftiImageIO::Read for `count` scalars of on-disk type TDisk: as they are (and then rescaled in their own type),
 * or, with `toFloat`, cast to float first (its CastCopy when it promotes an integer type for a rescale; without one,
 * what a float image's reader gives), then rescaled in double (its RescaleFunction). `buffer` holds TDisk, or float
 * when `toFloat`. */
template <typename TDisk>
void
ConvertNiftiVoxelRange(const unsigned char * data, std::size_t count, bool swapped, bool toFloat,
                       const NiftiRescale & r, void * buffer)
{
  const auto scaled = [&](auto value) {
    using T = decltype(value);
    double tmp = static_cast<double>(value) * r.slope;
    tmp += r.intercept;
    return static_cast<T>(tmp);
  };
  if (toFloat)
  {
    auto * out = static_cast<float *>(buffer);
    for (std::size_t i = 0; i < count; ++i)
    {
      const float value = static_cast<float>(NiftiValueAt<TDisk>(data, i, swapped));
      out[i] = r.rescale ? scaled(value) : value;
    }
    return;
  }
  auto * out = static_cast<TDisk *>(buffer);
  if (!swapped && !r.rescale && !std::is_floating_point_v<TDisk>)
  {
    std::memcpy(out, data, count * sizeof(TDisk));
    return;
  }
  for (std::size_t i = 0; i < count; ++i)
  {
    const TDisk value = CleanedNiftiValue(NiftiValueAt<TDisk>(data, i, swapped));
    out[i] = r.rescale ? scaled(value) : value;
  }
}

/** ConvertNiftiVoxelRange over the whole image, its chunks on every core. */
template <typename TDisk>
void
ConvertNiftiVoxels(const unsigned char * data, std::size_t count, bool swapped, bool toFloat, const NiftiRescale & r,
                   void * buffer)
{
  const std::size_t outBytes = toFloat ? sizeof(float) : sizeof(TDisk);
  ForChunksOnEveryCore(count, [&](std::size_t first, std::size_t n) {
    ConvertNiftiVoxelRange<TDisk>(
      data + first * sizeof(TDisk), n, swapped, toFloat, r, static_cast<unsigned char *>(buffer) + first * outBytes);
  });
}

/** The voxels of `file` as ITK 5.2 reads them into a float image (its read, then a cast to float), into `out`
 * (header.Voxels() floats). False, writing nothing, for what the tools' reader leaves to ITK's own Read: not a
 * single-file NIfTI-1 of one of the ten scalar types, or a vox_offset ITK refuses. */
bool
NiftiVoxelsAsFloat(const NiftiFileBytes & file, float * out);

} // namespace svdlr_io

#endif
