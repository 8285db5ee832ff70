# nifti_clib (Debian: libnifti2-dev), the NIfTI-1 and NIfTI-2 header codec of apps/io/SVDLowRankNiftiFormat.cxx:
# SVDLR_NIFTI_INCLUDE_DIR, SVDLR_NIFTI_LIBRARIES and svdlr_link_nifti(), or a fatal error that says how to get it.
# Included by apps/CMakeLists.txt and python/CMakeLists.txt.
#
# The tools take the static archives: ITK 5.2 bundles NIfTI-1's niftilib under the same C names (nifti_image_read,
# nifti_image_free, ...) with another nifti_image, so the archives are linked with their symbols hidden
# (--exclude-libs): the codec calls nifti_clib's, ITK's NIfTI reader its own. With a shared libnifti2 one of the two
# would take the other's calls. The Python extension (SVDLR_NIFTI_SHARED ON) takes the shared libraries: Debian's
# archives are built without -fPIC, so they cannot go into a shared object; the extension links no ITK, and is loaded
# RTLD_LOCAL, so its libnifti2 stays apart from an `itk` wheel's niftilib (auditwheel copies it into the wheel).
include_guard(GLOBAL)

find_path(SVDLR_NIFTI_INCLUDE_DIR nifti2_io.h PATH_SUFFIXES nifti)
if(SVDLR_NIFTI_SHARED) # cache variables of their own: a build folder that had the archives switches over
  find_library(SVDLR_NIFTI2_SHARED_LIBRARY NAMES nifti2)
  find_library(SVDLR_ZNZ_SHARED_LIBRARY NAMES znz)
  set(SVDLR_NIFTI2_LIBRARY ${SVDLR_NIFTI2_SHARED_LIBRARY})
  set(SVDLR_ZNZ_LIBRARY ${SVDLR_ZNZ_SHARED_LIBRARY})
else()
  find_library(SVDLR_NIFTI2_LIBRARY NAMES libnifti2.a nifti2)
  find_library(SVDLR_ZNZ_LIBRARY NAMES libznz.a znz)
endif()
if(NOT SVDLR_NIFTI_INCLUDE_DIR OR NOT SVDLR_NIFTI2_LIBRARY OR NOT SVDLR_ZNZ_LIBRARY)
  message(FATAL_ERROR "The tools (apps/) and the Python extension read NIfTI headers through nifti_clib (Debian: "
                      "libnifti2-dev; scripts/install-deps.sh installs it). Install it, point CMAKE_PREFIX_PATH at "
                      "it, or configure the tools off with -DSVDLR_BUILD_APPS=OFF.")
endif()
if(NOT SVDLR_NIFTI_SHARED AND NOT SVDLR_NIFTI2_LIBRARY MATCHES "\\.a$")
  message(WARNING "nifti_clib is linked shared (${SVDLR_NIFTI2_LIBRARY}): where ITK's own niftilib exports the same "
                  "names (ITK 5.2), the tools need the static archive libnifti2.a.")
endif()
find_package(ZLIB REQUIRED) # znzlib's gzip files
set(SVDLR_NIFTI_LIBRARIES ${SVDLR_NIFTI2_LIBRARY} ${SVDLR_ZNZ_LIBRARY} ZLIB::ZLIB m)

# Links `target` (ITK-free: nifti2_io.h must not meet ITK's nifti1_io.h) to nifti_clib, with its include folder first
# (ahead of ITK's, which holds ITK's own znzlib.h), and hides the archives' symbols in whatever links `target`.
function(svdlr_link_nifti target)
  target_include_directories(${target} BEFORE PRIVATE ${SVDLR_NIFTI_INCLUDE_DIR})
  target_link_libraries(${target} PRIVATE ${SVDLR_NIFTI_LIBRARIES})
  if(UNIX AND NOT APPLE AND SVDLR_NIFTI2_LIBRARY MATCHES "\\.a$")
    get_filename_component(_nifti2 ${SVDLR_NIFTI2_LIBRARY} NAME)
    get_filename_component(_znz ${SVDLR_ZNZ_LIBRARY} NAME)
    target_link_options(${target} INTERFACE "LINKER:--exclude-libs=${_nifti2}:${_znz}")
  endif()
endfunction()
