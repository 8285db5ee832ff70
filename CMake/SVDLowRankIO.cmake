# The I/O library's ITK-free half, SVDLowRankIOCore: one target, defined here, that the tools (apps/CMakeLists.txt,
# which adds SVDLowRankIO on top: ITK's readers and writers, PNG stacks, DICOM) and the Python extension
# (python/CMakeLists.txt, which has no ITK) link. It holds:
#  - the raw image-file checks (truncation, NaN in NIfTI) with the NIfTI reader of headers (nifti_clib:
#    CMake/SVDLowRankNifti.cmake) and decompressed files they use, and the .nii.gz decompression and compression
#    (libdeflate and zlib, and ISA-L's igzip where found: apps/io/SVDLowRankGzip.h);
#  - the gradient-table rule (a .bval/.bvec against the series' volumes) that the denoiser checks up front;
#  - folder listing and the rule for stale partial outputs (a dead process's hidden temporaries);
#  - the batch rules (apps/batch: which inputs, where their outputs go) and the batch pipeline's stages and threads,
#    without DICOM (the tools give the DICOM series search: InputSelection::addDicomSeries).
# svdlr_add_io_core(ENGINE) adds it, linking ENGINE: the module's library in the tools' build, svdlr_engine in Python's.
include_guard(DIRECTORY)
include(${CMAKE_CURRENT_LIST_DIR}/SVDLowRankLibdeflate.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/SVDLowRankIsal.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/SVDLowRankNifti.cmake)
find_package(ZLIB REQUIRED) # the raw-data checks (zlib's streaming inflate) and the CRC of chunks joined
find_package(Threads REQUIRED)

get_filename_component(SVDLR_IO_DIR "${CMAKE_CURRENT_LIST_DIR}/../apps/io" ABSOLUTE)
get_filename_component(SVDLR_BATCH_DIR "${CMAKE_CURRENT_LIST_DIR}/../apps/batch" ABSOLUTE)

function(svdlr_add_io_core engine)
  add_library(SVDLowRankIOCore STATIC
    ${SVDLR_IO_DIR}/SVDLowRankFolderFiles.cxx
    ${SVDLR_IO_DIR}/SVDLowRankGradientTable.cxx
    ${SVDLR_IO_DIR}/SVDLowRankGunzipCheck.cxx
    ${SVDLR_IO_DIR}/SVDLowRankGzip.cxx
    ${SVDLR_IO_DIR}/SVDLowRankGzipFile.cxx
    ${SVDLR_IO_DIR}/SVDLowRankImageFileCheck.cxx
    ${SVDLR_IO_DIR}/SVDLowRankNiftiHeaderRead.cxx
    ${SVDLR_IO_DIR}/SVDLowRankInflateChunk.cxx
    ${SVDLR_IO_DIR}/SVDLowRankInflateTables.cxx
    ${SVDLR_IO_DIR}/SVDLowRankInterruptCleanup.cxx
    ${SVDLR_IO_DIR}/SVDLowRankNiftiBytes.cxx
    ${SVDLR_IO_DIR}/SVDLowRankNiftiFormat.cxx
    ${SVDLR_IO_DIR}/SVDLowRankNiftiVoxels.cxx
    ${SVDLR_IO_DIR}/SVDLowRankParallelGunzip.cxx
    ${SVDLR_IO_DIR}/SVDLowRankReadableFile.cxx
    ${SVDLR_BATCH_DIR}/SVDLowRankBatchBuffers.cxx
    ${SVDLR_BATCH_DIR}/SVDLowRankBatchInputs.cxx
    ${SVDLR_BATCH_DIR}/SVDLowRankBatchStages.cxx)
  # oneTBB's headers are public: SVDLowRankNiftiVoxels.h and SVDLowRankBatchQueue.h are templates over them.
  target_include_directories(SVDLowRankIOCore PUBLIC ${SVDLR_IO_DIR} ${SVDLR_BATCH_DIR} ${SVDLR_TBB_INCLUDE_DIR}
    PRIVATE ${SVDLR_LIBDEFLATE_INCLUDE_DIR})
  target_compile_features(SVDLowRankIOCore PUBLIC cxx_std_17)
  # Position-independent: the Python extension is a shared object.
  set_target_properties(SVDLowRankIOCore PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_link_libraries(SVDLowRankIOCore PUBLIC ${engine} Threads::Threads
    PRIVATE ${SVDLR_LIBDEFLATE_LIBRARY} ZLIB::ZLIB ${SVDLR_TBB_LIBRARY}) # oneTBB: SVDLowRankReconstructionEngine.cmake finds it
  if(SVDLR_ISAL_FOUND)
    target_compile_definitions(SVDLowRankIOCore PRIVATE SVDLR_HAVE_ISAL=1)
    target_include_directories(SVDLowRankIOCore PRIVATE ${SVDLR_ISAL_INCLUDE_DIR})
    target_link_libraries(SVDLowRankIOCore PRIVATE ${SVDLR_ISAL_LIBRARY})
  endif()
  svdlr_link_nifti(SVDLowRankIOCore)
endfunction()
