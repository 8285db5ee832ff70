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
// The rank policy's names, labels and validity (svdlr/RankPolicy.h): every policy's name parses back to it, and
// every parameter that sets two runs apart shows in the output tag, the description and the derivation.
#include "svdlr/Names.h"
#include "svdlr/RankPolicy.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace
{

using svdlr::MarchenkoPasturEstimator;
using svdlr::RankPolicy;

// One run of every policy, and of each policy with each parameter that changes its result.
std::vector<RankPolicy>
DistinctRuns()
{
  return { RankPolicy::Fixed(20),
           RankPolicy::Fixed(5),
           RankPolicy::Energy(0.95),
           RankPolicy::Energy(0.5),
           RankPolicy::GavishDonoho(),
           RankPolicy::GavishDonoho(12.5),
           RankPolicy::GavishDonoho(3.0),
           RankPolicy::MarchenkoPastur(MarchenkoPasturEstimator::Veraart2016),
           RankPolicy::MarchenkoPastur(MarchenkoPasturEstimator::CorderoGrande2019),
           RankPolicy::Nordic(),
           RankPolicy::Nordic(12.5) };
}

// "a, b or c" -> { "a", "b", "c" }
std::vector<std::string>
SplitNames(std::string list)
{
  for (const std::string separator : { ", ", " or " })
  {
    for (std::size_t at = list.find(separator); at != std::string::npos; at = list.find(separator))
    {
      list.replace(at, separator.size(), " ");
    }
  }
  std::vector<std::string> names;
  std::istringstream       words(list);
  for (std::string word; words >> word;)
  {
    names.push_back(word);
  }
  return names;
}

} // namespace

TEST(SVDLowRankRankPolicy, EveryRunsNameParsesBackToItsKindAndEstimator)
{
  for (const RankPolicy & run : DistinctRuns())
  {
    const std::string name = svdlr::PolicyName(run);
    RankPolicy        parsed = RankPolicy::Fixed(7);
    ASSERT_TRUE(svdlr::ParsePolicyName(name, parsed)) << name;
    EXPECT_EQ(parsed.kind, run.kind) << name;
    EXPECT_EQ(std::string(svdlr::PolicyName(parsed)), name);
    EXPECT_EQ(svdlr::RankPolicyProblem(parsed), "") << name;
    EXPECT_EQ(svdlr::RankPolicyProblem(run), "") << name;
    if (run.kind == RankPolicy::Kind::MarchenkoPastur)
    {
      EXPECT_EQ(parsed.estimator, run.estimator) << name;
    }
  }
}

TEST(SVDLowRankRankPolicy, EveryListedNameParsesAndNoiseNamesAreTheNoiseSubset)
{
  std::set<std::string> all;
  for (const std::string & name : SplitNames(svdlr::PolicyNames()))
  {
    RankPolicy policy;
    ASSERT_TRUE(svdlr::ParsePolicyName(name, policy)) << name;
    EXPECT_EQ(std::string(svdlr::PolicyName(policy)), name);
    all.insert(name);
  }
  EXPECT_EQ(all.size(), 6u) << svdlr::PolicyNames();
  EXPECT_EQ(SplitNames(svdlr::PolicyNames()), svdlr::PolicyNameList());
  EXPECT_EQ(SplitNames(svdlr::NoiseRankNames()), svdlr::PolicyNameList(true));
  for (const std::string & name : SplitNames(svdlr::NoiseRankNames()))
  {
    RankPolicy policy;
    ASSERT_TRUE(svdlr::ParseNoiseRank(name, policy)) << name;
    EXPECT_EQ(all.count(name), 1u) << name;
    EXPECT_NE(std::string(svdlr::NoiseRankDescription(policy)), "") << name;
  }
  RankPolicy policy = RankPolicy::GavishDonoho();
  EXPECT_FALSE(svdlr::ParseNoiseRank("fixed", policy));
  EXPECT_FALSE(svdlr::ParsePolicyName("rank", policy));
  EXPECT_EQ(policy.kind, RankPolicy::Kind::GavishDonoho);
}

TEST(SVDLowRankRankPolicy, DistinctRunsHaveDistinctTagsDescriptionsAndDerivations)
{
  std::set<std::string> tags;
  std::set<std::string> descriptions;
  std::set<std::string> derivations;
  for (const RankPolicy & run : DistinctRuns())
  {
    const std::string tag = svdlr::OutputTag(run);
    EXPECT_TRUE(tags.insert(tag).second) << tag;
    EXPECT_TRUE(descriptions.insert(svdlr::PolicyDescription(run)).second) << svdlr::PolicyDescription(run);
    EXPECT_TRUE(derivations.insert(svdlr::SliceDerivationDescription(run)).second)
      << svdlr::SliceDerivationDescription(run);
    EXPECT_EQ(tag.find_first_of(" /\\:"), std::string::npos) << tag << " is not a part of a file name";
  }
}

TEST(SVDLowRankRankPolicy, LabelsCarryTheParametersAndTheNoisePolicysName)
{
  EXPECT_EQ(svdlr::OutputTag(RankPolicy::Fixed(20)), "svd-rank20");
  EXPECT_EQ(svdlr::OutputTag(RankPolicy::GavishDonoho(12.5)), "svd-gd-sigma12.5");
  EXPECT_EQ(svdlr::OutputTag(RankPolicy::MarchenkoPastur(MarchenkoPasturEstimator::CorderoGrande2019)),
            "svd-mp-cordero2019");
  EXPECT_EQ(svdlr::PolicyDescription(RankPolicy::Energy(0.95)), "SVD energy 0.95");
  EXPECT_EQ(svdlr::PolicyDescription(RankPolicy::GavishDonoho(12.5)), "SVD noise rank gd sigma 12.5");
  for (const RankPolicy & run : DistinctRuns())
  {
    const std::string noiseName = svdlr::NoiseRankName(run);
    if (!noiseName.empty())
    {
      EXPECT_EQ(svdlr::PolicyDescription(run).substr(0, 15 + noiseName.size()), "SVD noise rank " + noiseName);
    }
  }
  // The derivation reads as a sentence about the slice, without the description's "SVD rank" said twice.
  EXPECT_EQ(svdlr::SliceDerivationDescription(RankPolicy::Fixed(10)),
            "Each slice replaced by its rank-10 truncated SVD reconstruction");
}

TEST(SVDLowRankRankPolicy, InvalidParametersAreNamedAndTheSubspaceRuleComesAfterThem)
{
  EXPECT_NE(svdlr::RankPolicyProblem(RankPolicy::Fixed(0)).find("rank must be at least 1"), std::string::npos);
  EXPECT_NE(svdlr::RankPolicyProblem(RankPolicy::Energy(1.5)).find("energy fraction"), std::string::npos);
  EXPECT_NE(svdlr::RankPolicyProblem(RankPolicy::GavishDonoho(-1.0)).find("noise sigma"), std::string::npos);
  EXPECT_EQ(svdlr::RankPolicyProblem(RankPolicy::GavishDonoho()), "");
  EXPECT_EQ(svdlr::PolicyProblem(RankPolicy::GavishDonoho(), svdlr::Solver::Exact), "");
  EXPECT_NE(svdlr::PolicyProblem(RankPolicy::GavishDonoho(), svdlr::Solver::Subspace), "");
  EXPECT_EQ(svdlr::PolicyProblem(RankPolicy::Fixed(0), svdlr::Solver::Subspace),
            svdlr::RankPolicyProblem(RankPolicy::Fixed(0)));
}
