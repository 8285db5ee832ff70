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
#ifndef svdlrUnreadableFolder_h
#define svdlrUnreadableFolder_h

// A folder the test's process (or a tool it runs) cannot list, even as root. chmod 000 alone stops other users
// only: root passes permission bits through CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, and CI runs as root. So, as
// root, the test's thread leaves those two capabilities out of its effective set while it looks (they stay
// permitted and come back after), and a tool runs under setpriv without them in its bounding set. Where neither
// works (no setpriv, no CAP_SETPCAP), CanBeListed() says so and the test skips with that reason.

#include "svdlrToolRun.h"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace svdlr_test
{

/** `folder` with mode 000 for as long as this lives; its mode is given back after, so that it can be removed. */
class UnreadableFolder
{
public:
  explicit UnreadableFolder(std::filesystem::path folder)
    : m_Folder(std::move(folder))
  {
    std::filesystem::permissions(m_Folder, std::filesystem::perms::none);
  }
  ~UnreadableFolder()
  {
    std::error_code ignored;
    std::filesystem::permissions(m_Folder, std::filesystem::perms::owner_all, ignored);
  }
  UnreadableFolder(const UnreadableFolder &) = delete;
  UnreadableFolder &
  operator=(const UnreadableFolder &) = delete;

  /** Whether the calling thread can list it after all (root keeping its capabilities). */
  bool
  CanBeListed() const
  {
    std::error_code error;
    std::filesystem::directory_iterator it(m_Folder, error);
    return !error;
  }

private:
  std::filesystem::path m_Folder;
};

/** While this lives, the calling thread has no CAP_DAC_OVERRIDE or CAP_DAC_READ_SEARCH in its effective set (a
 * thread's capabilities are its own), so root meets permission bits like anyone; a no-op for other users. */
class WithoutPermissionOverride
{
public:
  WithoutPermissionOverride()
  {
    if (::geteuid() != 0 || !Get(m_Saved))
    {
      return;
    }
    __user_cap_data_struct lowered[2] = { m_Saved[0], m_Saved[1] };
    lowered[0].effective &= ~((1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH));
    m_Lowered = Set(lowered);
  }
  ~WithoutPermissionOverride()
  {
    if (m_Lowered)
    {
      Set(m_Saved);
    }
  }
  WithoutPermissionOverride(const WithoutPermissionOverride &) = delete;
  WithoutPermissionOverride &
  operator=(const WithoutPermissionOverride &) = delete;

private:
  static bool
  Get(__user_cap_data_struct (&data)[2])
  {
    __user_cap_header_struct header{ _LINUX_CAPABILITY_VERSION_3, 0 };
    return ::syscall(SYS_capget, &header, data) == 0;
  }
  static bool
  Set(__user_cap_data_struct (&data)[2])
  {
    __user_cap_header_struct header{ _LINUX_CAPABILITY_VERSION_3, 0 };
    return ::syscall(SYS_capset, &header, data) == 0;
  }

  __user_cap_data_struct m_Saved[2]{};
  bool                   m_Lowered{ false };
};

/** RunToolIn, with the tool unable to override permission bits: for root, under setpriv with the two capabilities
 * out of its bounding set (an exec'd root process gets its bounding set as its capabilities). */
inline ToolRun
RunToolWithoutPermissionOverride(const std::filesystem::path & folder, const std::string & program,
                                 const std::string & arguments)
{
  if (::geteuid() != 0)
  {
    return RunToolIn(folder, program, arguments);
  }
  return RunToolIn(folder, "setpriv", "--bounding-set -dac_override,-dac_read_search '" + program + "' " + arguments);
}

} // namespace svdlr_test

#endif
