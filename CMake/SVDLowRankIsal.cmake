# ISA-L (Debian: libisal-dev), optional: the .nii.gz writers compress at their default level (1) with its igzip, about
# seven times libdeflate's level 1 a core for the same size (apps/io/SVDLowRankGzip.cxx), and the gunzip benchmark
# times its decoder. SVDLR_USE_ISAL: AUTO (the default: where found), ON (required) or OFF (libdeflate alone). Sets
# SVDLR_ISAL_FOUND (cached, so that every directory sees it), SVDLR_ISAL_INCLUDE_DIR and SVDLR_ISAL_LIBRARY.
# Included by CMake/SVDLowRankIO.cmake and benchmarks/CMakeLists.txt.
include_guard(GLOBAL)

set(SVDLR_USE_ISAL AUTO CACHE STRING "Compress .nii.gz outputs with ISA-L's igzip: AUTO (where found), ON or OFF")
set_property(CACHE SVDLR_USE_ISAL PROPERTY STRINGS AUTO ON OFF)
set(SVDLR_ISAL_FOUND FALSE CACHE INTERNAL "")
if(NOT SVDLR_USE_ISAL STREQUAL "OFF")
  find_path(SVDLR_ISAL_INCLUDE_DIR isa-l/igzip_lib.h)
  find_library(SVDLR_ISAL_LIBRARY isal)
  if(SVDLR_ISAL_INCLUDE_DIR AND SVDLR_ISAL_LIBRARY)
    set(SVDLR_ISAL_FOUND TRUE CACHE INTERNAL "")
  elseif(SVDLR_USE_ISAL STREQUAL "ON")
    message(FATAL_ERROR "SVDLR_USE_ISAL=ON, but ISA-L was not found (Debian: libisal-dev; scripts/install-deps.sh "
                        "installs it). Install it, point CMAKE_PREFIX_PATH at it, or configure with AUTO or OFF.")
  endif()
endif()
if(SVDLR_ISAL_FOUND)
  message(STATUS "SVDLowRankReconstruction: .nii.gz outputs compressed by ISA-L's igzip at level 1")
else()
  message(STATUS "SVDLowRankReconstruction: .nii.gz outputs compressed by libdeflate (no ISA-L)")
endif()
