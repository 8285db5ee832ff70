# Where the real test data is: reads test/test-data.env (KEY=VALUE lines; an environment variable of the same
# name overrides a line) into cache variables and into SVDLR_TEST_DATA_DEFINITIONS, the compile definitions
# that test/support/svdlrTestData.h reads. Included by every CMakeLists.txt that builds tests or tools.
include_guard(GLOBAL)

file(STRINGS "${CMAKE_CURRENT_LIST_DIR}/../test/test-data.env" _svdlr_test_data_lines REGEX "^[A-Z0-9_]+=")
set(SVDLR_TEST_DATA_DEFINITIONS "")
foreach(_line IN LISTS _svdlr_test_data_lines)
  string(REGEX REPLACE "=.*" "" _key "${_line}")
  string(REGEX REPLACE "^[^=]*=" "" _value "${_line}")
  if(DEFINED ENV{${_key}})
    set(_value "$ENV{${_key}}")
  endif()
  set(${_key} "${_value}" CACHE PATH "Test data (test/test-data.env)")
  list(APPEND SVDLR_TEST_DATA_DEFINITIONS "${_key}=\"${${_key}}\"")
endforeach()
