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
#ifndef svdlr_DeviceResourceCache_h
#define svdlr_DeviceResourceCache_h

// One set of resources per device, kept between runs: streams, handles, device buffers and pinned staging cost
// milliseconds to create and free (docs/performance.md), as much as a whole small run. Both CUDA paths keep theirs
// here: the slice pipeline (CudaPipelineResources<T>, svdlrCudaResourceCache.h) and the local denoiser
// (LocalDenoiseResources, svdlrLocalDenoiseResources.h).
//
// The rules, the same for both:
//   - a run takes its device's set out (Take), so that two concurrent runs never share one;
//   - only a run that succeeded puts it back (Put): after an error the streams may hold a sticky CUDA error or
//     unfinished work, and the run frees its set instead (FreeOnItsDevice);
//   - a set is freed with its own device current, since its handles and streams belong to that device's context;
//     when the device cannot be made current (it failed), what can be freed is freed all the same;
//   - what is cached is freed on request (Release, through svdlr::ReleaseCudaResources) and at process exit, before
//     the CUDA runtime tears its contexts down.
//
// TResources: has a public `int deviceId` and a constructor from the device id that makes a fresh set (run with
// that device current). There is one cache per resource type (Shared()).

#include "svdlrCudaDevice.h"

#include <cstdlib>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace svdlr
{
namespace detail
{

template <typename TResources>
class DeviceResourceCache
{
public:
  using Pointer = std::unique_ptr<TResources>;

  /** The one cache of this resource type. */
  static DeviceResourceCache &
  Shared()
  {
    static DeviceResourceCache cache;
    return cache;
  }

  DeviceResourceCache(const DeviceResourceCache &) = delete;
  DeviceResourceCache &
  operator=(const DeviceResourceCache &) = delete;

  /** The set cached for `deviceId`, taken out of the cache, or a fresh one. Thread-safe. */
  Pointer
  Take(int deviceId)
  {
    {
      const std::lock_guard<std::mutex> lock(m_Mutex);
      for (auto it = m_Cached.begin(); it != m_Cached.end(); ++it)
      {
        if ((*it)->deviceId == deviceId)
        {
          Pointer taken = std::move(*it);
          m_Cached.erase(it);
          return taken;
        }
      }
    }
    return std::make_unique<TResources>(deviceId); // outside the lock: creating a set takes milliseconds
  }

  /** Puts the set of a successful run back, replacing (and freeing) what the cache held for the same device. The
   * caller has synchronised every stream of the set. Throws std::bad_alloc, the set then freed by the caller's
   * unique_ptr, when the cache cannot grow. */
  void
  Put(Pointer resources)
  {
    // Registered on first use, after the CUDA runtime registered its own exit handlers, so that it runs before
    // them (exit handlers run in reverse order): the contexts are still alive when the cache frees its sets.
    static const int registered = std::atexit(ReleaseSharedAtExit);
    (void)registered;

    Pointer replaced;
    {
      const std::lock_guard<std::mutex> lock(m_Mutex);
      for (auto & entry : m_Cached)
      {
        if (entry->deviceId == resources->deviceId)
        {
          replaced = std::exchange(entry, std::move(resources));
          break;
        }
      }
      if (resources != nullptr)
      {
        m_Cached.push_back(std::move(resources));
      }
    }
    FreeOnItsDevice(std::move(replaced));
  }

  /** Frees every cached set. Takes them out under the lock, so that the freeing itself runs without it. */
  void
  Release() noexcept
  {
    std::vector<Pointer> taken;
    {
      const std::lock_guard<std::mutex> lock(m_Mutex);
      taken.swap(m_Cached);
    }
    for (auto & resources : taken)
    {
      FreeOnItsDevice(std::move(resources));
    }
  }

  /** Frees a set with its device current; when the device is gone, frees what can be freed. */
  static void
  FreeOnItsDevice(Pointer resources) noexcept
  {
    if (resources == nullptr)
    {
      return;
    }
    try
    {
      const ScopedDevice device(resources->deviceId);
      resources.reset();
    }
    catch (...)
    {
      resources.reset();
    }
  }

private:
  DeviceResourceCache() = default;

  static void
  ReleaseSharedAtExit()
  {
    Shared().Release();
  }

  std::mutex           m_Mutex;
  std::vector<Pointer> m_Cached;
};

} // namespace detail
} // namespace svdlr

#endif
