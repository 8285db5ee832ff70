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
#include "SVDLowRankBatchBuffers.h"

#include "svdlr/Engine.h"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <utility>

namespace svdlr_batch
{

BufferLease::~BufferLease()
{
  if (m_Pool != nullptr && m_Capacity > 0)
  {
    m_Pool->GiveBack(m_Data, m_Capacity, m_Pinned);
  }
}

BufferLease::BufferLease(BufferLease && other) noexcept
  : m_Pool(std::exchange(other.m_Pool, nullptr))
  , m_Data(std::exchange(other.m_Data, nullptr))
  , m_Size(std::exchange(other.m_Size, 0))
  , m_Capacity(std::exchange(other.m_Capacity, 0))
  , m_Pinned(std::exchange(other.m_Pinned, false))
{}

BufferLease &
BufferLease::operator=(BufferLease && other) noexcept
{
  if (this != &other)
  {
    BufferLease old(std::move(*this));
    m_Pool = std::exchange(other.m_Pool, nullptr);
    m_Data = std::exchange(other.m_Data, nullptr);
    m_Size = std::exchange(other.m_Size, 0);
    m_Capacity = std::exchange(other.m_Capacity, 0);
    m_Pinned = std::exchange(other.m_Pinned, false);
  }
  return *this;
}

HostBufferPool::HostBufferPool(std::size_t budgetBytes, bool pinned)
  : m_Budget(budgetBytes)
  , m_TryPinned(pinned)
{}

HostBufferPool::~HostBufferPool()
{
  // Every lease has been given back: the pipeline joins its threads before the pool goes.
  for (const Block & block : m_Free)
  {
    Free(block);
  }
}

HostBufferPool::Block
HostBufferPool::Allocate(std::size_t bytes)
{
  Block block;
  block.capacity = bytes;
  if (m_TryPinned)
  {
    block.data = svdlr::AllocatePinnedHostMemory(bytes);
    block.pinned = block.data != nullptr;
  }
  if (block.data == nullptr)
  {
    block.data = std::malloc(bytes);
    if (block.data == nullptr)
    {
      throw std::bad_alloc();
    }
  }
  return block;
}

void
HostBufferPool::Free(const Block & block)
{
  if (block.pinned)
  {
    svdlr::FreePinnedHostMemory(block.data);
  }
  else
  {
    std::free(block.data);
  }
}

BufferLease
HostBufferPool::Lease(std::size_t floats)
{
  const std::size_t bytes = floats * sizeof(float);
  std::unique_lock<std::mutex> lock(m_Mutex);
  WaitForRoom(lock, bytes);

  // The smallest kept buffer that holds the volume, unless it would waste more than half of itself.
  std::size_t best = m_Free.size();
  for (std::size_t i = 0; i < m_Free.size(); ++i)
  {
    if (m_Free[i].capacity >= bytes && m_Free[i].capacity <= 2 * bytes &&
        (best == m_Free.size() || m_Free[i].capacity < m_Free[best].capacity))
    {
      best = i;
    }
  }
  Block block;
  if (best < m_Free.size())
  {
    block = m_Free[best];
    m_Free.erase(m_Free.begin() + static_cast<std::ptrdiff_t>(best));
    m_FreeBytes -= block.capacity;
  }
  else
  {
    FreeKeptBuffersFor(bytes);
    block = Allocate(bytes);
  }
  m_LeasedBytes += block.capacity;
  m_PeakLeased = std::max(m_PeakLeased, m_LeasedBytes);
  m_AllPinned = m_AllPinned && block.pinned;

  BufferLease lease;
  lease.m_Pool = this;
  lease.m_Data = static_cast<float *>(block.data);
  lease.m_Size = floats;
  lease.m_Capacity = block.capacity;
  lease.m_Pinned = block.pinned;
  return lease;
}

void
HostBufferPool::WaitForRoom(std::unique_lock<std::mutex> & lock, std::size_t bytes)
{
  m_Returned.wait(lock, [&] { return m_LeasedBytes == 0 || m_LeasedBytes + bytes <= m_Budget; });
}

void
HostBufferPool::FreeKeptBuffersFor(std::size_t bytes)
{
  // Kept buffers make room for the new lease, so that what is held stays within the budget.
  while (!m_Free.empty() && m_LeasedBytes + m_FreeBytes + bytes > m_Budget)
  {
    m_FreeBytes -= m_Free.back().capacity;
    Free(m_Free.back());
    m_Free.pop_back();
  }
}

BufferLease
HostBufferPool::Reserve(std::size_t bytes)
{
  std::unique_lock<std::mutex> lock(m_Mutex);
  WaitForRoom(lock, bytes);
  FreeKeptBuffersFor(bytes);
  m_LeasedBytes += bytes;
  m_PeakLeased = std::max(m_PeakLeased, m_LeasedBytes);
  BufferLease lease;
  lease.m_Pool = this;
  lease.m_Capacity = bytes;
  return lease;
}

void
HostBufferPool::GiveBack(void * data, std::size_t capacity, bool pinned)
{
  {
    const std::lock_guard<std::mutex> lock(m_Mutex);
    m_LeasedBytes -= capacity;
    if (data != nullptr) // a reservation holds no buffer to keep
    {
      m_Free.push_back({ data, capacity, pinned });
      m_FreeBytes += capacity;
    }
  }
  m_Returned.notify_all();
}

std::size_t
HostBufferPool::PeakLeasedBytes() const
{
  const std::lock_guard<std::mutex> lock(m_Mutex);
  return m_PeakLeased;
}

bool
HostBufferPool::AllPinned() const
{
  const std::lock_guard<std::mutex> lock(m_Mutex);
  return m_AllPinned;
}

} // namespace svdlr_batch
