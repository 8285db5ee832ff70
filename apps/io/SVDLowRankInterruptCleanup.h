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
#ifndef SVDLowRankInterruptCleanup_h
#define SVDLowRankInterruptCleanup_h

// Partial outputs are not left behind by an interrupted tool: the staged outputs (SVDLowRankStagedOutput.h) list
// their temporary files and folders here while they exist, and a tool that calls InstallInterruptCleanup() first
// thing in main() removes them on SIGINT, SIGTERM or SIGHUP and exits with 128 + the signal's number. The handler
// only writes the signal's number to a pipe; a thread of its own reads it and does the removal, outside the
// handler, so it may use the file system and locks freely.

#include <string>

namespace svdlr_io
{

/** Handles SIGINT, SIGTERM and SIGHUP (in whichever thread they land) by removing the partial outputs listed and
 * exiting with `exitBase` + the signal (the tools pass ExitInterrupted, 128). Call it once, early in main();
 * `toolName` prefixes the message it prints. */
void
InstallInterruptCleanup(const char * toolName, int exitBase);

/** A temporary file or folder that an interrupt must remove (while it is listed). */
void
ListPartialOutput(const std::string & path);

/** The temporary is gone or renamed into place: an interrupt leaves it alone. */
void
UnlistPartialOutput(const std::string & path);

/** The start of the hidden partial names of an output whose name (or stem) is `stem`: "." + stem + ".partial-", the
 * process id and the extension following. A long stem is cut and tagged with a hash of the whole (FNV-1a, the same
 * in every process), so that a partial's name stays within a file name's 255 bytes, where the output's own name
 * is legal, and two long names that differ only at their end still get partial names of their own. */
std::string
PartialNameStart(const std::string & stem);

/** A file output's name split as its partial's name keeps it: the stem (up to the first dot after the first
 * character) and the extension kept (the rest, which picks ITK's writer). Where the rest is over 40 bytes (dots all
 * through a long name), only the last suffix (.gz with the one before) is kept, and the stem is all before it. */
struct PartialFileName
{
  std::string stem;
  std::string extension;
};
PartialFileName
SplitForPartial(const std::string & name);

/** Removes the hidden partial outputs beside `target` (.NAME.partial-PID...) that processes no longer running
 * left behind (killed with SIGKILL, or a machine that lost power). A process still running keeps its own. */
void
RemoveStalePartialsBeside(const std::string & target);

} // namespace svdlr_io

#endif
