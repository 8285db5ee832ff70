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
#ifndef svdlr_CudaCheck_h
#define svdlr_CudaCheck_h

// Turns CUDA, cuBLAS and cuSOLVER status codes into svdlr::Error. Every call into those libraries in
// the CUDA backend goes through one of the macros below, so a failure always names the call that
// failed, the library's own error string and where in our code it happened.

#include "svdlr/Engine.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include <string>

namespace svdlr
{
namespace detail
{

/** cuSOLVER has no status-to-string function; this is the list from cusolver_common.h. */
inline const char *
CusolverStatusString(cusolverStatus_t status)
{
  switch (status)
  {
    case CUSOLVER_STATUS_SUCCESS:
      return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED:
      return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED:
      return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE:
      return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH:
      return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_EXECUTION_FAILED:
      return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR:
      return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED:
      return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSOLVER_STATUS_NOT_SUPPORTED:
      return "CUSOLVER_STATUS_NOT_SUPPORTED";
    case CUSOLVER_STATUS_INVALID_LICENSE:
      return "CUSOLVER_STATUS_INVALID_LICENSE";
    case CUSOLVER_STATUS_INVALID_WORKSPACE:
      return "CUSOLVER_STATUS_INVALID_WORKSPACE";
    default:
      return "unknown cuSOLVER status";
  }
}

inline std::string
FormatFailure(const char * call, const std::string & what, const char * file, int line)
{
  return std::string("svdlr CUDA backend: ") + call + " failed: " + what + " (" + file + ":" + std::to_string(line) +
         ")";
}

/** Memory exhaustion gets its own code so that callers can tell it from a broken device. */
inline void
CheckCuda(cudaError_t status, const char * call, const char * file, int line)
{
  if (status == cudaSuccess)
  {
    return;
  }
  // The runtime also keeps a failure in the thread's last-error slot, where the next launch check would find it and
  // blame its kernel: reported here, it is taken out of there (a sticky error stays, as it should).
  (void)cudaGetLastError();
  const std::string what = std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
  const ErrorCode   code = status == cudaErrorMemoryAllocation ? ErrorCode::OutOfMemory : ErrorCode::DeviceFailure;
  throw Error(code, FormatFailure(call, what, file, line));
}

inline void
CheckCublas(cublasStatus_t status, const char * call, const char * file, int line)
{
  if (status == CUBLAS_STATUS_SUCCESS)
  {
    return;
  }
  const ErrorCode code = status == CUBLAS_STATUS_ALLOC_FAILED ? ErrorCode::OutOfMemory : ErrorCode::DeviceFailure;
  throw Error(code, FormatFailure(call, cublasGetStatusString(status), file, line));
}

inline void
CheckCusolver(cusolverStatus_t status, const char * call, const char * file, int line)
{
  if (status == CUSOLVER_STATUS_SUCCESS)
  {
    return;
  }
  const ErrorCode code = status == CUSOLVER_STATUS_ALLOC_FAILED ? ErrorCode::OutOfMemory : ErrorCode::DeviceFailure;
  throw Error(code, FormatFailure(call, CusolverStatusString(status), file, line));
}

/** A kernel launch reports configuration errors only through cudaGetLastError(); call this right after
 * every <<<...>>>. */
inline void
CheckLaunch(const char * kernel, const char * file, int line)
{
  CheckCuda(cudaGetLastError(), kernel, file, line);
}

} // namespace detail
} // namespace svdlr

// Macros only because they capture the text of the call and its location; everything else is functions.
#define SVDLR_CUDA_CHECK(call) ::svdlr::detail::CheckCuda((call), #call, __FILE__, __LINE__)
#define SVDLR_CUBLAS_CHECK(call) ::svdlr::detail::CheckCublas((call), #call, __FILE__, __LINE__)
#define SVDLR_CUSOLVER_CHECK(call) ::svdlr::detail::CheckCusolver((call), #call, __FILE__, __LINE__)
#define SVDLR_CUDA_CHECK_LAUNCH(kernelName) ::svdlr::detail::CheckLaunch(kernelName, __FILE__, __LINE__)

#endif
