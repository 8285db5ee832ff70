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
#include "SVDLowRankStagedOutput.h"

#include "SVDLowRankImageFileCheck.h"
#include "SVDLowRankInterruptCleanup.h"
#include "SVDLowRankNiftiWrite.h"
#include "SVDLowRankPngStack.h"
#include "SVDLowRankReadableFile.h"

#include "itkMacro.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio> // renameat2, RENAME_NOREPLACE (glibc 2.28)
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <system_error>
#include <unistd.h>

namespace svdlr_io
{
namespace fs = std::filesystem;

std::string
TemporarySiblingOf(const std::string & target)
{
  const fs::path path = fs::path(target).lexically_normal();
  const fs::path name = path.filename().empty() ? path.parent_path().filename() : path.filename();
  const fs::path parent = path.filename().empty() ? path.parent_path().parent_path() : path.parent_path();
  return (parent / (PartialNameStart(name.string()) + std::to_string(getpid()))).string();
}

bool
IsSameOrInside(const std::string & inner, const std::string & outer)
{
  std::error_code error;
  const fs::path  in = fs::weakly_canonical(fs::absolute(inner), error);
  const fs::path  out = fs::weakly_canonical(fs::absolute(outer), error);
  auto            i = in.begin();
  for (auto o = out.begin(); o != out.end(); ++o, ++i)
  {
    if (o->empty() && std::next(o) == out.end())
    {
      break; // a trailing slash
    }
    if (i == in.end() || *i != *o)
    {
      return false;
    }
  }
  return true;
}

bool
NumberedFiles::Holds(const std::string & name) const
{
  const std::size_t digits = name.size() - std::min(name.size(), prefix.size() + extension.size());
  return digits > 0 && name.compare(0, prefix.size(), prefix) == 0 &&
         name.compare(name.size() - extension.size(), extension.size(), extension) == 0 &&
         std::all_of(name.begin() + prefix.size(), name.end() - extension.size(), [](unsigned char c) {
           return std::isdigit(c) != 0;
         });
}

namespace
{
/** What in the folder `folder` is not `own`'s (a file of another name, a subfolder, a link): up to `most` names,
 * sorted. Empty when the folder holds only its writer's files (or does not exist). */
std::vector<std::string>
ForeignEntries(const std::string & folder, const NumberedFiles & own, std::size_t most)
{
  std::vector<std::string> foreign;
  std::error_code          error;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error))
  {
    std::error_code kind;
    if (!it->is_regular_file(kind) || it->is_symlink(kind) || !own.Holds(it->path().filename().string()))
    {
      foreign.push_back(it->path().filename().string() + (it->is_directory(kind) ? "/" : ""));
    }
  }
  std::sort(foreign.begin(), foreign.end());
  foreign.resize(std::min(foreign.size(), most));
  return foreign;
}

/** Renames `temporary` to `target`. Without `overwrite` the rename refuses atomically to replace a target that
 * appeared meanwhile (another process writing the same output): it throws OutputInTheWay and leaves both files. */
void
MoveIntoPlace(const std::string & temporary, const std::string & target, bool overwrite)
{
  const auto failed = [&](int number) {
    return OutputWriteError("cannot move '" + temporary + "' to '" + target + "': " + std::strerror(number));
  };
  const auto taken = [&] {
    return OutputInTheWay("'" + target +
                          "' appeared while this run wrote it (another process writing the same output?); it was "
                          "not replaced (use --overwrite to replace it)");
  };
  if (overwrite)
  {
    if (std::rename(temporary.c_str(), target.c_str()) != 0)
    {
      throw failed(errno);
    }
    return;
  }
#ifdef RENAME_NOREPLACE
  if (renameat2(AT_FDCWD, temporary.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE) == 0)
  {
    return;
  }
  if (errno == EEXIST || errno == ENOTEMPTY)
  {
    throw taken();
  }
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
  {
    throw failed(errno);
  }
#endif
  // A file system without RENAME_NOREPLACE: a hard link refuses an existing target as atomically.
  if (::link(temporary.c_str(), target.c_str()) == 0)
  {
    ::unlink(temporary.c_str());
    return;
  }
  if (errno == EEXIST)
  {
    throw taken();
  }
  // Nor hard links (or a folder): the check and the rename are two steps.
  std::error_code error;
  if (fs::exists(target, error) && !(fs::is_directory(target, error) && fs::is_empty(target, error)))
  {
    throw taken();
  }
  if (std::rename(temporary.c_str(), target.c_str()) != 0)
  {
    throw failed(errno);
  }
}

/** Renames `temporary` to `target`, a target that exists moved to `aside` first and put back when the rename fails;
 * returns `aside` when the target was moved there, else "". Throws std::runtime_error naming the move that failed. */
std::string
ReplaceTarget(const std::string & temporary, const std::string & target, const std::string & aside)
{
  std::error_code error;
  std::string     previous;
  if (fs::exists(target, error))
  {
    previous = aside;
    fs::rename(target, previous, error);
    if (error)
    {
      throw std::runtime_error("cannot move '" + target + "' aside: " + error.message());
    }
  }
  fs::rename(temporary, target, error);
  if (error)
  {
    if (!previous.empty())
    {
      std::error_code ignored;
      fs::rename(previous, target, ignored);
    }
    throw std::runtime_error("cannot move '" + temporary + "' to '" + target + "': " + error.message());
  }
  return previous;
}
} // namespace

StagedDirectory::StagedDirectory(const std::string & target, bool overwrite, NumberedFiles own)
  : m_Target(fs::path(target).lexically_normal().string())
  , m_Temporary(TemporarySiblingOf(target))
  , m_Own(std::move(own))
{
  std::error_code error;
  if (fs::exists(m_Target, error))
  {
    if (!fs::is_directory(m_Target, error))
    {
      throw OutputInTheWay("'" + m_Target + "' exists and is not a folder");
    }
    RefuseForeignFiles(); // which --overwrite would not replace either
    if (!overwrite && !fs::is_empty(m_Target, error))
    {
      throw OutputInTheWay("the folder '" + m_Target + "' exists and is not empty (use --overwrite to replace it)");
    }
  }
  RemoveStalePartialsBeside(m_Target);
  fs::remove_all(m_Temporary, error);
  ListPartialOutput(m_Temporary);
  if (!fs::create_directories(m_Temporary, error))
  {
    UnlistPartialOutput(m_Temporary);
    throw std::runtime_error("cannot create the folder '" + m_Temporary + "': " + error.message());
  }
  m_Overwrite = overwrite;
}

void
StagedDirectory::RefuseForeignFiles() const
{
  constexpr std::size_t named = 3;
  const auto            foreign = ForeignEntries(m_Target, m_Own, named + 1);
  if (foreign.empty())
  {
    return;
  }
  std::string names;
  for (std::size_t i = 0; i < std::min(named, foreign.size()); ++i)
  {
    names += (names.empty() ? "'" : ", '") + foreign[i] + "'";
  }
  throw OutputInTheWay("the folder '" + m_Target + "' holds files this tool does not write (" + names +
                       (foreign.size() > named ? ", ..." : "") + "): --overwrite replaces only a folder of " +
                       m_Own.prefix + "NNNN" + m_Own.extension +
                       " files, never other files; give a new or empty folder");
}

StagedDirectory::~StagedDirectory()
{
  if (!m_Committed)
  {
    std::error_code error;
    fs::remove_all(m_Temporary, error);
  }
  UnlistPartialOutput(m_Temporary);
}

void
StagedDirectory::Commit()
{
  std::error_code error;
  for (fs::recursive_directory_iterator it(m_Temporary, error), end; !error && it != end; it.increment(error))
  {
    if (it->is_regular_file())
    {
      VerifyWrittenFile(it->path().string(), (fs::path(m_Target) / it->path().lexically_relative(m_Temporary)).string());
    }
  }
  if (!m_Overwrite)
  {
    // The folder was absent or empty when the work began; an empty one is removed so that the rename below can
    // refuse atomically, like a file's, a folder another process filled meanwhile.
    if (fs::is_directory(m_Target, error) && fs::is_empty(m_Target, error))
    {
      fs::remove(m_Target, error);
    }
    MoveIntoPlace(m_Temporary, m_Target, false);
    m_Committed = true;
    return;
  }
  RefuseForeignFiles(); // what appeared since the start is not replaced either (nothing when the folder is gone)
  const std::string previous = ReplaceTarget(m_Temporary, m_Target, TemporarySiblingOf(m_Target) + ".old");
  m_Committed = true;
  if (!previous.empty())
  {
    fs::remove_all(previous, error);
  }
}

std::string
TemporaryFileFor(const std::string & target)
{
  const fs::path    path = fs::path(target).lexically_normal();
  const auto [stem, extension] = SplitForPartial(path.filename().string());
  return (path.parent_path() / (PartialNameStart(stem) + std::to_string(getpid()) + extension)).string();
}

StagedFiles::StagedFiles(bool overwrite)
  : m_Overwrite(overwrite)
{}

StagedFiles::~StagedFiles()
{
  for (const Entry & entry : m_Entries)
  {
    if (!m_Committed)
    {
      std::error_code error;
      fs::remove(entry.temporary, error);
    }
    UnlistPartialOutput(entry.temporary);
  }
}

std::string
StagedFiles::Add(const std::string & target)
{
  std::error_code error;
  if (fs::is_directory(target, error))
  {
    throw OutputInTheWay("'" + target + "' is a folder; give a file name");
  }
  if (fs::exists(target, error) && !m_Overwrite)
  {
    throw OutputInTheWay("'" + target + "' exists (use --overwrite to replace it)");
  }
  for (const Entry & entry : m_Entries)
  {
    if (IsSameOrInside(target, entry.target))
    {
      throw OutputInTheWay("'" + target + "' is named for two outputs");
    }
  }
  RemoveStalePartialsBeside(target);
  m_Entries.push_back({ target, TemporaryFileFor(target) });
  ListPartialOutput(m_Entries.back().temporary);
  return m_Entries.back().temporary;
}

void
StagedFiles::Commit()
{
  // Targets that existed are moved aside first, so that a failed rename can put every target back as it was.
  struct Done
  {
    const Entry * entry;
    std::string   previous; // where the replaced target was moved, or ""
  };
  std::vector<Done> done;
  const auto        undo = [&done] {
    for (auto it = done.rbegin(); it != done.rend(); ++it)
    {
      std::error_code ignored;
      fs::rename(it->entry->target, it->entry->temporary, ignored);
      if (!it->previous.empty())
      {
        fs::rename(it->previous, it->entry->target, ignored);
      }
    }
  };
  for (const Entry & entry : m_Entries)
  {
    VerifyWrittenFile(entry.temporary, entry.target); // all of them before any is moved
  }
  // The first target added (the main output) is renamed last: its presence means the whole set is in place, and a
  // run killed between the renames leaves it missing, for a re-run to see (and a batch to redo).
  for (auto it = m_Entries.rbegin(); it != m_Entries.rend(); ++it)
  {
    std::string previous;
    try
    {
      if (m_Overwrite)
      {
        previous = ReplaceTarget(it->temporary, it->target, it->temporary + ".old");
      }
      else
      {
        MoveIntoPlace(it->temporary, it->target, false);
      }
    }
    catch (...)
    {
      undo(); // the targets moved before this one go back as they were
      throw;
    }
    done.push_back({ &*it, previous });
  }
  m_Committed = true;
  for (const Done & d : done)
  {
    std::error_code ignored;
    if (!d.previous.empty())
    {
      fs::remove(d.previous, ignored);
    }
  }
}

void
VerifyWrittenFile(const std::string & temporary, const std::string & target)
{
  std::error_code     error;
  const std::uintmax_t size = fs::file_size(temporary, error);
  if (error || size == 0)
  {
    throw OutputWriteError("writing '" + target + "' failed: the writer left " +
                           (error ? "no file" : std::string("an empty file")) + " (is the disk full?)");
  }
  if (const auto problem = CheckRecordedWrite(temporary)) // written by us: its size and CRC, not its contents
  {
    if (!problem->empty())
    {
      throw OutputWriteError("writing '" + target + "' failed: what was written is incomplete (is the disk full?): " +
                             *problem);
    }
    return;
  }
  try
  {
    CheckImageFile(temporary);
    const std::string name = fs::path(target).filename().string();
    if (name.size() > 4 && EndsWithNoCase(name, ".png"))
    {
      CheckPngFile(temporary);
    }
  }
  catch (const std::runtime_error & incomplete) // IncompleteImageFile, PngStackError
  {
    throw OutputWriteError("writing '" + target + "' failed: what was written is incomplete (is the disk full?): " +
                           incomplete.what());
  }
}

void
WriteStagedFile(const std::string &                               temporary,
                const std::string &                               target,
                const std::function<void(const std::string &)> & write)
{
  try
  {
    write(temporary);
  }
  catch (const itk::ExceptionObject & error)
  {
    throw OutputWriteError("cannot write '" + target + "': " + error.GetDescription());
  }
  catch (const OutputWriteError &)
  {
    throw;
  }
  catch (const std::runtime_error & error) // a writer of ours (PNG), naming the temporary
  {
    throw OutputWriteError("cannot write '" + target + "' (is the disk full?): " + error.what());
  }
}

void
WriteFileAtomically(const std::string &                               target,
                    bool                                              overwrite,
                    const std::function<void(const std::string &)> & write)
{
  RemoveStalePartialsBeside(target);
  const std::string temporary = TemporaryFileFor(target);
  ListPartialOutput(temporary);
  try
  {
    WriteStagedFile(temporary, target, write);
    VerifyWrittenFile(temporary, target);
    MoveIntoPlace(temporary, target, overwrite);
  }
  catch (...)
  {
    std::remove(temporary.c_str());
    UnlistPartialOutput(temporary);
    throw;
  }
  UnlistPartialOutput(temporary);
}

} // namespace svdlr_io
