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
#include "svdlrPatchGeometry.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdint>
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
  const auto  roomy = svdlr::detail::PlanLocalDenoise(shape, std::size_t{ 8 } << 30, 0, solver, 0);
  EXPECT_EQ(roomy.slabs.size(), 4u);
  EXPECT_EQ(roomy.batch, 15 * 20 * 18);
  const auto capped = svdlr::detail::PlanLocalDenoise(shape, std::size_t{ 8 } << 30, 1000, solver, 0);
  EXPECT_EQ(capped.batch, 1000);
  const std::size_t tight = 2 * svdlr::detail::SlabSlotBytes(shape, 5) + 3 * 30 * 30 * 8 * 4;
  const auto        small = svdlr::detail::PlanLocalDenoise(shape, tight, 0, solver, 0);
  EXPECT_EQ(small.centrePlanes, 1);
  EXPECT_GE(small.batch, 1);
  EXPECT_LE(small.slabBytes + small.batchBytes, tight);
  const auto none = svdlr::detail::PlanLocalDenoise(shape, 1000, 0, solver, 0);
  EXPECT_EQ(none.batch, 0);
}

} // namespace
