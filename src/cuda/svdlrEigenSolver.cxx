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
#include "svdlrEigenSolver.h"

#include "svdlrCudaCheck.h"

namespace svdlr
{
namespace detail
{

EigenWorkspaceSize
QueryEigenWorkspace(cusolverDnHandle_t handle, cusolverDnParams_t params, std::int64_t n, std::int64_t count,
                    cusolverEigMode_t mode)
{
  // The size query reads no matrix data, so it can run before anything is allocated (the batch planner
  // needs that). cuSOLVER's documentation does not promise that null data pointers are accepted, so if the
  // query with null pointers is refused, it is asked again with a dummy host address it will not read.
  EigenWorkspaceSize size;
  const auto         query = [&](const void * a, const void * w) {
    return cusolverDnXsyevBatched_bufferSize(handle,
                                             params,
                                             mode,
                                             CUBLAS_FILL_MODE_LOWER,
                                             n,
                                             CUDA_R_64F,
                                             a,
                                             n,
                                             CUDA_R_64F,
                                             w,
                                             CUDA_R_64F,
                                             &size.deviceBytes,
                                             &size.hostBytes,
                                             count);
  };
  if (query(nullptr, nullptr) != CUSOLVER_STATUS_SUCCESS)
  {
    static const double placeholder = 0.0;
    SVDLR_CUSOLVER_CHECK(query(&placeholder, &placeholder));
  }
  return size;
}

void
SolveSymmetricEigenBatched(cusolverDnHandle_t handle, cusolverDnParams_t params, double * matrices,
                           double * eigenvalues, int * info, std::int64_t n, std::int64_t count, void * deviceWorkspace,
                           std::size_t deviceWorkspaceBytes, void * hostWorkspace, std::size_t hostWorkspaceBytes,
                           cusolverEigMode_t mode)
{
  SVDLR_CUSOLVER_CHECK(cusolverDnXsyevBatched(handle,
                                              params,
                                              mode,
                                              CUBLAS_FILL_MODE_LOWER,
                                              n,
                                              CUDA_R_64F,
                                              matrices,
                                              n,
                                              CUDA_R_64F,
                                              eigenvalues,
                                              CUDA_R_64F,
                                              deviceWorkspace,
                                              deviceWorkspaceBytes,
                                              hostWorkspace,
                                              hostWorkspaceBytes,
                                              info,
                                              count));
}

} // namespace detail
} // namespace svdlr
