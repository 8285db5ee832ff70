# The CUDA backend of the ITK-free engine. Included by CMake/SVDLowRankReconstructionEngine.cmake when
# SVDLR_USE_CUDA is ON, after find_package(CUDAToolkit); sets SVDLR_ENGINE_CUDA_SOURCES (absolute paths), the sources of
# the backend's own library (svdlr_add_cuda_backend).
# No ITK header may appear in these files.

# cusolverDnXsyevBatched, the batched eigen-solver the backend is built on, arrived in CUDA 12.6.
if(CUDAToolkit_VERSION VERSION_LESS 12.6)
  message(FATAL_ERROR "The CUDA backend needs CUDA >= 12.6 (cusolverDnXsyevBatched); found ${CUDAToolkit_VERSION}. "
    "Configure with -DSVDLR_USE_CUDA=OFF for a CPU-only build.")
endif()

set(SVDLR_ENGINE_CUDA_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/svdlrCudaEngineCalls.cxx
  ${CMAKE_CURRENT_LIST_DIR}/svdlrCudaDevice.cu
  ${CMAKE_CURRENT_LIST_DIR}/svdlrCudaPipeline.cu
  ${CMAKE_CURRENT_LIST_DIR}/svdlrCudaBatchPlan.cxx
  ${CMAKE_CURRENT_LIST_DIR}/svdlrCudaBatchResults.cxx
  ${CMAKE_CURRENT_LIST_DIR}/svdlrCudaCallerMemory.cxx
  ${CMAKE_CURRENT_LIST_DIR}/svdlrStagingRing.cxx
  ${CMAKE_CURRENT_LIST_DIR}/svdlrCudaResourceCache.cxx
  ${CMAKE_CURRENT_LIST_DIR}/svdlrDeviceAllocationFaults.cxx
  ${CMAKE_CURRENT_LIST_DIR}/svdlrPinnedHost.cxx
  ${CMAKE_CURRENT_LIST_DIR}/svdlrEigenSolver.cxx
  ${CMAKE_CURRENT_LIST_DIR}/svdlrSubspacePlan.cxx
  ${CMAKE_CURRENT_LIST_DIR}/svdlrSubspaceIteration.cu
  ${CMAKE_CURRENT_LIST_DIR}/svdlrSubspaceCheck.cu
  ${CMAKE_CURRENT_LIST_DIR}/svdlrExactRedo.cxx
  ${CMAKE_CURRENT_LIST_DIR}/svdlrGramKernels.cu
  ${CMAKE_CURRENT_LIST_DIR}/svdlrFactorKernels.cu
  ${CMAKE_CURRENT_LIST_DIR}/svdlrReconstructionKernels.cu
  ${CMAKE_CURRENT_LIST_DIR}/svdlrSmallEigenSolver.cu
  ${CMAKE_CURRENT_LIST_DIR}/svdlrLocalDenoiseSlabKernels.cu
  ${CMAKE_CURRENT_LIST_DIR}/svdlrLocalDenoiseGramKernels.cu
  ${CMAKE_CURRENT_LIST_DIR}/svdlrLocalDenoiseRankKernels.cu
  ${CMAKE_CURRENT_LIST_DIR}/svdlrLocalDenoiseApproximationKernels.cu
  ${CMAKE_CURRENT_LIST_DIR}/svdlrCudaLocalDenoiseRules.cxx
  ${CMAKE_CURRENT_LIST_DIR}/svdlrLocalDenoisePlan.cxx
  ${CMAKE_CURRENT_LIST_DIR}/svdlrLocalDenoiseBuffers.cxx
  ${CMAKE_CURRENT_LIST_DIR}/svdlrLocalDenoiseResources.cxx
  ${CMAKE_CURRENT_LIST_DIR}/svdlrLocalDenoiseTransfers.cxx
  ${CMAKE_CURRENT_LIST_DIR}/svdlrMagnitudeTransformCuda.cxx
  ${CMAKE_CURRENT_LIST_DIR}/svdlrCudaLocalDenoiser.cxx
  ${CMAKE_CURRENT_LIST_DIR}/svdlrLocalDenoiseCuda.cxx
  )
