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
#include "SVDLowRankInterruptCleanup.h"

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <fcntl.h>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>
#include <unistd.h>

namespace svdlr_io
{
namespace
{
namespace fs = std::filesystem;

struct PartialOutputs
{
  std::mutex            mutex;
  std::set<std::string> paths;
};

// Never destroyed: the waiting thread may use it while static destructors run.
PartialOutputs &
Partials()
{
  static auto * partials = new PartialOutputs;
  return *partials;
}

// The self-pipe: the handler only writes the signal's number (write() is async-signal-safe), whichever thread the
// signal lands on (ITK's thread pool may have started threads before main), and the cleanup thread reads it.
int g_SignalPipe[2] = { -1, -1 };

extern "C" void
OnInterrupt(int signal)
{
  const unsigned char number = static_cast<unsigned char>(signal);
  const int           saved = errno;
  (void)!::write(g_SignalPipe[1], &number, 1);
  errno = saved;
}

// The longest stem a partial name keeps whole: with ".partial-", a process id, an extension (at most 40 bytes, see
// TemporaryFileFor) and ".old" (an output moved aside), the name stays within 255 bytes.
constexpr std::size_t LongestWholeStem = 180;

/** The process id in ".partial-PID..." after `prefix`, or 0. */
pid_t
PartialOwner(const std::string & name, const std::string & prefix)
{
  if (name.rfind(prefix, 0) != 0)
  {
    return 0;
  }
  std::size_t end = prefix.size();
  while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end])))
  {
    ++end;
  }
  if (end == prefix.size() || end - prefix.size() > 9 || (end < name.size() && name[end] != '.' && name[end] != '-'))
  {
    return 0;
  }
  return static_cast<pid_t>(std::stol(name.substr(prefix.size(), end - prefix.size())));
}

} // namespace

PartialFileName
SplitForPartial(const std::string & name)
{
  constexpr std::size_t longestExtension = 40;
  const std::size_t     dot = name.find('.', 1);
  if (dot == std::string::npos)
  {
    return { name, "" };
  }
  if (name.size() - dot <= longestExtension)
  {
    return { name.substr(0, dot), name.substr(dot) };
  }
  std::size_t last = name.rfind('.');
  if (name.compare(last, std::string::npos, ".gz") == 0 && last > dot)
  {
    last = name.rfind('.', last - 1);
  }
  if (name.size() - last > longestExtension)
  {
    return { name, "" };
  }
  return { name.substr(0, last), name.substr(last) };
}

std::string
PartialNameStart(const std::string & stem)
{
  if (stem.size() <= LongestWholeStem)
  {
    return "." + stem + ".partial-";
  }
  std::uint32_t hash = 2166136261u; // FNV-1a: the same in every process, so a later run finds a dead one's partials
  for (const char c : stem)
  {
    hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
  }
  char tag[10];
  std::snprintf(tag, sizeof(tag), "~%08x", hash);
  return "." + stem.substr(0, LongestWholeStem - 9) + tag + ".partial-";
}

void
InstallInterruptCleanup(const char * toolName, int exitBase)
{
  if (g_SignalPipe[0] >= 0 || ::pipe2(g_SignalPipe, O_CLOEXEC) != 0)
  {
    return;
  }
  std::thread([toolName, exitBase] {
    unsigned char number = 0;
    while (::read(g_SignalPipe[0], &number, 1) != 1)
    {
    }
    {
      const std::lock_guard<std::mutex> lock(Partials().mutex);
      for (const std::string & path : Partials().paths)
      {
        std::error_code ignored;
        fs::remove_all(path, ignored);
      }
    }
    std::fprintf(stderr, "%s: interrupted by signal %d; partial outputs removed\n", toolName, number);
    std::fflush(stderr);
    _exit(exitBase + number);
  }).detach();
  struct sigaction action
  {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (const int signal : { SIGINT, SIGTERM, SIGHUP })
  {
    sigaction(signal, &action, nullptr);
  }
}

void
ListPartialOutput(const std::string & path)
{
  const std::lock_guard<std::mutex> lock(Partials().mutex);
  Partials().paths.insert(path);
}

void
UnlistPartialOutput(const std::string & path)
{
  const std::lock_guard<std::mutex> lock(Partials().mutex);
  Partials().paths.erase(path);
}

void
RemoveStalePartialsBeside(const std::string & target)
{
  fs::path path = fs::path(target).lexically_normal();
  if (path.filename().empty())
  {
    path = path.parent_path();
  }
  const fs::path    folder = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  const std::string name = path.filename().string();
  const std::string prefixes[] = { PartialNameStart(name), PartialNameStart(SplitForPartial(name).stem) };
  std::error_code   error;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error))
  {
    const std::string entry = it->path().filename().string();
    for (const std::string & prefix : prefixes)
    {
      const pid_t owner = PartialOwner(entry, prefix);
      if (owner > 0 && owner != getpid() && kill(owner, 0) != 0 && errno == ESRCH)
      {
        std::error_code ignored;
        fs::remove_all(it->path(), ignored);
        break;
      }
    }
  }
}

} // namespace svdlr_io
