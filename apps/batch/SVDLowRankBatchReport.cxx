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
#include "SVDLowRankBatchReport.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace svdlr_batch
{
namespace
{

std::string
Range(std::size_t low, std::size_t high)
{
  return low == high ? std::to_string(low) : std::to_string(low) + "-" + std::to_string(high);
}

std::string
SigmaRange(double low, double high)
{
  std::ostringstream text;
  text << std::setprecision(4) << low;
  if (high != low)
  {
    text << "-" << high;
  }
  return text.str();
}

} // namespace

std::string
DescribeVolume(const VolumeResult & result)
{
  std::ostringstream text;
  text << ToString(result.status) << ": " << result.input;
  switch (result.status)
  {
    case VolumeStatus::Done:
      text << " -> " << result.output << " (ranks " << Range(result.rankMin, result.rankMax);
      if (!std::isnan(result.sigmaMin))
      {
        text << ", sigma " << SigmaRange(result.sigmaMin, result.sigmaMax);
      }
      text << ")";
      break;
    case VolumeStatus::Skipped:
      text << " (" << result.output << " exists)";
      break;
    case VolumeStatus::Failed:
      text << ": " << result.message;
      break;
  }
  return text.str();
}

void
PrintBatchSummary(std::ostream & out, const BatchSummary & summary, const std::string & items)
{
  double read = 0;
  double solve = 0;
  double write = 0;
  for (const auto & result : summary.volumes)
  {
    read += result.readSeconds;
    solve += result.solveSeconds;
    write += result.writeSeconds;
  }
  const std::size_t worked = summary.done + summary.failed;
  out << std::fixed << std::setprecision(2);
  std::string label = items + ":";
  label.resize(std::max<std::size_t>(label.size() + 1, 10), ' '); // "volumes:  ", aligned with the lines below
  out << label << summary.volumes.size() << " (" << summary.done << " done, " << summary.skipped
      << " skipped, " << summary.failed << " failed)\n";
  out << "backend:  " << svdlr::ToString(summary.backend);
  if (!summary.devices.empty())
  {
    out << " on device" << (summary.devices.size() > 1 ? "s " : " ");
    for (std::size_t i = 0; i < summary.devices.size(); ++i)
    {
      out << (i > 0 ? "," : "") << summary.devices[i];
    }
    out << (summary.pinned ? ", pinned buffers" : ", pageable buffers");
  }
  out << "; " << summary.readers << " readers, " << summary.writers << " writers, peak "
      << static_cast<double>(summary.peakBytes) / (1 << 20) << " MiB in flight\n";
  out << "time:     " << summary.wallSeconds << " s wall";
  if (summary.done > 0 && summary.wallSeconds > 0)
  {
    out << ", " << static_cast<double>(summary.done) / summary.wallSeconds << " " << items << "/s";
  }
  out << "\n";
  if (worked > 0)
  {
    out << "steps:    read " << read << " s, solve " << solve << " s, write " << write
        << " s (thread-seconds summed over volumes; steps overlap)\n";
    out << "solvers:  busy " << std::setprecision(0) << 100.0 * summary.solverBusy << "% of the wall time"
        << (summary.backend == svdlr::Backend::CUDA ? " (each GPU's engine calls: H2D, solve and D2H)\n" : "\n");
  }
  out.unsetf(std::ios::floatfield);
  out << std::setprecision(6);
}

void
WriteBatchTable(std::ostream & out, const BatchSummary & summary)
{
  out << "input\toutput\tstatus\tslices\trank_min\trank_max\tsigma_min\tsigma_max\tread_s\tsolve_s\twrite_s\tdevice"
         "\tmessage\n";
  for (const auto & r : summary.volumes)
  {
    std::string message = r.message;
    std::replace_if(message.begin(), message.end(), [](char c) { return c == '\t' || c == '\n'; }, ' ');
    out << r.input << '\t' << r.output << '\t' << ToString(r.status) << '\t' << r.slices << '\t' << r.rankMin << '\t'
        << r.rankMax << '\t' << r.sigmaMin << '\t' << r.sigmaMax << '\t' << r.readSeconds << '\t' << r.solveSeconds
        << '\t' << r.writeSeconds << '\t' << r.device << '\t' << message << '\n';
  }
}

} // namespace svdlr_batch
