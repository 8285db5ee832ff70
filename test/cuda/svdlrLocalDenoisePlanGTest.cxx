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
// The CUDA denoiser's slab plan (svdlrLocalDenoisePlan), on the host: it needs no device.
#include "cuda/svdlrLocalDenoisePlan.h"
#include "cuda/svdlrSmallEigenSolver.h"
#include "denoise/svdlrPatchGeometry.h"
#include "svdlrTestMatrices.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <vector>

namespace
{
// ---------------------------------------------------------------------------------------------------------------
// The slab plan, on the host.

svdlr::detail::LocalDenoiseShape
ShapeFor(std::int64_t nz, std::int64_t ez)
{
  svdlr::detail::LocalDenoiseShape shape;
  shape.nx = 20, shape.ny = 18, shape.nz = nz, shape.volumes = 30, shape.ex = 5, shape.ey = 5, shape.ez = ez;
  shape.maxVectors = 30;
  return shape;
}

TEST(LocalDenoisePlan, SlabsPartitionTheOutputAndCarryOntoTheNextWindow)
{
  for (const std::int64_t nz : { 1, 3, 5, 7, 13, 60 })
  {
    for (const std::int64_t ez : { 1, 3, 5 })
    {
      if (ez > nz)
      {
        continue;
      }
      for (const std::int64_t planes : { 1, 2, 3, 7, 100 })
      {
        const auto shape = ShapeFor(nz, ez);
        const auto slabs = svdlr::detail::CutSlabs(shape, planes);
        ASSERT_FALSE(slabs.empty());
        EXPECT_EQ(slabs.front().centreFirst, 0);
        EXPECT_EQ(slabs.back().centreLast, nz);
        EXPECT_EQ(slabs.front().outFirst, 0);
        EXPECT_EQ(slabs.back().outLast, nz);
        for (std::size_t s = 0; s < slabs.size(); ++s)
        {
          const auto & e = slabs[s];
          SCOPED_TRACE("nz " + std::to_string(nz) + " ez " + std::to_string(ez) + " planes " + std::to_string(planes) +
                       " slab " + std::to_string(s));
          EXPECT_LE(e.windowLast - e.windowFirst, std::min(nz, planes + ez - 1));
          // Every patch centred in the slab lies in its window.
          for (std::int64_t c = e.centreFirst; c < e.centreLast; ++c)
          {
            const std::int64_t start = svdlr::detail::PatchStart(c, ez, nz);
            EXPECT_GE(start, e.windowFirst);
            EXPECT_LE(start + ez, e.windowLast);
          }
          EXPECT_GE(e.outFirst, e.windowFirst);
          EXPECT_LE(e.outLast, e.windowLast);
          if (s + 1 < slabs.size())
          {
            const auto & next = slabs[s + 1];
            EXPECT_EQ(next.centreFirst, e.centreLast);
            EXPECT_EQ(next.outFirst, e.outLast);
            EXPECT_EQ(next.windowFirst, e.outLast) << "the carried planes start the next window";
            // No later patch writes below outLast.
            for (std::size_t later = s + 1; later < slabs.size(); ++later)
            {
              EXPECT_GE(svdlr::detail::PatchStart(slabs[later].centreFirst, ez, nz), e.outLast);
            }
          }
        }
      }
    }
  }
}

TEST(LocalDenoisePlan, PlanShrinksToTheMemoryAndHonoursTheBatchCap)
{
  const auto  shape = ShapeFor(60, 5);
  const auto  solver = [](std::int64_t batch) { return static_cast<std::size_t>(batch) * 30 * 30 * 8; };
  const auto  roomy = svdlr::detail::PlanLocalDenoise(shape, std::size_t{ 8 } << 30, 0, solver);
  EXPECT_EQ(roomy.slabs.size(), 4u);
  EXPECT_EQ(roomy.batch, 15 * 20 * 18);
  const auto capped = svdlr::detail::PlanLocalDenoise(shape, std::size_t{ 8 } << 30, 1000, solver);
  EXPECT_EQ(capped.batch, 1000);
  const std::size_t tight = 2 * svdlr::detail::SlabSlotBytes(shape, 5) + 3 * 30 * 30 * 8 * 4;
  const auto        small = svdlr::detail::PlanLocalDenoise(shape, tight, 0, solver);
  EXPECT_EQ(small.centrePlanes, 1);
  EXPECT_GE(small.batch, 1);
  EXPECT_LE(small.slabBytes + small.batchBytes, tight);
  const auto none = svdlr::detail::PlanLocalDenoise(shape, 1000, 0, solver);
  EXPECT_EQ(none.batch, 0);
}

// ---------------------------------------------------------------------------------------------------------------
// The device memory limit (LocalDenoiseOptions::deviceMemoryLimit).

TEST(LocalDenoisePlan, BudgetIsTheFreeMemoryCappedByTheLimitLessTheFixedBuffers)
{
  using svdlr::detail::PlanBudgetBytes;
  EXPECT_EQ(PlanBudgetBytes(1000, 0, 100), 900u) << "no limit: what is free";
  EXPECT_EQ(PlanBudgetBytes(1000, 400, 100), 300u) << "the limit binds";
  EXPECT_EQ(PlanBudgetBytes(300, 400, 100), 200u) << "the free memory binds";
  EXPECT_EQ(PlanBudgetBytes(1000, 100, 100), 0u) << "the fixed buffers take the whole limit";
  EXPECT_EQ(PlanBudgetBytes(1000, 50, 100), 0u);
}

/** The local denoiser's own solver's workspace, as the CUDA backend sizes it (host arithmetic). */
std::function<std::size_t(std::int64_t)>
OwnSolverBytes(const svdlr::detail::LocalDenoiseShape & shape)
{
  const std::int64_t n = std::min(shape.ex * shape.ey * shape.ez, shape.volumes);
  return [n, k = shape.maxVectors](std::int64_t batch) { return svdlr::detail::SmallEigenSolver::WorkspaceBytes(n, batch, k); };
}

// Every limit from nothing to more than the roomiest plan: a plan whose slabs, batch and fixed buffers fit the limit
// whenever the smallest plan does, and none (the denoiser's clear error) when it does not. Two shapes: a small series
// and the 176 x 176 x 120 x 200 series of issue 20, whose 8 GiB plan is printed.
TEST(LocalDenoisePlan, EveryLimitGivesAPlanWithinItOrNoneWhenTheSmallestDoesNotFit)
{
  svdlr::test::Random random;
  SCOPED_TRACE(random.SeedTrace());
  std::cout << random.SeedTrace() << std::endl;
  svdlr::detail::LocalDenoiseShape large;
  large.nx = 176, large.ny = 176, large.nz = 120, large.volumes = 200, large.ex = 7, large.ey = 7, large.ez = 7;
  large.overlap = true, large.maxVectors = 200, large.maps = true;
  for (const auto & shape : { ShapeFor(60, 5), large })
  {
    const auto        solver = OwnSolverBytes(shape);
    const std::size_t fixed = static_cast<std::size_t>(shape.nx * shape.ny * shape.nz) * 5; // a mask and a σ map
    const std::size_t smallest = fixed + svdlr::detail::SmallestPlanBytes(shape, solver);
    const auto        roomy = svdlr::detail::PlanLocalDenoise(shape, ~std::size_t{ 0 } / 4, 0, solver);
    const std::size_t most = fixed + roomy.slabBytes + roomy.batchBytes;
    std::vector<std::size_t> limits{ 1, fixed, smallest - 1, smallest, smallest + 1, most, 2 * most };
    for (int i = 0; i < 200; ++i)
    {
      limits.push_back(static_cast<std::size_t>(random.Uniform(0.0, 1.2 * static_cast<double>(most))));
    }
    for (const std::size_t limit : limits)
    {
      const std::size_t budget = svdlr::detail::PlanBudgetBytes(~std::size_t{ 0 } / 4, limit, fixed);
      const auto        plan = svdlr::detail::PlanLocalDenoise(shape, budget, 0, solver);
      if (limit < smallest)
      {
        EXPECT_EQ(plan.batch, 0) << "limit " << limit << " is below the smallest plan's " << smallest;
        continue;
      }
      ASSERT_GE(plan.batch, 1) << "limit " << limit << ", smallest plan " << smallest;
      EXPECT_LE(fixed + plan.slabBytes + plan.batchBytes, limit);
      EXPECT_EQ(plan.slabBytes, 2 * svdlr::detail::SlabSlotBytes(shape, std::min(shape.nz, plan.centrePlanes + shape.ez - 1)));
      EXPECT_EQ(plan.batchBytes, svdlr::detail::BatchBytes(shape, plan.batch, solver));
      EXPECT_EQ(plan.slabs.back().centreLast, shape.nz);
      const std::int64_t cap = std::min<std::int64_t>(roomy.batch, plan.centrePlanes * shape.nx * shape.ny);
      if (plan.batch < cap)
      {
        EXPECT_GT(fixed + plan.slabBytes + svdlr::detail::BatchBytes(shape, plan.batch + 1, solver), limit)
          << "limit " << limit << ": the batch of " << plan.batch << " does not fill what the slabs leave";
      }
    }
  }
  const auto        solver = OwnSolverBytes(large);
  const std::size_t eightGiB = std::size_t{ 8 } << 30;
  const auto        plan = svdlr::detail::PlanLocalDenoise(
    large, svdlr::detail::PlanBudgetBytes(~std::size_t{ 0 } / 4, eightGiB, 0), 0, solver);
  ASSERT_GE(plan.batch, 1);
  std::cout << "176 x 176 x 120 x 200 in 8 GiB: " << plan.slabs.size() << " slabs of " << plan.centrePlanes
            << " centre planes, batches of " << plan.batch << " patches, " << (plan.slabBytes >> 20) << " MiB of slabs, "
            << (plan.batchBytes >> 20) << " MiB per batch" << std::endl;
}

} // namespace
