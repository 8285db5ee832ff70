# Build mode 3: against an installed ITK, with plain CMake targets, an install rule and a package
# config so consumers can find_package(SVDLowRankReconstruction) and link it.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

option(BUILD_SHARED_LIBS "Build the engine as a shared library" ON)
option(BUILD_TESTING "Build the tests" ON)

set(SVDLR_INSTALL_INCLUDE_DIR ${CMAKE_INSTALL_INCLUDEDIR}/SVDLowRankReconstruction)
set(SVDLR_INSTALL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/SVDLowRankReconstruction)

add_library(SVDLowRankReconstruction ${SVDLR_ENGINE_SOURCES})
add_library(SVDLowRankReconstruction::SVDLowRankReconstruction ALIAS SVDLowRankReconstruction)
svdlr_configure_engine_target(SVDLowRankReconstruction)
# The library is the ITK-free engine and links no ITK, so engine-only programs (the GPU tests, the
# benchmark, the Python module) stay free of it. Programs that use the filter link ${ITK_LIBRARIES} too;
# the package config finds ITK for them.
target_include_directories(SVDLowRankReconstruction PUBLIC
  $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${SVDLR_INSTALL_INCLUDE_DIR}>)
set_target_properties(SVDLowRankReconstruction PROPERTIES
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
  EXPORT_NAME SVDLowRankReconstruction)

set(_svdlr_installed_libraries SVDLowRankReconstruction)
if(SVDLR_USE_CUDA)
  # The CUDA backend, which the engine loads from its own folder on first use: built and installed beside it.
  svdlr_add_cuda_backend()
  list(APPEND _svdlr_installed_libraries ${SVDLR_CUDA_BACKEND_TARGET})
endif()

install(TARGETS ${_svdlr_installed_libraries} EXPORT SVDLowRankReconstructionTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/ DESTINATION ${SVDLR_INSTALL_INCLUDE_DIR})
install(EXPORT SVDLowRankReconstructionTargets NAMESPACE SVDLowRankReconstruction::
  DESTINATION ${SVDLR_INSTALL_CMAKE_DIR})
string(REPLACE ";" " " SVDLR_ITK_COMPONENTS_STRING "${SVDLR_ITK_COMPONENTS}")
configure_package_config_file(${CMAKE_CURRENT_SOURCE_DIR}/CMake/SVDLowRankReconstructionConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/SVDLowRankReconstructionConfig.cmake
  INSTALL_DESTINATION ${SVDLR_INSTALL_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/SVDLowRankReconstructionConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/SVDLowRankReconstructionConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/SVDLowRankReconstructionConfigVersion.cmake
  DESTINATION ${SVDLR_INSTALL_CMAKE_DIR})

if(BUILD_TESTING)
  enable_testing()
  add_subdirectory(test)
endif()
