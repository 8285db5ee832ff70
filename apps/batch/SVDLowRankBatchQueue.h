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
#ifndef SVDLowRankBatchQueue_h
#define SVDLowRankBatchQueue_h

// The hand-over between two stages of the batch pipeline: producers push, consumers pop until every
// producer has said it is done and the queue is empty. The queue itself does not bound its length: the
// volumes it carries hold buffers leased from the HostBufferPool, and the pool's byte budget is the bound.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>

namespace svdlr_batch
{

template <typename T>
class WorkQueue
{
public:
  explicit WorkQueue(std::size_t producers)
    : m_Producers(producers)
  {}

  void
  Push(T item)
  {
    {
      const std::lock_guard<std::mutex> lock(m_Mutex);
      m_Items.push_back(std::move(item));
    }
    m_Changed.notify_one();
  }

  /** One producer has pushed its last item; when all have, waiting consumers get an empty optional. */
  void
  ProducerDone()
  {
    {
      const std::lock_guard<std::mutex> lock(m_Mutex);
      --m_Producers;
    }
    m_Changed.notify_all();
  }

  /** The next item, or nothing once every producer is done and the queue is empty. */
  std::optional<T>
  Pop()
  {
    std::unique_lock<std::mutex> lock(m_Mutex);
    m_Changed.wait(lock, [&] { return !m_Items.empty() || m_Producers == 0; });
    if (m_Items.empty())
    {
      return std::nullopt;
    }
    std::optional<T> item(std::move(m_Items.front()));
    m_Items.pop_front();
    return item;
  }

private:
  std::mutex              m_Mutex;
  std::condition_variable m_Changed;
  std::deque<T>           m_Items;
  std::size_t             m_Producers;
};

} // namespace svdlr_batch

#endif
