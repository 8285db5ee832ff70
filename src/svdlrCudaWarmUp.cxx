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

#include "svdlrBackends.h"
#include "svdlrCudaWarmUp.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace svdlr
{
namespace
{

struct WarmUpState
{
  std::mutex       mutex;
  std::thread      thread;
  bool             running{ false };
  std::vector<int> warmDevices;
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

void
StartCudaWarmUp(std::size_t count, std::size_t rows, std::size_t cols, const Options & options, bool doublePrecision)
{
  if (options.backend == Backend::CPU || !detail::CudaCompiledIn() || count == 0 || rows == 0 || cols == 0)
  {
    return;
  }
  if (const char * setting = std::getenv("SVDLR_CUDA_WARMUP"); setting != nullptr && std::string(setting) == "0")
  {
    return; // the user's opt-out, and how docs/performance.md measures what the warm-up saves
  }
  if (options.backend == Backend::Auto && detail::AutoPrefersCpuWhenCold(count, rows, cols, options))
  {
    return; // Auto will run this job on the CPU: warming the GPU would only delay the exit
  }
  WarmUpState &                     state = State();
  const std::lock_guard<std::mutex> lock(state.mutex);
  if (state.thread.joinable())
  {
    return;
  }
  if (std::find(state.warmDevices.begin(), state.warmDevices.end(), options.deviceId) != state.warmDevices.end())
  {
    return;
  }
  // A process that ends while the warm-up runs must join it before the CUDA runtime is torn down.
  static const int registered = std::atexit(JoinAtExit);
  (void)registered;
  state.running = true;
  state.thread = std::thread([=] {
    t_InsideWarmUp = true;
    try
    {
      if (doublePrecision)
      {
        RunWarmUp<double>(count, rows, cols, options);
      }
      else
      {
        RunWarmUp<float>(count, rows, cols, options);
      }
    }
    catch (...)
    {
      // Dropped on purpose: the real call meets the same problem and reports it with its own context.
    }
    const std::lock_guard<std::mutex> done(State().mutex);
    State().running = false;
  });
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
bool
CudaWarmUpRunning() noexcept
{
  const std::lock_guard<std::mutex> lock(State().mutex);
  return State().running;
}

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
