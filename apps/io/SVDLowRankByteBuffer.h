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
#ifndef SVDLowRankByteBuffer_h
#define SVDLowRankByteBuffer_h

// The buffers a file is read and decompressed into. std::vector zeroes what it grows into, on one thread: 0.05-0.1 s
// for the 144-329 MB of a DWI series, before the parallel reader and decoder write every byte anyway (and fault its
// pages in on every core). These do not zero.

#include <new>
#include <utility>
#include <vector>

namespace svdlr_io
{

/** An allocator whose value-initialisation leaves the element uninitialised: for buffers whose every element is
 * written before it is read. */
template <typename T>
struct UninitializedAllocator : std::allocator<T>
{
  template <typename U>
  struct rebind
  {
    using other = UninitializedAllocator<U>;
  };
  template <typename U>
  void
  construct(U * p) noexcept
  {
    ::new (static_cast<void *>(p)) U;
  }
  template <typename U, typename... Args>
  void
  construct(U * p, Args &&... args)
  {
    ::new (static_cast<void *>(p)) U(std::forward<Args>(args)...);
  }
};

template <typename T>
using RawVector = std::vector<T, UninitializedAllocator<T>>;

/** A file's bytes, compressed or decompressed. */
using ByteBuffer = RawVector<unsigned char>;

} // namespace svdlr_io

#endif
