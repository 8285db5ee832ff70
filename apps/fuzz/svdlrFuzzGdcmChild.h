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
#ifndef svdlrFuzzGdcmChild_h
#define svdlrFuzzGdcmChild_h

// The DICOM targets read JPEG 2000 through GDCM, which decodes in a child process (DecodeFramesWithGdcm): a crash,
// an abort or a runaway allocation of GDCM or OpenJPEG there ends the child, and the reader reports the file's
// error (exit code 3 in the tools). That is the contract kept, not a finding. But the child is a fork of the
// fuzzing process and inherits libFuzzer's and the sanitizer's machinery: left alone, it writes the input as a
// crash-/oom- artifact and prints an ERROR report into the target's log, and a child that hangs holds the parent
// until libFuzzer's -timeout calls the parent's unit a timeout. Here the child is bounded and silenced, so that
// only what escapes to the harness process (a crash there, a broken contract, a real timeout or leak) counts.

#include "SVDLowRankDicomCodecs.h"

#include <sanitizer/common_interface_defs.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstddef>

namespace svdlr_fuzz
{

/** Well below run-fuzzers.sh's -timeout=25 and the replays' -timeout=10: a hanging child is killed and the input
 * refused by the reader, before libFuzzer would blame the harness. */
constexpr unsigned int kGdcmChildSeconds = 5;
/** Below the replays' -rss_limit_mb=1024 (libFuzzer's malloc limit defaults to it): an allocation of GDCM past this
 * fails inside the child, so libFuzzer's malloc hook, which would write an oom- artifact from the child, never
 * sees it. A sound frame of these inputs (at most 64 KiB) decodes in a few MB. */
constexpr std::size_t kGdcmChildAddressSpace = std::size_t{ 768 } << 20;

/** The child's first step: no libFuzzer death callback (it would save the input as the child's crash), and its
 * reports (the sanitizer's, on a bad free inside GDCM) to /dev/null: the parent reports what became of it. */
inline void
SilenceContainedChild()
{
  __sanitizer_set_death_callback(nullptr);
  const int null = ::open("/dev/null", O_WRONLY);
  if (null >= 0)
  {
    ::dup2(null, STDERR_FILENO);
    ::close(null);
  }
}

/** What the DICOM targets' LLVMFuzzerInitialize calls. */
inline void
ContainGdcmChildren()
{
  svdlr_io::GdcmChildLimits limits;
  limits.seconds = kGdcmChildSeconds;
  limits.addressSpaceBytes = kGdcmChildAddressSpace;
  limits.setup = &SilenceContainedChild;
  svdlr_io::SetGdcmChildLimits(limits);
}

} // namespace svdlr_fuzz

#endif
