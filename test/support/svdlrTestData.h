/*=========================================================================
 *
 *  Copyright SVDLowRankReconstruction contributors
 *
 *  Licensed under the Apache License, Version 2.0 (the "License");
 *  you may not use this file except in compliance with the License.
 *  You may obtain a copy of the License at
 *
 *         https://www.apache.org/licenses/LICENSE-2.0.txt
 *
 *  Unless required by applicable law or agreed to in writing, software
 *  distributed under the License is distributed on an "AS IS" BASIS,
 *  WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 *  See the License for the specific language governing permissions and
 *  limitations under the License.
 *
 *=========================================================================*/
#ifndef svdlr_TestData_h
#define svdlr_TestData_h

// Real data for the C++ tests, from the paths in test/test-data.env (compile definitions set by
// CMake/SVDLowRankReconstructionTestData.cmake). A missing file skips its test with a message, or fails it when
// SVDLR_REQUIRE_TEST_DATA=1 (CI sets it, so that missing data can never pass silently).

#include "gtest/gtest.h"

#include <cstdlib>
#include <fstream>
#include <string>

namespace svdlr_test
{

/** True when SVDLR_REQUIRE_TEST_DATA=1: missing data and missing helper programs are failures, not skips. */
inline bool
TestDataRequired()
{
  const char * require = std::getenv("SVDLR_REQUIRE_TEST_DATA");
  return require != nullptr && std::string(require) == "1";
}

/** `path` when it names a readable file; otherwise "" after a failure (when required) naming what is missing. */
inline std::string
ExistingTestFile(const std::string & path, const std::string & howToGetIt)
{
  if (!path.empty() && std::ifstream(path).good())
  {
    return path;
  }
  if (TestDataRequired())
  {
    ADD_FAILURE() << "required test data missing: '" << path << "' (" << howToGetIt << ")";
  }
  return {};
}

#ifdef SVDLR_COLIN27_NII
/** The Colin27 brain, or "" when it is missing. */
inline std::string
Colin27Path()
{
  return ExistingTestFile(SVDLR_COLIN27_NII, "Debian package mricron-data");
}
#endif

#ifdef SVDLR_ITK_EXAMPLE_DATA_DIR
/** One of ITK's example images, e.g. "BrainProtonDensitySlice.png", or "" when it is missing. */
inline std::string
ItkExampleDataPath(const std::string & name)
{
  return ExistingTestFile(std::string(SVDLR_ITK_EXAMPLE_DATA_DIR) + "/" + name,
                          "Debian package insighttoolkit5-examples");
}
#endif

} // namespace svdlr_test

/** Declares `variable` as the path `expression` gives, and skips the test when it is empty. */
#define SVDLR_TEST_FILE_OR_SKIP(variable, expression)                                                                 \
  const std::string variable = (expression);                                                                           \
  if (variable.empty())                                                                                                \
  {                                                                                                                    \
    GTEST_SKIP() << "test data missing: " #expression;                                                                 \
  }

#endif
