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
#ifndef svdlr_CudaTestHooks_h
#define svdlr_CudaTestHooks_h

// Entry points for tests (and later benchmarks) into the CUDA backend's kernels, with host vectors in and
// out so that test code needs neither CUDA headers nor nvcc. Not part of the engine's API.

#include "svdlrCudaExport.h"
#include "svdlrDeviceAllocationFaults.h"
#include "svdlrCudaPipeline.h"
#include "svdlr/Engine.h"

#include <cstdint>
#include <string>
#include <vector>


namespace svdlr
{
namespace detail
{
namespace testing
{

enum class ProductKernel
{
  Tiled, // the engine's kernel
  Naive  // the reference: one thread per output pixel
};

/** R = P Q^T per matrix with per-matrix ranks, on `deviceId` (see svdlrLowRankProduct.h for the layouts):
 * p (count, rows, components) and q (count, cols, components) column-major per matrix, ranks (count).
 * Returns (count, rows, cols) row-major. Throws svdlr::Error on any CUDA failure. */
// clang-format 14 misreads the export macro before a template return type; this one is formatted by hand.
// clang-format off
template <typename TOut>
SVDLR_CUDA_EXPORT std::vector<TOut>
RunLowRankProduct(ProductKernel               kernel,
                  const std::vector<double> & p,
                  const std::vector<double> & q,
                  const std::vector<int> &    ranks,
                  std::int64_t                rows,
                  std::int64_t                cols,
                  std::int64_t                components,
                  int                         deviceId);
// clang-format on

/** The subspace solver's orthonormalisation (svdlrSubspaceIteration.h) on `count` column-major n x w blocks
 * `z` (host), on `deviceId`; returns the orthonormalised blocks. */
SVDLR_CUDA_EXPORT std::vector<double>
RunOrthonormalize(const std::vector<double> & z, std::int64_t n, std::int64_t w, std::int64_t count, int deviceId);

/** The CUDA backend on a valid request (no front-end validation), returning where the host's time went.
 * `report` must be sized to input.count as the front end would. */
template <typename T>
SVDLR_CUDA_EXPORT CudaPipelineTrace
ReconstructWithTrace(const MatrixBatch<const T> & input, const MatrixBatch<T> & output, const Options & options,
                     Report & report, const CudaPipelineTuning & tuning);

/** How ReconstructThroughDevice hands its device copies to svdlr::ReconstructOnDevice. */
struct DeviceRun
{
  bool inPlace{ false }; // one device buffer serves as input and output
  // The input reaches its device buffer only through work queued on a stream of the hook's own (a ~20 ms
  // spin, then the copy), and the engine is given that stream: reading early would read NaN poison.
  bool callerStream{ false };
};

/** Copies `input` (host) to device memory with the same layout, runs svdlr::ReconstructOnDevice on it,
 * and copies the device result back to `output` (host; in place it must have the input's stride).
 * Returns the engine's report; throws what the engine throws. */
template <typename T>
SVDLR_CUDA_EXPORT Report
ReconstructThroughDevice(const MatrixBatch<const T> & input, const MatrixBatch<T> & output, const Options & options,
                         const DeviceRun & run);


/** While in scope, device allocations fail as on a full device (cudaErrorMemoryAllocation, through
 * svdlrDeviceAllocationFaults.h): the next `succeed` pass, then `failures` fail (every later one when negative).
 * Process-wide; cached device resources allocate nothing, so release them (svdlr::ReleaseCudaResources) first. */
class ScopedDeviceAllocationFaults
{
public:
  ScopedDeviceAllocationFaults(std::int64_t succeed, std::int64_t failures)
  {
    DeviceAllocationFaults().Arm(succeed, failures);
  }
  ~ScopedDeviceAllocationFaults() { DeviceAllocationFaults().Disarm(); }
  ScopedDeviceAllocationFaults(const ScopedDeviceAllocationFaults &) = delete;
  ScopedDeviceAllocationFaults &
  operator=(const ScopedDeviceAllocationFaults &) = delete;

  /** Device allocations counted since construction, and how many of them were made to fail. */
  std::int64_t
  Seen() const
  {
    return DeviceAllocationFaults().Seen();
  }
  std::int64_t
  Failed() const
  {
    return DeviceAllocationFaults().Failed();
  }
};

} // namespace testing
} // namespace detail
} // namespace svdlr

#endif
