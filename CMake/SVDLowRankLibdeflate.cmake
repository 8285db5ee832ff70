# libdeflate (Debian: libdeflate-dev), for the tools' .nii.gz reading and writing (apps/io/SVDLowRankGzip.h) and the
# file checks the Python extension shares with them: SVDLR_LIBDEFLATE_INCLUDE_DIR and SVDLR_LIBDEFLATE_LIBRARY, or a
# fatal error that says how to get it. Included by apps/CMakeLists.txt and python/CMakeLists.txt.
include_guard(GLOBAL)

find_path(SVDLR_LIBDEFLATE_INCLUDE_DIR libdeflate.h)
find_library(SVDLR_LIBDEFLATE_LIBRARY NAMES deflate libdeflate)
if(NOT SVDLR_LIBDEFLATE_INCLUDE_DIR OR NOT SVDLR_LIBDEFLATE_LIBRARY)
  message(FATAL_ERROR "The tools (apps/) and the Python extension's file checks need libdeflate (Debian: "
                      "libdeflate-dev; scripts/install-deps.sh installs it). Install it, point CMAKE_PREFIX_PATH at "
                      "it, or configure the tools off with -DSVDLR_BUILD_APPS=OFF.")
endif()
