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
// The per-device resource cache that both CUDA paths keep their streams, handles and buffers in
// (svdlrDeviceResourceCache.h), with a stand-in resource that counts its sets: runs without a GPU.
#include "cuda/svdlrDeviceResourceCache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <utility>
#include <vector>

namespace
{

/** A resource set that counts how many are alive. Each test uses its own Tag: one cache per resource type. */
template <int Tag>
struct CountedSet
{
  static inline std::atomic<int> alive{ 0 };

  int               deviceId{ -1 };
  std::atomic<bool> inUse{ false };

  explicit CountedSet(int device)
    : deviceId(device)
  {
    ++alive;
  }
  ~CountedSet() { --alive; }
};

template <int Tag>
using CacheOf = svdlr::detail::DeviceResourceCache<CountedSet<Tag>>;

TEST(SVDLowRankDeviceResourceCache, TakeMakesAFreshSetForTheDeviceWhenNoneIsCached)
{
  auto set = CacheOf<1>::Shared().Take(3);
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(set->deviceId, 3);
  EXPECT_EQ(CountedSet<1>::alive, 1);
}

TEST(SVDLowRankDeviceResourceCache, ASetPutBackIsTheOneTheNextRunOnThatDeviceTakes)
{
  auto &                cache = CacheOf<2>::Shared();
  auto                  first = cache.Take(0);
  const CountedSet<2> * kept = first.get();
  cache.Put(std::move(first));
  EXPECT_EQ(CountedSet<2>::alive, 1);
  auto again = cache.Take(0);
  EXPECT_EQ(again.get(), kept);
  EXPECT_EQ(CountedSet<2>::alive, 1);
}

TEST(SVDLowRankDeviceResourceCache, PuttingASecondSetForADeviceFreesTheFirst)
{
  auto &                cache = CacheOf<3>::Shared();
  auto                  a = cache.Take(0);
  auto                  b = cache.Take(0); // the cache is empty: a second fresh set, as for two concurrent runs
  const CountedSet<3> * second = b.get();
  cache.Put(std::move(a));
  cache.Put(std::move(b));
  EXPECT_EQ(CountedSet<3>::alive, 1);
  EXPECT_EQ(cache.Take(0).get(), second);
}

TEST(SVDLowRankDeviceResourceCache, SetsOfDifferentDevicesAreKeptApart)
{
  auto &                cache = CacheOf<4>::Shared();
  auto                  on0 = cache.Take(0);
  auto                  on1 = cache.Take(1);
  const CountedSet<4> * kept0 = on0.get();
  const CountedSet<4> * kept1 = on1.get();
  cache.Put(std::move(on0));
  cache.Put(std::move(on1));
  EXPECT_EQ(CountedSet<4>::alive, 2);
  EXPECT_EQ(cache.Take(1).get(), kept1);
  EXPECT_EQ(cache.Take(0).get(), kept0);
}

TEST(SVDLowRankDeviceResourceCache, ReleaseFreesEverySetEvenOnDevicesThatCannotBeMadeCurrent)
{
  // Device 4096 exists nowhere: its set is freed without its device current, as after a device failure.
  auto & cache = CacheOf<5>::Shared();
  cache.Put(cache.Take(0));
  cache.Put(cache.Take(4096));
  EXPECT_EQ(CountedSet<5>::alive, 2);
  cache.Release();
  EXPECT_EQ(CountedSet<5>::alive, 0);
  EXPECT_EQ(cache.Take(4096)->deviceId, 4096); // fresh again
}

TEST(SVDLowRankDeviceResourceCache, FreeOnItsDeviceFreesASetThatIsNotCached)
{
  auto set = CacheOf<6>::Shared().Take(4096);
  EXPECT_EQ(CountedSet<6>::alive, 1);
  CacheOf<6>::FreeOnItsDevice(std::move(set));
  EXPECT_EQ(CountedSet<6>::alive, 0);
  CacheOf<6>::FreeOnItsDevice(nullptr); // nothing to free
}

TEST(SVDLowRankDeviceResourceCache, ConcurrentRunsNeverShareASet)
{
  auto &                   cache = CacheOf<7>::Shared();
  std::atomic<int>         shared{ 0 };
  std::vector<std::thread> runs;
  for (int t = 0; t < 8; ++t)
  {
    runs.emplace_back([&] {
      for (int i = 0; i < 2000; ++i)
      {
        auto set = cache.Take(0);
        if (set->inUse.exchange(true))
        {
          ++shared;
        }
        set->inUse = false;
        cache.Put(std::move(set));
      }
    });
  }
  for (auto & run : runs)
  {
    run.join();
  }
  EXPECT_EQ(shared, 0);
  EXPECT_EQ(CountedSet<7>::alive, 1); // every set but the last put back was replaced and freed
  cache.Release();
  EXPECT_EQ(CountedSet<7>::alive, 0);
}

} // namespace
