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
#ifndef SVDLowRankStagedOutput_h
#define SVDLowRankStagedOutput_h

// Outputs that appear whole or not at all: a folder (StagedDirectory) or a set of files (StagedFiles) is written
// under hidden temporary sibling names and renamed into place by Commit(); if Commit() is never reached, the
// temporaries are removed.

#include "SVDLowRankImageFileErrors.h"

#include <functional>
#include <string>
#include <vector>

namespace svdlr_io
{

/** The output path is taken (a non-empty folder, or a file where a folder should go). */
SVDLR_DECLARE_ERROR(OutputInTheWay, std::runtime_error);

/** Writing an output failed (a full disk, a writer's error): the message names the output, not its temporary. */
SVDLR_DECLARE_ERROR(OutputWriteError, std::runtime_error);

/** A hidden name beside `target` in the same folder, unique to this process: dir/.name.partial-PID (PartialNameStart:
 * within 255 bytes for any legal name). */
std::string
TemporarySiblingOf(const std::string & target);

/** Whether `inner` is `outer` or lies inside it (after resolving links and relative parts). */
bool
IsSameOrInside(const std::string & inner, const std::string & outer);

/** The files a folder output's writer puts in it: `prefix`, a number, `extension` (slice0001.png, IM0001.dcm). Only a
 * folder of nothing else is its own, and only its own may be replaced. */
struct NumberedFiles
{
  std::string prefix;
  std::string extension;

  /** Whether `name` (a file name, no folder) is one of them. */
  bool
  Holds(const std::string & name) const;
};

class StagedDirectory
{
public:
  /** Checks that `target` may be written (absent, an empty folder, or with `overwrite` a folder of nothing but
   * `own` files: one that holds anything else is refused, never replaced) and creates the temporary folder. Throws
   * OutputInTheWay or std::runtime_error. */
  StagedDirectory(const std::string & target, bool overwrite, NumberedFiles own);
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory &) = delete;
  StagedDirectory &
  operator=(const StagedDirectory &) = delete;

  /** The temporary folder to write into. */
  const std::string &
  Path() const
  {
    return m_Temporary;
  }

  /** Verifies the files written (VerifyWrittenFile) and moves the temporary folder to the target: replacing what was
   * there with `overwrite` (checked again: a file of another name that appeared meanwhile is refused), else refusing
   * atomically a target another process filled meanwhile (OutputInTheWay). */
  void
  Commit();

private:
  /** Throws OutputInTheWay when the target holds anything that is not `m_Own`'s. */
  void
  RefuseForeignFiles() const;

  std::string   m_Target;
  std::string   m_Temporary;
  NumberedFiles m_Own;
  bool          m_Overwrite{ false };
  bool          m_Committed{ false };
};

/** Output files that appear together or not at all: each is written under a hidden temporary name beside its
 * target (with the target's extension, which picks ITK's writer), and Commit() renames them all into place, the
 * first one added (the main output) last, so that its presence means the set is complete: a run killed (SIGKILL)
 * between the renames leaves the main output missing. If Commit() is never reached, or a rename fails, the
 * temporaries are removed and the targets are as they were. */
class StagedFiles
{
public:
  /** `overwrite`: existing target files may be replaced (never folders). */
  explicit StagedFiles(bool overwrite);
  ~StagedFiles();
  StagedFiles(const StagedFiles &) = delete;
  StagedFiles &
  operator=(const StagedFiles &) = delete;

  /** Checks that `target` may be written (absent, or a file when `overwrite`; not a target already added) and
   * returns the temporary path to write it to. Throws OutputInTheWay. */
  std::string
  Add(const std::string & target);

  /** Verifies every temporary file (VerifyWrittenFile), then moves each to its target, in the reverse order of
   * Add (the main output last): replacing what was there
   * with `overwrite`, else refusing atomically a target that appeared meanwhile (OutputInTheWay). Throws after
   * undoing the moves made so far when one fails. */
  void
  Commit();

private:
  struct Entry
  {
    std::string target;
    std::string temporary;
  };
  std::vector<Entry> m_Entries;
  bool               m_Overwrite;
  bool               m_Committed{ false };
};

/** A hidden name beside `target` in the same folder, unique to this process, that keeps the target's extension
 * (SplitForPartial): dir/brain.nii.gz -> dir/.brain.partial-PID.nii.gz; within 255 bytes for any legal name
 * (PartialNameStart). */
std::string
TemporaryFileFor(const std::string & target);

/** Checks that the file a writer left at `temporary` is whole before it may become `target`: it exists and is not
 * empty, NIfTI, MHA and NRRD files hold the data their header promises (CheckImageFile), PNG files decode. ITK's
 * writers do not all report a full disk (its NIfTI writer only prints it), so this is what catches one. Throws
 * OutputWriteError naming `target`. */
void
VerifyWrittenFile(const std::string & temporary, const std::string & target);

/** Calls `write` with `temporary`, the file that becomes `target` (a StagedFiles entry, or WriteFileAtomically's):
 * ITK's exceptions and our writers' errors become OutputWriteError naming `target`, not its temporary. */
void
WriteStagedFile(const std::string &                               temporary,
                const std::string &                               target,
                const std::function<void(const std::string &)> & write);

/** One output file written whole or not at all: removes stale partials of dead processes beside `target`, calls
 * `write` with a temporary name beside it (listed for InterruptCleanup), verifies the file (VerifyWrittenFile)
 * and moves it into place, without `overwrite` refusing atomically a target that appeared meanwhile (OutputInTheWay,
 * both files left). On any failure the temporary is removed and the error rethrown, ITK's exceptions as
 * OutputWriteError. */
void
WriteFileAtomically(const std::string &                               target,
                    bool                                              overwrite,
                    const std::function<void(const std::string &)> & write);

} // namespace svdlr_io

#endif
