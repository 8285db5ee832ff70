# The module's description comes from the first paragraph of README.md, as ITK's modules do.
get_filename_component(MY_CURRENT_DIR "${CMAKE_CURRENT_LIST_FILE}" PATH)
file(READ "${MY_CURRENT_DIR}/README.md" DOCUMENTATION)
string(REGEX REPLACE "^#[^\n]*\n+" "" DOCUMENTATION "${DOCUMENTATION}")
string(REGEX REPLACE "\n\n.*" "" DOCUMENTATION "${DOCUMENTATION}")

itk_module(SVDLowRankReconstruction
  DEPENDS
    ITKCommon
  TEST_DEPENDS
    ITKTestKernel
    ITKGoogleTest
    ITKIOImageBase
    ITKIONIFTI
    ITKIOPNG
    ITKIOMeta
  DESCRIPTION
    "${DOCUMENTATION}"
  EXCLUDE_FROM_DEFAULT
  ENABLE_SHARED
)
