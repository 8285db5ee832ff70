# Included by ITK's Wrapping/CMakeLists.txt right after its project(WrapITK), through CMAKE_PROJECT_WrapITK_INCLUDE
# (set by .ci/build-itk-wrapping.sh when WRAP_CXX_FLAGS_RELEASE is not empty). In that directory scope only, i.e.
# for the SWIG-generated glue of ITK's Python modules, not for ITK's libraries (which keep -O3 and the ccache
# entries of the non-wrapped builds):
# - the glue, which mostly forwards calls, is compiled with SVDLR_WRAP_CXX_FLAGS_RELEASE (-O0 by default: on two
#   shared cores each of these large files took minutes at -O1);
# - no link-time optimization: ITK 5.2 turns it on for every Python module that check_ipo_supported() allows, and
#   the LTO links are the slowest steps of the build on two cores. check_ipo_supported() is told that CMake has no
#   IPO for these compilers, so it answers no.
if(DEFINED SVDLR_WRAP_CXX_FLAGS_RELEASE)
  set(CMAKE_CXX_FLAGS_RELEASE "${SVDLR_WRAP_CXX_FLAGS_RELEASE}")
  set(_CMAKE_C_IPO_SUPPORTED_BY_CMAKE NO)
  set(_CMAKE_CXX_IPO_SUPPORTED_BY_CMAKE NO)
endif()
