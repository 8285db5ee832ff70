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
#include "denoise/svdlrOverlapSchedule.h"

#include <algorithm>

namespace svdlr
{
namespace detail
{
namespace
{
/** Centres per block along an axis of patch extent e: 2 (e - 1), so that two blocks of one colour, a block apart,
 * are farther apart than the e - 1 voxels a patch reaches beyond its centre on either side. */
std::size_t
BlockExtent(std::size_t patchExtent)
{
  return std::max<std::size_t>(1, 2 * (patchExtent - 1));
}
} // namespace

std::array<std::size_t, 2>
OverlapSchedule::BlockSize(const std::array<std::size_t, 3> & patch)
{
  // Not longer along x for fuller eigenvalue lanes (a row of 8 voxels holds 4 centres at stride 2; 16 would hold 8):
  // on 2 EPYC cores that took 7 % off the denoise, but on an H200 host's 16 cores (4 rounds, 96x96x60x65) the whole
  // series gained nothing and the masked one lost 7 %, the larger units balancing worse.
  return { BlockExtent(patch[0]), BlockExtent(patch[1]) };
}

OverlapSchedule::OverlapSchedule(std::size_t nx, std::size_t ny, const std::array<std::size_t, 3> & patch,
                                 std::size_t z0, std::size_t z1, const std::vector<std::int64_t> & patchStartZ,
                                 const std::function<bool(std::size_t, std::size_t, std::size_t, std::size_t)> &
                                   hasCentre,
                                 std::size_t blocksAtOnce)
  : m_PatchStartZ(patchStartZ)
  , m_PatchZ(patch[2])
{
  const auto        block = BlockSize(patch);
  const std::size_t blockX = block[0], blockY = block[1];
  m_BlocksX = (nx + blockX - 1) / blockX;
  m_BlocksY = (ny + blockY - 1) / blockY;
  m_Planes = z1 - z0;
  blocksAtOnce = std::max<std::size_t>(1, blocksAtOnce);
  const std::size_t blocks = m_Planes * m_BlocksY * m_BlocksX;
  m_UnitsPerBlock.assign(blocks, 0);
  m_DonePerBlock.reset(new std::atomic<std::uint32_t>[blocks]);
  for (std::size_t b = 0; b < blocks; ++b)
  {
    m_DonePerBlock[b].store(0);
  }
  for (std::size_t plane = 0; plane < m_Planes; ++plane)
  {
    const std::size_t z = z0 + plane;
    for (std::size_t colour = 0; colour < 4; ++colour)
    {
      std::vector<std::array<std::size_t, 2>> blocksOfColour; // (by, bx)
      for (std::size_t by = colour / 2; by < m_BlocksY; by += 2)
      {
        for (std::size_t bx = colour % 2; bx < m_BlocksX; bx += 2)
        {
          blocksOfColour.push_back({ by, bx });
        }
      }
      for (std::size_t first = 0; first < blocksOfColour.size(); first += blocksAtOnce)
      {
        const std::size_t last = std::min(blocksOfColour.size(), first + blocksAtOnce);
        for (std::size_t row = 0; row < blockY; ++row)
        {
          for (std::size_t i = first; i < last; ++i)
          {
            const std::size_t by = blocksOfColour[i][0], bx = blocksOfColour[i][1];
            const std::size_t y = by * blockY + row, x0 = bx * blockX, x1 = std::min(nx, x0 + blockX);
            if (y < ny && hasCentre(y, z, x0, x1))
            {
              const auto block = static_cast<std::uint32_t>((plane * m_BlocksY + by) * m_BlocksX + bx);
              m_Units.push_back({ z, y, x0, x1, block, m_UnitsPerBlock[block]++ });
            }
          }
        }
      }
    }
  }
}

bool
OverlapSchedule::IsTurn(const OverlapUnit & unit) const
{
  if (m_DonePerBlock[unit.block].load() != unit.sequence)
  {
    return false; // the block's rows before this one
  }
  const std::size_t plane = unit.block / (m_BlocksY * m_BlocksX);
  const std::size_t by = (unit.block / m_BlocksX) % m_BlocksY, bx = unit.block % m_BlocksX;
  const std::size_t colour = 2 * (by % 2) + bx % 2;
  // Every block before this one in the sum order whose patches may touch its voxels must be complete: the 3 x 3
  // neighbours (a patch reaches at most one block beyond its own) of an earlier colour in this plane, and of any
  // colour in the earlier planes of the step whose patches overlap this plane's along z.
  for (std::size_t earlier = 0; earlier <= plane; ++earlier)
  {
    if (earlier < plane && m_PatchStartZ[plane] > m_PatchStartZ[earlier] + static_cast<std::int64_t>(m_PatchZ) - 1)
    {
      continue;
    }
    for (std::size_t ny = by > 0 ? by - 1 : 0; ny <= std::min(by + 1, m_BlocksY - 1); ++ny)
    {
      for (std::size_t nx = bx > 0 ? bx - 1 : 0; nx <= std::min(bx + 1, m_BlocksX - 1); ++nx)
      {
        if (earlier == plane && 2 * (ny % 2) + nx % 2 >= colour)
        {
          continue; // this plane: same colour (never touches the same voxels) or later
        }
        const std::size_t block = (earlier * m_BlocksY + ny) * m_BlocksX + nx;
        if (m_DonePerBlock[block].load() != m_UnitsPerBlock[block])
        {
          return false;
        }
      }
    }
  }
  return true;
}

bool
OverlapSchedule::WaitForTurn(const OverlapUnit & unit)
{
  if (IsTurn(unit))
  {
    return true;
  }
  std::unique_lock<std::mutex> lock(m_Mutex);
  m_Changed.wait(lock, [&] { return m_Abandoned.load() || IsTurn(unit); });
  return !m_Abandoned.load();
}

void
OverlapSchedule::Done(const OverlapUnit & unit)
{
  {
    // Under the lock, so that a waiter cannot miss the change between its check and its wait.
    const std::lock_guard<std::mutex> lock(m_Mutex);
    m_DonePerBlock[unit.block].fetch_add(1);
  }
  m_Changed.notify_all();
}

void
OverlapSchedule::Abandon()
{
  {
    const std::lock_guard<std::mutex> lock(m_Mutex);
    m_Abandoned = true;
  }
  m_Changed.notify_all();
}

} // namespace detail
} // namespace svdlr
