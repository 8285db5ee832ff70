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

// StartCudaWarmUp: the CUDA backend's one-time set-up on a background thread (see svdlr/Engine.h for why).
#include "svdlr/Engine.h"
#include "svdlr/LocalDenoise.h"

#include "shared/svdlrBackends.h"
#include "shared/svdlrBackendChoice.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace svdlr
{
namespace
{

struct WarmUpState
{
  std::mutex                         mutex;
  std::thread                        thread;
  bool                               running{ false };
  std::deque<std::function<void()>> queued; // started while the thread ran: run next on it, in order
  std::vector<int>                   warmDevices;
};

// Never destroyed: the exit handler below may run after static destructors of this file.
WarmUpState &
State()
{
  static auto * state = new WarmUpState;
  return *state;
}

// The warm-up itself calls Reconstruct, which must not wait for itself.
thread_local bool t_InsideWarmUp = false;

// Large enough for Auto to pick the same solver as for the whole volume (it keeps the exact solver below
// 16 matrices), small enough to cost a few MiB.
constexpr std::size_t kWarmUpMatrices = 16;
constexpr std::size_t kWarmUpElements = std::size_t{ 1 } << 24;
// Each side of a warm-up matrix is at most this long, whatever the input's header claims: the warm-up's memory is
// bounded by constants (16 x 1024 x 1024 doubles, 128 MiB at most), never sized by the input alone.
constexpr std::size_t kWarmUpSide = 1024;
// The denoiser's warm-up series: at most this many volumes, patches of at most this odd extent.
constexpr std::size_t kWarmUpVolumes = 256;
constexpr std::size_t kWarmUpPatchSide = 15;

template <typename T>
void
RunWarmUp(std::size_t count, std::size_t rows, std::size_t cols, Options options)
{
  // Nothing is allocated before a device is known to be there: without one the warm-up ends here.
  std::string why;
  if (!detail::CudaDeviceReady(options.deviceId, why))
  {
    return;
  }
  rows = std::min(rows, kWarmUpSide);
  cols = std::min(cols, kWarmUpSide);
  const std::size_t matrixSize = rows * cols;
  count = std::max<std::size_t>(1, std::min({ count, kWarmUpMatrices, kWarmUpElements / std::max<std::size_t>(1, matrixSize) }));
  // Random data: a rank-deficient or constant batch could take shortcuts the real volume does not.
  std::vector<T>                   data(count * matrixSize);
  std::mt19937                     generator(20261123u);
  std::normal_distribution<double> normal;
  std::generate(data.begin(), data.end(), [&] { return static_cast<T>(normal(generator)); });
  options.backend = Backend::CUDA;
  options.progress = {};
  options.parallelFor = {};
  const MatrixBatch<const T> input{ data.data(), count, rows, cols, matrixSize };
  const MatrixBatch<T>       output{ data.data(), count, rows, cols, matrixSize };
  (void)Reconstruct(input, output, options);
  detail::NoteCudaDeviceWarm(options.deviceId);
}

void
JoinAtExit()
{
  WaitForCudaWarmUp();
}

} // namespace

namespace
{

/** The warm-up thread's body: `warmUp`, then what was queued meanwhile, until nothing is left. */
void
RunWarmUps(std::function<void()> warmUp)
{
  t_InsideWarmUp = true;
  while (warmUp)
  {
    try
    {
      warmUp();
    }
    catch (...)
    {
      // Dropped on purpose: the real call meets the same problem and reports it with its own context.
    }
    const std::lock_guard<std::mutex> lock(State().mutex);
    warmUp = nullptr;
    if (State().queued.empty())
    {
      State().running = false;
    }
    else
    {
      warmUp = std::move(State().queued.front());
      State().queued.pop_front();
    }
  }
}

/** Runs `warmUp` on the warm-up thread (after the one running, when one runs), unless the user opted out or
 * `deviceId` is warm. */
void
StartWarmUpThread(int deviceId, std::function<void()> warmUp)
{
  if (const char * setting = std::getenv("SVDLR_CUDA_WARMUP"); setting != nullptr && std::string(setting) == "0")
  {
    return; // the user's opt-out, and how docs/performance.md measures what the warm-up saves
  }
  // The backend's libraries are loaded here, on the caller's thread, never on the warm-up's: a process that exits
  // while the warm-up thread is still inside dlopen crashes in the CUDA libraries' initialisers (cuBLASLt's).
  std::string why;
  if (!detail::LoadCudaBackend(why))
  {
    return; // the real call reports why
  }
  WarmUpState &                     state = State();
  const std::lock_guard<std::mutex> lock(state.mutex);
  if (std::find(state.warmDevices.begin(), state.warmDevices.end(), deviceId) != state.warmDevices.end())
  {
    return;
  }
  if (state.running)
  {
    state.queued.push_back(std::move(warmUp));
    return;
  }
  if (state.thread.joinable())
  {
    state.thread.join(); // it has finished: nobody waited for it yet
  }
  // A process that ends while the warm-up runs must join it before the CUDA runtime is torn down.
  static const int registered = std::atexit(JoinAtExit);
  (void)registered;
  state.running = true;
  state.thread = std::thread(RunWarmUps, std::move(warmUp));
}

/** The denoiser once on a small random series of `volumes` volumes, with `options`' patch, policy and aggregation:
 * a cube of the patch's extent plus 4 along each axis. */
void
RunDenoiseWarmUp(std::size_t volumes, LocalDenoiseOptions options)
{
  std::string why;
  if (!detail::CudaDeviceReady(options.deviceId, why))
  {
    return;
  }
  // Bounded by constants whatever the header claims (at most 19^3 voxels of 256 volumes, 7 MiB): the same kernels
  // and handles as the real series, on less.
  volumes = std::min<std::size_t>(volumes, kWarmUpVolumes);
  std::array<std::size_t, 3> patch = options.patchSize[0] > 0 ? options.patchSize : DefaultPatchSize(volumes);
  for (std::size_t & extent : patch)
  {
    extent = std::min(extent, kWarmUpPatchSide);
  }
  const std::array<std::size_t, 3> size{ { patch[0] + 4, patch[1] + 4, patch[2] + 4 } };
  const std::size_t                voxels = size[0] * size[1] * size[2];
  std::vector<float>               series(voxels * volumes), sigma(voxels);
  std::vector<std::uint16_t>       rank(voxels);
  std::mt19937                     generator(20261126u);
  std::normal_distribution<float>  normal;
  std::generate(series.begin(), series.end(), [&] { return 100.0f + normal(generator); });
  const auto                       stride = [](std::size_t n) { return static_cast<std::ptrdiff_t>(n); };
  const std::array<std::ptrdiff_t, 4> strides{ { 1, stride(size[0]), stride(size[0] * size[1]), stride(voxels) } };
  const SeriesView<const float>    input{ series.data(), size, volumes, strides };
  const SeriesView<float>          output{ series.data(), size, volumes, strides };
  options.backend = Backend::CUDA;
  options.mask = nullptr;
  options.noiseSigma = nullptr;
  options.parallelFor = {};
  options.progress = {};
  (void)DenoiseLocalLowRank(input, output, LocalDenoiseMaps{ sigma.data(), rank.data() }, options);
  detail::NoteCudaDeviceWarm(options.deviceId);
}

} // namespace

void
StartCudaWarmUp(std::size_t count, std::size_t rows, std::size_t cols, const Options & options, bool doublePrecision)
{
  if (options.backend == Backend::CPU || !detail::CudaCompiledIn() || count == 0 || rows == 0 || cols == 0)
  {
    return;
  }
  if (options.backend == Backend::Auto && detail::AutoPrefersCpuWhenCold(count, rows, cols, options))
  {
    return; // Auto will run this job on the CPU: warming the GPU would only delay the exit
  }
  StartWarmUpThread(options.deviceId, [=] {
    if (doublePrecision)
    {
      RunWarmUp<double>(count, rows, cols, options);
    }
    else
    {
      RunWarmUp<float>(count, rows, cols, options);
    }
  });
}

void
StartCudaDeviceWarmUp(Backend backend, int deviceId)
{
  if (backend == Backend::CPU || !detail::CudaCompiledIn())
  {
    return;
  }
  StartWarmUpThread(deviceId, [deviceId] {
    std::string why;
    (void)detail::CudaDeviceReady(deviceId, why); // the driver and the context: what costs most
  });
}

void
StartCudaDenoiseWarmUp(std::size_t volumes, const LocalDenoiseOptions & options)
{
  if (options.backend == Backend::CPU || !detail::CudaCompiledIn() || volumes < 2)
  {
    return;
  }
  StartWarmUpThread(options.deviceId, [=] { RunDenoiseWarmUp(volumes, options); });
}

void
WaitForCudaWarmUp() noexcept
{
  if (t_InsideWarmUp)
  {
    return;
  }
  std::thread running;
  {
    WarmUpState &                     state = State();
    const std::lock_guard<std::mutex> lock(state.mutex);
    running = std::move(state.thread);
  }
  if (running.joinable())
  {
    running.join();
  }
}

namespace detail
{
void
NoteCudaDeviceWarm(int deviceId) noexcept
{
  WarmUpState &                     state = State();
  const std::lock_guard<std::mutex> lock(state.mutex);
  if (std::find(state.warmDevices.begin(), state.warmDevices.end(), deviceId) == state.warmDevices.end())
  {
    state.warmDevices.push_back(deviceId);
  }
}

std::vector<int>
TakeWarmCudaDevices() noexcept
{
  const std::lock_guard<std::mutex> lock(State().mutex);
  return std::exchange(State().warmDevices, {});
}

bool
CudaDeviceWarmOrWarming(int deviceId) noexcept
{
  WarmUpState &                     state = State();
  const std::lock_guard<std::mutex> lock(state.mutex);
  return state.running ||
         std::find(state.warmDevices.begin(), state.warmDevices.end(), deviceId) != state.warmDevices.end();
}
} // namespace detail

} // namespace svdlr

