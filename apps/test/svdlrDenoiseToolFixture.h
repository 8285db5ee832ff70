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
#ifndef svdlrDenoiseToolFixture_h
#define svdlrDenoiseToolFixture_h

// What the end-to-end suites of SVDLowRankDenoiseSeries share (SVDLR_DENOISE_TOOL names the tool): a run on the CPU
// in the test's scratch folder, and a run that must be refused with an exit code and a message, writing nothing.

#include "svdlrTestScratch.h"
#include "svdlrToolRun.h"

#include <string>

namespace svdlr_test
{

class DenoiseToolTest : public RandomTest
{
protected:
  ToolRun
  Run(const std::string & arguments)
  {
    return RunToolIn(m_Directory, SVDLR_DENOISE_TOOL, "--backend cpu --quiet " + arguments);
  }

  ToolRun
  ExpectRefused(const std::string & arguments, int exitCode, const std::string & message)
  {
    const auto before = Listing(m_Directory);
    const auto run = Run(arguments);
    EXPECT_EQ(run.exitCode, exitCode) << arguments << "\n" << run.err;
    EXPECT_EQ(Listing(m_Directory), before) << arguments;
    EXPECT_NE(run.err.find(message), std::string::npos) << arguments << "\n" << run.err;
    return run;
  }
};

} // namespace svdlr_test

#endif
