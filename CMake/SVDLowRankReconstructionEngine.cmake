# The ITK-free engine: its sources, its optional CUDA backend and its link dependencies.
# Included by the top-level CMakeLists.txt in every build mode (inside ITK, against an ITK build
# tree, against an installed ITK) and by the Python build, which has no ITK at all.
include_guard(DIRECTORY)

set(SVDLR_ENGINE_SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/../src")
get_filename_component(SVDLR_ENGINE_SOURCE_DIR "${SVDLR_ENGINE_SOURCE_DIR}" ABSOLUTE)
get_filename_component(SVDLR_ENGINE_INCLUDE_DIR "${CMAKE_CURRENT_LIST_DIR}/../include" ABSOLUTE)

# CUDA is optional: ON by default only when a CUDA compiler is found, and -DSVDLR_USE_CUDA=OFF always
# gives a CPU-only build, even on a machine that has the toolkit.
if(NOT DEFINED SVDLR_USE_CUDA)
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(_svdlr_cuda_default ON)
  else()
    set(_svdlr_cuda_default OFF)
  endif()
endif()
option(SVDLR_USE_CUDA "Build the CUDA backend (cuSOLVER + our kernels)" ${_svdlr_cuda_default})

# The CUDA backend's library (libsvdlr_cuda.so): its one name, which the engine's loader looks for, the installs place
# and the backend's tests link.
set(SVDLR_CUDA_BACKEND_TARGET svdlr_cuda)

set(SVDLR_ENGINE_SOURCES
  ${SVDLR_ENGINE_SOURCE_DIR}/slice/svdlrEngine.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/shared/svdlrNames.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/noise/svdlrRankPolicy.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/noise/svdlrRankSelection.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/denoise/svdlrOverlapSchedule.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/shared/svdlrParallel.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/slice/svdlrCpuBackend.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/shared/svdlrCudaWarmUp.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/shared/svdlrBlasThreads.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/shared/svdlrBlasCore.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/denoise/svdlrDenoiseChoices.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/denoise/svdlrLocalDenoise.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/denoise/svdlrLocalDenoiseCpu.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/noise/svdlrPhaseDemodulation.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/noise/svdlrNoiseScan.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/noise/svdlrGFactor.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/noise/svdlrGFactorEstimate.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/noise/svdlrNoncentralChi.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/noise/svdlrSigmaFloorCorrection.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/noise/svdlrMagnitudeNoise.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/denoise/svdlrVolumeGroupMeans.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/denoise/svdlrVolumeGroups.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/denoise/svdlrPatchCentres.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/denoise/svdlrSpherePatch.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/denoise/svdlrPatchGather.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/denoise/svdlrPatchLowRank.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/denoise/svdlrPatchKernels.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/denoise/svdlrGramTiles.cxx
  ${SVDLR_ENGINE_SOURCE_DIR}/denoise/svdlrTridiagonalEigenvalues.cxx
  )

if(SVDLR_USE_CUDA)
  # Architectures: whatever the user gives (CMAKE_CUDA_ARCHITECTURES or the CUDAARCHS environment
  # variable); otherwise every major architecture this toolkit knows, so the default never goes stale.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
    set(CMAKE_CUDA_ARCHITECTURES all-major)
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  include(${SVDLR_ENGINE_SOURCE_DIR}/cuda/sources.cmake) # sets SVDLR_ENGINE_CUDA_SOURCES
  # The engine loads the backend, a library of its own, on first use (svdlr_add_cuda_backend below).
  list(APPEND SVDLR_ENGINE_SOURCES ${SVDLR_ENGINE_SOURCE_DIR}/shared/svdlrCudaBackendLoader.cxx)
else()
  list(APPEND SVDLR_ENGINE_SOURCES ${SVDLR_ENGINE_SOURCE_DIR}/shared/svdlrCudaBackendDisabled.cxx)
endif()

find_package(Threads REQUIRED)
find_package(LAPACK REQUIRED) # also finds BLAS; OpenBLAS or the reference implementation
# oneTBB's pool runs the engine's loops where the caller gives no ParallelFor (svdlrParallel.cxx). Linked by path,
# as LAPACK is, so that the ITK module's exported link interface names no imported target its users must find.
find_path(SVDLR_TBB_INCLUDE_DIR oneapi/tbb/parallel_for.h)
find_library(SVDLR_TBB_LIBRARY NAMES tbb)
if(NOT SVDLR_TBB_INCLUDE_DIR OR NOT SVDLR_TBB_LIBRARY)
  message(FATAL_ERROR "oneTBB not found (Debian: apt-get install libtbb-dev); set SVDLR_TBB_INCLUDE_DIR and SVDLR_TBB_LIBRARY")
endif()

# Adds the engine's include directories, dependencies and settings to `target` (the ITK module
# library, a plain library, or the Python extension). An optional second argument is the keyword for
# private links: ITK's module macros link with LINK_PUBLIC, and CMake forbids mixing that with PRIVATE.
function(svdlr_configure_engine_target target)
  set(private_link PRIVATE)
  if(ARGC GREATER 1)
    set(private_link ${ARGV1})
  endif()
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${SVDLR_ENGINE_INCLUDE_DIR}>
    PRIVATE ${SVDLR_ENGINE_SOURCE_DIR} ${SVDLR_TBB_INCLUDE_DIR})
  target_compile_features(${target} PUBLIC cxx_std_17)
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_link_libraries(${target} ${private_link} ${LAPACK_LIBRARIES} ${BLAS_LIBRARIES} ${SVDLR_TBB_LIBRARY} Threads::Threads
    ${CMAKE_DL_LIBS})
  if(SVDLR_USE_CUDA)
    # No CUDA library here: the loader (svdlrCudaBackendLoader.cxx) opens the backend's file by this name.
    target_compile_definitions(${target} PRIVATE SVDLR_WITH_CUDA=1
      "SVDLR_CUDA_BACKEND_FILE=\"$<TARGET_FILE_NAME:${SVDLR_CUDA_BACKEND_TARGET}>\"")
  endif()
endfunction()

# The CUDA backend as a shared library of its own, ${SVDLR_CUDA_BACKEND_TARGET}, beside the engine's library (or the
# Python module) that loads it. It alone links the CUDA runtime, cuBLAS and cuSOLVER. Its RUNPATH is $ORIGIN; the
# Python build adds where NVIDIA's wheels put those libraries. It exports its entry point (svdlrCudaBackendTable.h)
# and the internal functions that the backend's tests and benchmarks call (SVDLR_CUDA_EXPORT), which link it.
function(svdlr_add_cuda_backend)
  set(target ${SVDLR_CUDA_BACKEND_TARGET})
  add_library(${target} SHARED ${SVDLR_ENGINE_CUDA_SOURCES})
  target_include_directories(${target}
    PUBLIC $<BUILD_INTERFACE:${SVDLR_ENGINE_INCLUDE_DIR}>
    PRIVATE ${SVDLR_ENGINE_SOURCE_DIR} ${SVDLR_ENGINE_SOURCE_DIR}/cuda)
  target_compile_features(${target} PUBLIC cxx_std_17)
  target_compile_definitions(${target} PRIVATE SVDLR_WITH_CUDA=1)
  set_target_properties(${target} PROPERTIES
    CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON
    CUDA_RUNTIME_LIBRARY Shared
    POSITION_INDEPENDENT_CODE ON
    CXX_VISIBILITY_PRESET hidden CUDA_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
    INSTALL_RPATH "$ORIGIN")
  target_link_libraries(${target} PRIVATE CUDA::cudart CUDA::cusolver CUDA::cublas Threads::Threads)
  if(UNIX AND NOT APPLE)
    # Every symbol resolved at link time: an engine function the backend starts to call must go through
    # CudaHostTable (src/cuda/svdlrCudaEngineCalls.cxx), never be left for the loader to find.
    target_link_options(${target} PRIVATE "LINKER:-z,defs")
  endif()
endfunction()
