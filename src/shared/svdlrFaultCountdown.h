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
#ifndef svdlr_FaultCountdown_h
#define svdlr_FaultCountdown_h

// A countdown that lets tests make the k-th event of a kind fail (a device allocation, say), so that the recovery
// paths behind rare failures run under test. Disarmed it is one relaxed atomic load per event: the user paths
// that consult it behave exactly as without it. Plain C++, no CUDA, so that its counting is tested on any machine.

#include <atomic>
#include <cstdint>
#include <mutex>

namespace svdlr
{
namespace detail
{

class FaultCountdown
{
public:
  /** From now on the next `succeed` events pass, then `failures` events fail (all later ones when negative),
   * then events pass again. Replaces any earlier arming. */
  void
  Arm(std::int64_t succeed, std::int64_t failures) noexcept
  {
    const std::lock_guard<std::mutex> lock(m_Mutex);
    m_Succeed = succeed < 0 ? 0 : succeed;
    m_Failures = failures;
    m_Failed = 0;
    m_Seen = 0;
    m_Armed.store(failures != 0, std::memory_order_release);
  }

  void
  Disarm() noexcept
  {
    const std::lock_guard<std::mutex> lock(m_Mutex);
    m_Armed.store(false, std::memory_order_release);
  }

  /** Counts one event; true when it must fail. */
  bool
  NextFails() noexcept
  {
    if (!m_Armed.load(std::memory_order_relaxed))
    {
      return false;
    }
    const std::lock_guard<std::mutex> lock(m_Mutex);
    if (!m_Armed.load(std::memory_order_relaxed))
    {
      return false;
    }
    ++m_Seen;
    if (m_Succeed > 0)
    {
      --m_Succeed;
      return false;
    }
    ++m_Failed;
    if (m_Failures > 0 && --m_Failures == 0)
    {
      m_Armed.store(false, std::memory_order_release);
    }
    return true;
  }

  /** How many events were counted while armed since the last Arm(), and how many of them were made to fail. */
  std::int64_t
  Seen() const noexcept
  {
    const std::lock_guard<std::mutex> lock(m_Mutex);
    return m_Seen;
  }

  std::int64_t
  Failed() const noexcept
  {
    const std::lock_guard<std::mutex> lock(m_Mutex);
    return m_Failed;
  }

private:
  mutable std::mutex m_Mutex;
  std::atomic<bool>  m_Armed{ false };
  std::int64_t       m_Succeed{ 0 };
  std::int64_t       m_Failures{ 0 };
  std::int64_t       m_Failed{ 0 };
  std::int64_t       m_Seen{ 0 };
};

} // namespace detail
} // namespace svdlr

#endif
