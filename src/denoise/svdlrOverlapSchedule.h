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
#ifndef svdlr_OverlapSchedule_h
#define svdlr_OverlapSchedule_h

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace svdlr
{
namespace detail
{

/** One unit of OverlapAverage work: the centres [x0, x1) of line (y, z), one row of a block of centres. */
struct OverlapUnit
{
  std::size_t   z, y, x0, x1;
  std::uint32_t block;    // (plane within the step, block) index
  std::uint32_t sequence; // its place among the units of its block
};

/** The order in which the CPU denoiser's OverlapAverage adds patches to the voxel sums, and the waits that keep it.
 *
 * A plane of centres is cut into blocks of 2 (ey - 1) rows by 2 (ex - 1) columns, coloured by the parity of their row
 * and column: two blocks of one colour are a block apart, and a patch reaches at most e - 1 voxels beyond its centre,
 * so they never touch the same voxel. The sum order is: plane, colour, block, row of the block, x. Units (the non-empty
 * rows of blocks) are handed out plane by plane, colour by colour, and within a colour by groups of blocksAtOnce blocks
 * (the CPU denoiser takes twice its worker count) taken row by row, so that units handed out together belong to
 * different blocks of one colour and rarely wait on each other, while one worker still walks a block's rows in turn
 * (its voxel sums stay in cache: handing out a whole colour row by row cost 28 % more in that step on one thread).
 *
 * A worker decomposes its unit's patches at once (the expensive part, which depends on nothing), adding each as it
 * comes while IsTurn says so (the usual case: the units before it were handed out long before), and otherwise keeping
 * them until WaitForTurn returns, that is until every unit before it in the sum order that touches the same voxels is
 * done; then it calls Done. Each voxel's sum is then formed in the same order whatever the thread count (bit for bit),
 * with no barrier between colours or planes: a worker waits only for a neighbour's additions, a tenth of a unit's time.
 * No deadlock: a unit waits only on units handed out before it, and the first unit not done waits on none. */
class OverlapSchedule
{
public:
  /** The units of centre planes [z0, z1) of an nx by ny plane; patchStartZ[i] is where the patches of plane z0 + i
   * start along z; hasCentre(y, z, x0, x1) says whether line (y, z) holds a centre in [x0, x1); blocksAtOnce: how
   * many blocks of a colour are handed out row by row together. */
  OverlapSchedule(std::size_t nx, std::size_t ny, const std::array<std::size_t, 3> & patch, std::size_t z0,
                  std::size_t z1, const std::vector<std::int64_t> & patchStartZ,
                  const std::function<bool(std::size_t, std::size_t, std::size_t, std::size_t)> & hasCentre,
                  std::size_t blocksAtOnce);

  /** Centres per block along x and y for patches of extent `patch`: each unit is one row of a block, and two blocks
   * of one colour lie a block apart, farther than a patch reaches. */
  static std::array<std::size_t, 2>
  BlockSize(const std::array<std::size_t, 3> & patch);

  /** In the order they are to be handed out. */
  const std::vector<OverlapUnit> &
  Units() const
  {
    return m_Units;
  }

  /** Whether `unit` may add its patches now (once true, true until its Done). */
  bool
  IsTurn(const OverlapUnit & unit) const;

  /** Blocks until `unit` may add its patches. Returns false when the schedule was abandoned (a worker failed). */
  bool
  WaitForTurn(const OverlapUnit & unit);

  /** `unit` has added its patches. */
  void
  Done(const OverlapUnit & unit);

  /** Wakes every waiting worker for good (a worker failed; the units after it will never be done). */
  void
  Abandon();

private:
  std::size_t                                 m_BlocksX{ 0 }, m_BlocksY{ 0 }, m_Planes{ 0 };
  std::vector<std::int64_t>                   m_PatchStartZ;
  std::size_t                                 m_PatchZ{ 1 };
  std::vector<OverlapUnit>                    m_Units;
  std::vector<std::uint32_t>                  m_UnitsPerBlock;
  std::unique_ptr<std::atomic<std::uint32_t>[]> m_DonePerBlock;
  std::atomic<bool>                           m_Abandoned{ false };
  std::mutex                                  m_Mutex;
  std::condition_variable                     m_Changed;
};

} // namespace detail
} // namespace svdlr

#endif
