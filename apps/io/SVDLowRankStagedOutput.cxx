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
  return (parent / ("." + name.string() + ".partial-" + std::to_string(getpid()))).string();
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

StagedDirectory::StagedDirectory(const std::string & target, bool overwrite)
  : m_Target(fs::path(target).lexically_normal().string())
  , m_Temporary(TemporarySiblingOf(target))
{
  std::error_code error;
  if (fs::exists(m_Target, error))
  {
    if (!fs::is_directory(m_Target, error))
    {
      throw OutputInTheWay("'" + m_Target + "' exists and is not a folder");
    }
    if (!overwrite && !fs::is_empty(m_Target, error))
    {
      throw OutputInTheWay("the folder '" + m_Target + "' exists and is not empty (use --overwrite to replace it)");
    }
  }
  fs::remove_all(m_Temporary, error);
  if (!fs::create_directories(m_Temporary, error))
  {
    throw std::runtime_error("cannot create the folder '" + m_Temporary + "': " + error.message());
  }
}

StagedDirectory::~StagedDirectory()
{
  if (!m_Committed)
  {
    std::error_code error;
    fs::remove_all(m_Temporary, error);
  }
}

void
StagedDirectory::Commit()
{
  std::error_code error;
  std::string     previous;
  if (fs::exists(m_Target, error))
  {
    previous = TemporarySiblingOf(m_Target) + ".old";
    fs::rename(m_Target, previous, error);
    if (error)
    {
      throw std::runtime_error("cannot move '" + m_Target + "' aside: " + error.message());
    }
  }
  fs::rename(m_Temporary, m_Target, error);
  if (error)
  {
    if (!previous.empty())
    {
      std::error_code ignored;
      fs::rename(previous, m_Target, ignored);
    }
    throw std::runtime_error("cannot move '" + m_Temporary + "' to '" + m_Target + "': " + error.message());
  }
  m_Committed = true;
  if (!previous.empty())
  {
    fs::remove_all(previous, error);
  }
}

} // namespace svdlr_io
