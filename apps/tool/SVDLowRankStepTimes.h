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
#ifndef SVDLowRankStepTimes_h
#define SVDLowRankStepTimes_h

// Where a tool's wall time goes, step by step: most of a run on a GPU is spent outside the filter (reading and
// writing .nii.gz, the raw checks, verifying what was written), and a summary that gives only the filter's time hides
// it. One line, "steps:", that a benchmark parses (benchmarks/denoise/end_to_end.py).

#include <chrono>
#include <ostream>

namespace svdlr_tools
{

struct StepTimes
{
  double read{ 0.0 };   // the inputs decoded into images
  double checks{ 0.0 }; // the raw checks (truncation, NaN and Inf) and the checks on the images
  double filter{ 0.0 };
  double write{ 0.0 };  // the outputs written under their temporary names, header fields and sidecars included
  double verify{ 0.0 }; // the outputs verified and renamed into place
};

/** Adds the wall time from its construction to its destruction to `seconds` (exceptions included). */
class StepTimer
{
public:
  explicit StepTimer(double & seconds)
    : m_Seconds(seconds)
  {}
  ~StepTimer() { m_Seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - m_Start).count(); }
  StepTimer(const StepTimer &) = delete;
  StepTimer &
  operator=(const StepTimer &) = delete;

private:
  double &                                    m_Seconds;
  std::chrono::steady_clock::time_point m_Start{ std::chrono::steady_clock::now() };
};

/** "steps:    read 1.52 s, checks 0.31 s, filter 8.40 s, write 2.10 s, verify 0.05 s, process 12.6 s" */
inline void
PrintStepTimes(std::ostream & out, const StepTimes & steps, double processSeconds)
{
  const auto flags = out.flags();
  const auto precision = out.precision();
  out.setf(std::ios::fixed);
  out.precision(2);
  out << "steps:    read " << steps.read << " s, checks " << steps.checks << " s, filter " << steps.filter
      << " s, write " << steps.write << " s, verify " << steps.verify << " s, process " << processSeconds << " s\n";
  out.flags(flags);
  out.precision(precision);
}

} // namespace svdlr_tools

#endif
