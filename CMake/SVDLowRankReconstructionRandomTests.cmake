# svdlr_discover_gtests(target [RANDOM gtest-filter...] [PROPERTIES name value...]): GoogleTest's discovery of
# `target`'s tests, where the tests that the RANDOM filters name get the CTest label "random".
#
# "random" marks the tests whose checks hold in the statistics of their fresh random draws (a σ estimate, a rank, a
# denoising ratio) rather than on every draw up to rounding; each states next to its tolerance the spread measured
# over many seeds (test/seed-spread/). CI runs them again, each until it fails or 20 times (.ci/run), so that a
# tolerance narrower than the real spread shows up there, with the seed to replay it, instead of now and then.
function(svdlr_discover_gtests target)
  cmake_parse_arguments(arg "" "" "RANDOM;PROPERTIES" ${ARGN})
  set(properties)
  if(arg_PROPERTIES)
    set(properties PROPERTIES ${arg_PROPERTIES})
  endif()
  # TEST_FILTER is CMake 3.22's: older ones discover every test once, without the label.
  if(NOT arg_RANDOM OR CMAKE_VERSION VERSION_LESS 3.22)
    gtest_discover_tests(${target} DISCOVERY_TIMEOUT 60 ${properties})
    return()
  endif()
  list(JOIN arg_RANDOM ":" filter)
  gtest_discover_tests(${target} DISCOVERY_TIMEOUT 60 TEST_FILTER "${filter}"
    PROPERTIES LABELS random ${arg_PROPERTIES})
  gtest_discover_tests(${target} DISCOVERY_TIMEOUT 60 TEST_FILTER "-${filter}" ${properties})
endfunction()
