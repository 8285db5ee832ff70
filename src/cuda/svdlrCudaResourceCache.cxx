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
#include "svdlrCudaResourceCache.h"

#include "svdlrBackends.h"

#include "svdlrCudaDevice.h"
#include "svdlrLocalDenoiseCuda.h"

#include <cstdlib>
#include <mutex>
#include <utility>

namespace svdlr
{
namespace detail
{
namespace
{

template <typename T>
using ResourceList = std::vector<std::unique_ptr<CudaPipelineResources<T>>>;

std::mutex &
CacheMutex()
{
  static std::mutex mutex;
  return mutex;
}

template <typename T>
ResourceList<T> &
Cached()
{
  static ResourceList<T> cached;
  return cached;
}

/** Frees a set with its device current: handles and streams belong to that device's context. */
template <typename T>
void
FreeOnItsDevice(std::unique_ptr<CudaPipelineResources<T>> resources) noexcept
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
    resources.reset(); // the device is gone: free what can be freed
  }
}

/** Takes every cached set out under the lock, so that the freeing itself runs without it. */
template <typename T>
ResourceList<T>
TakeAll()
{
  const std::lock_guard<std::mutex> lock(CacheMutex());
  return std::move(Cached<T>());
}

void
ReleaseAtExit()
{
  ReleaseCachedCudaResources();
}

} // namespace

template <typename T>
std::unique_ptr<CudaPipelineResources<T>>
TakeCachedResources(int deviceId)
{
  {
    const std::lock_guard<std::mutex> lock(CacheMutex());
    ResourceList<T> & cached = Cached<T>();
    for (auto it = cached.begin(); it != cached.end(); ++it)
    {
      if ((*it)->deviceId == deviceId)
      {
        std::unique_ptr<CudaPipelineResources<T>> taken = std::move(*it);
        cached.erase(it);
        return taken;
      }
    }
  }
  auto fresh = std::make_unique<CudaPipelineResources<T>>();
  fresh->deviceId = deviceId;
  return fresh;
}

template <typename T>
void
CacheResources(std::unique_ptr<CudaPipelineResources<T>> resources)
{
  // Registered on first use, after the CUDA runtime registered its own exit handlers, so it runs before
  // them (exit handlers run in reverse order): the contexts are still alive when the cache frees.
  static const int registered = std::atexit(ReleaseAtExit);
  (void)registered;

  std::unique_ptr<CudaPipelineResources<T>> replaced;
  {
    const std::lock_guard<std::mutex> lock(CacheMutex());
    ResourceList<T> & cached = Cached<T>();
    for (auto & entry : cached)
    {
      if (entry->deviceId == resources->deviceId)
      {
        replaced = std::exchange(entry, std::move(resources));
        break;
      }
    }
    if (resources != nullptr)
    {
      cached.push_back(std::move(resources));
    }
  }
  FreeOnItsDevice(std::move(replaced));
}

void
ReleaseCachedCudaResources() noexcept
{
  ReleaseLocalDenoiseResources();
  for (auto & resources : TakeAll<float>())
  {
    FreeOnItsDevice(std::move(resources));
  }
  for (auto & resources : TakeAll<double>())
  {
    FreeOnItsDevice(std::move(resources));
  }
}

template std::unique_ptr<CudaPipelineResources<float>>
TakeCachedResources<float>(int);
template std::unique_ptr<CudaPipelineResources<double>>
TakeCachedResources<double>(int);
template void
CacheResources<float>(std::unique_ptr<CudaPipelineResources<float>>);
template void
CacheResources<double>(std::unique_ptr<CudaPipelineResources<double>>);

} // namespace detail
} // namespace svdlr
