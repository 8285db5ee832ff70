# Writes svdlrBuildInfo.h, the version and `git describe` that the tools' provenance sidecars name. Run by
# apps/CMakeLists.txt at every build (cmake -P), it rewrites the header only when its text changes, so that a build
# with nothing new recompiles nothing. Inputs: SOURCE_DIR, OUTPUT, VERSION, GIT (may be empty).
set(describe "unknown (not built from a git checkout)")
if(GIT)
  execute_process(COMMAND ${GIT} describe --tags --always --dirty
    WORKING_DIRECTORY ${SOURCE_DIR}
    OUTPUT_VARIABLE git_describe OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_QUIET RESULT_VARIABLE git_result)
  if(git_result EQUAL 0 AND NOT git_describe STREQUAL "")
    set(describe "${git_describe}")
  endif()
endif()
set(text "// Generated at build time by CMake/SVDLowRankBuildInfo.cmake: do not edit.\n"
         "#define SVDLR_VERSION \"${VERSION}\"\n"
         "#define SVDLR_GIT_DESCRIBE \"${describe}\"\n")
string(CONCAT text ${text})
set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUTPUT}" "${text}")
endif()
