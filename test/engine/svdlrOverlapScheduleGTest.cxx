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
// OverlapSchedule (svdlrOverlapSchedule.h) on random geometries and masks, run by a simulated pool that finishes
// the units it holds in a random order: every two units whose patches touch a common voxel are added in the fixed
// sum order (plane, colour, block, row), whatever order they finish in; the first unit not done may always go (no
// deadlock); and Abandon releases a worker waiting for a turn that will never come. The seed is in every failure.
#include "denoise/svdlrOverlapSchedule.h"
#include "denoise/svdlrPatchGeometry.h"
#include "svdlrTestMatrices.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <tuple>

namespace
{
using svdlr::detail::OverlapSchedule;
using svdlr::detail::OverlapUnit;
using svdlr::test::Random;

struct Geometry
{
  std::size_t                nx, ny, z0, z1, nz;
  std::array<std::size_t, 3> patch;
  std::vector<std::uint8_t>  centres; // x fastest, then y, z
};

Geometry
RandomGeometry(Random & random)
{
  Geometry g;
  for (auto & e : g.patch)
  {
    e = 1 + 2 * static_cast<std::size_t>(random.Uniform(0.0, 3.0)); // 1, 3 or 5
  }
  g.patch[0] = std::max<std::size_t>(g.patch[0], 3); // a patch of one voxel is refused upstream
  g.nx = g.patch[0] + static_cast<std::size_t>(random.Uniform(0.0, 24.0));
  g.ny = g.patch[1] + static_cast<std::size_t>(random.Uniform(0.0, 24.0));
  g.nz = g.patch[2] + static_cast<std::size_t>(random.Uniform(0.0, 8.0));
  g.z0 = static_cast<std::size_t>(random.Uniform(0.0, static_cast<double>(g.nz)));
  g.z1 = std::min(g.nz, g.z0 + 1 + static_cast<std::size_t>(random.Uniform(0.0, 4.0)));
  const double kept = random.Uniform(0.2, 1.0); // the fraction of centres a mask keeps
  g.centres.resize(g.nx * g.ny * g.nz);
  for (auto & c : g.centres)
  {
    c = random.Uniform(0.0, 1.0) < kept;
  }
  return g;
}

std::int64_t
Start(std::size_t centre, std::size_t extent, std::size_t size)
{
  return svdlr::detail::PatchStart(static_cast<std::int64_t>(centre), static_cast<std::int64_t>(extent),
                                   static_cast<std::int64_t>(size));
}

/** The voxels a unit's patches may touch, as [first, last] per axis (x, y, z). */
std::array<std::array<std::int64_t, 2>, 3>
Touched(const Geometry & g, const OverlapUnit & u)
{
  const auto e = [&](int axis) { return static_cast<std::int64_t>(g.patch[axis]) - 1; };
  return { { { Start(u.x0, g.patch[0], g.nx), Start(u.x1 - 1, g.patch[0], g.nx) + e(0) },
             { Start(u.y, g.patch[1], g.ny), Start(u.y, g.patch[1], g.ny) + e(1) },
             { Start(u.z, g.patch[2], g.nz), Start(u.z, g.patch[2], g.nz) + e(2) } } };
}

bool
Overlap(const std::array<std::array<std::int64_t, 2>, 3> & a, const std::array<std::array<std::int64_t, 2>, 3> & b)
{
  for (int axis = 0; axis < 3; ++axis)
  {
    if (a[axis][1] < b[axis][0] || b[axis][1] < a[axis][0])
    {
      return false;
    }
  }
  return true;
}

/** The sum order the denoiser's comments promise: plane, colour (row parity, then column parity of the block),
 * block, row. */
std::tuple<std::size_t, std::size_t, std::size_t, std::size_t, std::size_t>
SumOrder(const Geometry & g, const OverlapUnit & u)
{
  const auto        block = OverlapSchedule::BlockSize(g.patch);
  const std::size_t by = u.y / block[1], bx = u.x0 / block[0];
  return { u.z, 2 * (by % 2) + bx % 2, by, bx, u.y };
}

OverlapSchedule
MakeSchedule(const Geometry & g, std::size_t blocksAtOnce)
{
  std::vector<std::int64_t> startZ;
  for (std::size_t z = g.z0; z < g.z1; ++z)
  {
    startZ.push_back(Start(z, g.patch[2], g.nz));
  }
  return OverlapSchedule(
    g.nx, g.ny, g.patch, g.z0, g.z1, startZ,
    [&g](std::size_t y, std::size_t z, std::size_t x0, std::size_t x1) {
      const auto line = g.centres.begin() + static_cast<std::ptrdiff_t>(g.nx * (y + g.ny * z));
      return std::find(line + x0, line + x1, std::uint8_t{ 1 }) != line + x1;
    },
    blocksAtOnce);
}

TEST(SVDLowRankOverlapSchedule, UnitsTouchingAVoxelAreAddedInTheSumOrderWhateverOrderTheyFinishIn)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  for (int trial = 0; trial < 60; ++trial)
  {
    const Geometry    g = RandomGeometry(random);
    const std::size_t workers = 1 + static_cast<std::size_t>(random.Uniform(0.0, 16.0));
    OverlapSchedule   schedule = MakeSchedule(g, 2 * workers);
    const auto &      units = schedule.Units();
    SCOPED_TRACE("trial " + std::to_string(trial));

    // Every line segment with a centre is a unit, once.
    std::size_t segments = 0;
    for (const auto & u : units)
    {
      ASSERT_TRUE(u.z >= g.z0 && u.z < g.z1 && u.y < g.ny && u.x0 < u.x1 && u.x1 <= g.nx);
      segments += u.x1 - u.x0;
    }
    std::size_t centresInSteps = 0;
    for (std::size_t v = g.nx * g.ny * g.z0; v < g.nx * g.ny * g.z1; ++v)
    {
      centresInSteps += g.centres[v];
    }
    EXPECT_EQ(units.empty(), centresInSteps == 0);

    // A pool of `workers` holds the next units handed out and finishes a random one whose turn has come.
    std::vector<std::size_t> held, finished;
    std::size_t              next = 0;
    std::size_t              firstNotDone = 0;
    std::vector<bool>        done(units.size(), false);
    while (finished.size() < units.size())
    {
      while (held.size() < workers && next < units.size())
      {
        held.push_back(next++);
      }
      std::vector<std::size_t> ready;
      for (std::size_t i = 0; i < held.size(); ++i)
      {
        if (schedule.IsTurn(units[held[i]]))
        {
          ready.push_back(i);
        }
      }
      while (done[firstNotDone])
      {
        ++firstNotDone;
      }
      ASSERT_TRUE(schedule.IsTurn(units[firstNotDone])) << "the first unit not done waits: deadlock";
      ASSERT_FALSE(ready.empty());
      const std::size_t pick = ready[static_cast<std::size_t>(random.Uniform(0.0, static_cast<double>(ready.size())))];
      const std::size_t unit = held[pick];
      held.erase(held.begin() + static_cast<std::ptrdiff_t>(pick));
      schedule.Done(units[unit]);
      done[unit] = true;
      finished.push_back(unit);
    }

    std::vector<std::size_t> position(units.size());
    for (std::size_t i = 0; i < finished.size(); ++i)
    {
      position[finished[i]] = i;
    }
    for (std::size_t a = 0; a < units.size(); ++a)
    {
      for (std::size_t b = a + 1; b < units.size(); ++b)
      {
        if (Overlap(Touched(g, units[a]), Touched(g, units[b])))
        {
          ASSERT_EQ(SumOrder(g, units[a]) < SumOrder(g, units[b]), position[a] < position[b])
            << "units " << a << " and " << b << " touch a common voxel and were added out of the sum order";
        }
      }
    }
  }
}

TEST(SVDLowRankOverlapSchedule, AbandonReleasesAWaitingWorker)
{
  Geometry g;
  g.nx = 20, g.ny = 20, g.nz = 5, g.z0 = 0, g.z1 = 1, g.patch = { 5, 5, 5 };
  g.centres.assign(g.nx * g.ny * g.nz, 1);
  OverlapSchedule schedule = MakeSchedule(g, 1);
  const auto &    units = schedule.Units();
  ASSERT_GT(units.size(), 1u);
  ASSERT_FALSE(schedule.IsTurn(units[1])); // the second row of the first block waits for the first
  bool        turn = true;
  std::thread waiter([&] { turn = schedule.WaitForTurn(units[1]); });
  schedule.Abandon();
  waiter.join();
  EXPECT_FALSE(turn);
}

} // namespace
