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
// The magnitude noise model (svdlr/MagnitudeNoise.h) against independent float64 references: the Rician mean in
// The automatic magnitude model (MagnitudeNoiseOptions::automatic, svdlr::MagnitudeNoiseUsed): which series get it,
// and that it is exactly --vst --noise-floor where they do.
#include "svdlr/LocalDenoise.h"
#include "svdlrMagnitudePhantom.h"
#include "svdlrTestSeries.h"

#include <gtest/gtest.h>

#include <vector>

namespace
{

using namespace svdlr::test;

std::string
Used(const svdlr::LocalDenoiseOptions & options, bool negativeValues = false)
{
  return svdlr::MagnitudeNoiseName(svdlr::MagnitudeNoiseUsed(options, negativeValues));
}

TEST(SVDLowRankAutomaticMagnitudeModel, AppliesWhereSigmaIsEstimatedOnAMagnitudeOnly)
{
  svdlr::LocalDenoiseOptions automatic;
  automatic.magnitudeNoise.automatic = true;
  EXPECT_EQ(Used(automatic), "vst+noise-floor");
  EXPECT_FALSE(svdlr::MagnitudeNoiseUsed(automatic, false).automatic);
  EXPECT_EQ(Used(automatic, true), "none"); // a value below 0: no magnitude

  const float given = 1.0f;
  svdlr::LocalDenoiseOptions knownMap = automatic;
  knownMap.noiseSigma = &given;
  EXPECT_EQ(Used(knownMap), "none");
  svdlr::LocalDenoiseOptions knownSigma = automatic;
  knownSigma.policy = svdlr::RankPolicy::MarchenkoPastur();
  knownSigma.policy.noiseSigma = 2.0;
  EXPECT_EQ(Used(knownSigma), "none");
  svdlr::LocalDenoiseOptions fixed = automatic;
  fixed.policy = svdlr::RankPolicy::Fixed(3);
  EXPECT_EQ(Used(fixed), "none");
  svdlr::LocalDenoiseOptions gfactor = automatic;
  gfactor.gfactor = &given;
  EXPECT_EQ(Used(gfactor), "none");
  svdlr::LocalDenoiseOptions estimated = automatic;
  estimated.estimateGFactor = true;
  EXPECT_EQ(Used(estimated), "none");

  // A model asked for is kept as it is, negative values or not; without automatic nothing is added.
  svdlr::LocalDenoiseOptions floorOnly = automatic;
  floorOnly.magnitudeNoise.noiseFloor = true;
  EXPECT_EQ(Used(floorOnly), "noise-floor");
  EXPECT_EQ(Used(floorOnly, true), "noise-floor");
  EXPECT_EQ(Used(svdlr::LocalDenoiseOptions{}), "none");
}

TEST(SVDLowRankAutomaticMagnitudeModel, IsExactlyVstWithTheFloorRemovedAndReportsIt)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const MagnitudePhantom phantom = MakeMagnitudePhantom(8.0, 2.0, 1, random);
  const auto             run = [&](const Series & input, const svdlr::MagnitudeNoiseOptions & model,
                       std::string & used) {
    Series                     output = EmptySeries(input.size, input.volumes);
    svdlr::LocalDenoiseOptions options;
    options.magnitudeNoise = model;
    options.backend = svdlr::Backend::CPU;
    used = svdlr::MagnitudeNoiseName(svdlr::DenoiseLocalLowRank(input.View(), output.View(), {}, options).magnitudeNoise);
    return output.values;
  };
  svdlr::MagnitudeNoiseOptions automatic, explicitModel, plain;
  automatic.automatic = true;
  explicitModel.stabilise = explicitModel.noiseFloor = true;
  std::string usedAutomatic, usedExplicit, usedPlain;
  EXPECT_EQ(run(phantom.magnitude, automatic, usedAutomatic), run(phantom.magnitude, explicitModel, usedExplicit));
  EXPECT_EQ(usedAutomatic, "vst+noise-floor");
  EXPECT_EQ(usedExplicit, "vst+noise-floor");

  // One value below 0 and the series is denoised as it is.
  Series shifted = phantom.magnitude;
  shifted.values[shifted.values.size() / 2] = -1.0f;
  EXPECT_EQ(run(shifted, automatic, usedAutomatic), run(shifted, plain, usedPlain));
  EXPECT_EQ(usedAutomatic, "none");
  EXPECT_EQ(usedPlain, "none");
}

// The stabilised series is denoised in the output in place; a caller denoising in place itself (the output is the
// input) gets the same values.
TEST(SVDLowRankAutomaticMagnitudeModel, InPlaceGivesTheSameSeries)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  const MagnitudePhantom     phantom = MakeMagnitudePhantom(8.0, 2.0, 1, random);
  svdlr::LocalDenoiseOptions options;
  options.magnitudeNoise.automatic = true;
  options.backend = svdlr::Backend::CPU;
  Series apart = EmptySeries(phantom.magnitude.size, phantom.magnitude.volumes);
  svdlr::DenoiseLocalLowRank(phantom.magnitude.View(), apart.View(), {}, options);
  Series inPlace = phantom.magnitude;
  const auto report = svdlr::DenoiseLocalLowRank(inPlace.View(), inPlace.View(), {}, options);
  EXPECT_EQ(svdlr::MagnitudeNoiseName(report.magnitudeNoise), "vst+noise-floor");
  EXPECT_EQ(inPlace.values, apart.values);
}

} // namespace
