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

#include <oneapi/tbb/concurrent_queue.h>

#include <atomic>
#include <cstddef>
#include <optional>

namespace svdlr_batch
{

/** The end is one empty optional, pushed by the last producer done (so behind every item) and put back by each consumer
 * that pops it: consumers are not counted (the workers are not known when the readers start). With no producer the
 * end is there from the start. */
template <typename T>
class WorkQueue
{
public:
  explicit WorkQueue(std::size_t producers)
    : m_Producers(producers)
  {
    if (producers == 0)
    {
      m_Items.push(std::nullopt);
    }
  }

  void
  Push(T item)
  {
    m_Items.push(std::optional<T>(std::move(item)));
  }

  /** One producer has pushed its last item; when all have, waiting consumers get an empty optional. */
  void
  ProducerDone()
  {
    if (--m_Producers == 0)
    {
      m_Items.push(std::nullopt);
    }
  }

  /** The next item, or nothing once every producer is done and the queue is empty. */
  std::optional<T>
  Pop()
  {
    std::optional<T> item;
    m_Items.pop(item);
    if (!item)
    {
      m_Items.push(std::nullopt);
    }
    return item;
  }

private:
  tbb::concurrent_bounded_queue<std::optional<T>> m_Items;
  std::atomic<std::size_t>                        m_Producers;
};

} // namespace svdlr_batch

#endif
