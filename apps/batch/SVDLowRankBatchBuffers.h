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
#ifndef SVDLowRankBatchBuffers_h
#define SVDLowRankBatchBuffers_h

// The memory that bounds the batch pipeline: every volume in flight (read and waiting, on the GPU, being
// written) lives in one buffer leased from this pool, and the pool leases at most its byte budget at a
// time, so a reader that runs ahead waits for a writer to give a buffer back. Buffers are pinned host memory
// when the CUDA backend runs (svdlr::AllocatePinnedHostMemory), so that the engine copies straight from
// them, and they are kept for the next volume: pinning costs about 26 ms per 64 MiB, much more than a
// volume's solve. Freed buffers are reused by the next volume that fits.

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <vector>

namespace svdlr_batch
{

class HostBufferPool;

/** One leased buffer, or a reservation of budget (no memory: HostBufferPool::Reserve); gives it back to its pool when
 * destroyed. Move-only. */
class BufferLease
{
public:
  BufferLease() = default;
  ~BufferLease();
  BufferLease(BufferLease && other) noexcept;
  BufferLease &
  operator=(BufferLease && other) noexcept;
  BufferLease(const BufferLease &) = delete;
  BufferLease &
  operator=(const BufferLease &) = delete;

  float *
  Data() const
  {
    return m_Data;
  }
  /** The floats asked for (the buffer may hold more). */
  std::size_t
  Size() const
  {
    return m_Size;
  }

private:
  friend class HostBufferPool;
  HostBufferPool * m_Pool{ nullptr };
  float *          m_Data{ nullptr };
  std::size_t      m_Size{ 0 };
  std::size_t      m_Capacity{ 0 }; // bytes
  bool             m_Pinned{ false };
};

class HostBufferPool
{
public:
  /** At most `budgetBytes` leased at a time; `pinned`: try pinned memory first (ordinary memory when pinning
   * fails). */
  HostBufferPool(std::size_t budgetBytes, bool pinned);
  ~HostBufferPool();
  HostBufferPool(const HostBufferPool &) = delete;
  HostBufferPool &
  operator=(const HostBufferPool &) = delete;

  /** A buffer of `floats`, waiting while the budget is leased out. A volume larger than the whole budget
   * waits until nothing else is leased, then goes alone. Throws std::bad_alloc when memory runs out. */
  BufferLease
  Lease(std::size_t floats);

  /** `bytes` of the budget for an item that holds memory of its own (an image ITK's reader allocates), waiting as
   * Lease does; the lease holds no buffer (Data() is null) and gives the bytes back when destroyed. */
  BufferLease
  Reserve(std::size_t bytes);

  /** The most bytes ever leased at once. */
  std::size_t
  PeakLeasedBytes() const;
  /** Whether every buffer handed out so far was pinned. */
  bool
  AllPinned() const;

private:
  friend class BufferLease;
  struct Block
  {
    void *      data{ nullptr };
    std::size_t capacity{ 0 };
    bool        pinned{ false };
  };
  void
  GiveBack(void * data, std::size_t capacity, bool pinned);
  /** Waits until `bytes` more fit the budget, or nothing is leased (an item larger than the budget goes alone). */
  void
  WaitForRoom(std::unique_lock<std::mutex> & lock, std::size_t bytes);
  /** Frees kept buffers until `bytes` more fit the budget beside what is held (called with the mutex held). */
  void
  FreeKeptBuffersFor(std::size_t bytes);
  Block
  Allocate(std::size_t bytes);
  static void
  Free(const Block & block);

  const std::size_t       m_Budget;
  const bool              m_TryPinned;
  mutable std::mutex      m_Mutex;
  std::condition_variable m_Returned;
  std::vector<Block>      m_Free;
  std::size_t             m_FreeBytes{ 0 };
  std::size_t             m_LeasedBytes{ 0 };
  std::size_t             m_PeakLeased{ 0 };
  bool                    m_AllPinned{ true };
};

} // namespace svdlr_batch

#endif
