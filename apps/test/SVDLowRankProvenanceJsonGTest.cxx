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
// The provenance document (SVDLowRankProvenance.h) as text: what reaches a sidecar or --json's stdout is JSON that
// any parser reads (no NaN or Inf, no bytes that are not UTF-8), its keys in the order the docs show, and its
// numbers typed as before (whole numbers as integers).
#include "SVDLowRankProvenance.h"
#include "svdlrTestScratch.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

namespace
{
using svdlr_tools::Json;
using svdlr_tools::JsonNumber;
using svdlr_tools::JsonText;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/** The keys of `object`, in order. */
std::vector<std::string>
KeysOf(const Json & object)
{
  std::vector<std::string> keys;
  for (const auto & item : object.items())
  {
    keys.push_back(item.key());
  }
  return keys;
}

/** A record with no inputs to hash. */
svdlr_tools::Provenance
SmallRecord()
{
  svdlr_tools::Provenance record;
  record.tool = "SVDLowRankDenoiseSeries";
  record.commandLine = { "SVDLowRankDenoiseSeries", "dwi.nii.gz", "out.nii.gz" };
  record.parameters["policy"] = "mp";
  record.parameters["patch"] = { 5, 5, 5 };
  record.outputs = { "out.nii.gz" };
  record.ranks = { 4.0, 2.0, 3.0 };
  record.sigmas = { 1.5, 2.5, 0.5 };
  record.backend = "CPU";
  record.started = "2026-11-25T18:30:00Z";
  record.seconds = 4.25;
  return record;
}

TEST(ProvenanceJson, NonFiniteNumbersAreNull)
{
  EXPECT_TRUE(JsonNumber(kNaN).is_null());
  EXPECT_TRUE(JsonNumber(kInf).is_null());
  EXPECT_TRUE(JsonNumber(-kInf).is_null());

  auto record = SmallRecord();
  record.sigmas = { kNaN, kInf };         // no finite sigma: no summary
  record.seconds = kNaN;
  record.parameters["noiseSigma"] = JsonNumber(kInf);
  const std::string text = JsonText(svdlr_tools::ProvenanceJson(record));
  EXPECT_EQ(text.find("nan"), std::string::npos) << text;
  EXPECT_EQ(text.find("inf"), std::string::npos) << text;
  const Json parsed = Json::parse(text); // throws on anything that is not JSON
  EXPECT_TRUE(parsed["sigma"].is_null()) << text;
  EXPECT_TRUE(parsed["seconds"].is_null()) << text;
  EXPECT_TRUE(parsed["parameters"]["noiseSigma"].is_null()) << text;
}

TEST(ProvenanceJson, SummariesSkipNonFiniteValuesAndRanges)
{
  auto record = SmallRecord();
  record.ranks = { 4.0, kNaN, 2.0 };
  record.sigmas.clear();
  record.sigmaRange = std::make_pair(kNaN, kNaN); // the batch path's range where no noise was estimated
  const Json document = svdlr_tools::ProvenanceJson(record);
  EXPECT_EQ(document["rank"], Json({ { "min", 2 }, { "median", 4 }, { "max", 4 }, { "count", 2 } }));
  EXPECT_TRUE(document["sigma"].is_null());

  record.ranks.clear();
  record.rankRange = std::make_pair(3.0, 5.0);
  EXPECT_EQ(svdlr_tools::ProvenanceJson(record)["rank"], Json({ { "min", 3 }, { "max", 5 } }));
}

TEST(ProvenanceJson, WholeNumbersAreIntegersAndFractionsRoundTrip)
{
  EXPECT_EQ(JsonText(JsonNumber(20.0)), "20\n");
  EXPECT_TRUE(JsonNumber(-3.0).is_number_integer());
  EXPECT_EQ(JsonText(JsonNumber(0.25)), "0.25\n");
  const double third = 1.0 / 3.0;
  EXPECT_EQ(Json::parse(JsonText(JsonNumber(third))).get<double>(), third);
  EXPECT_TRUE(JsonNumber(1e300).is_number_float()); // past 2^53: kept a double, not cast to an integer
}

TEST(ProvenanceJson, KeysKeepTheDocumentedOrder)
{
  const Json parsed = Json::parse(JsonText(svdlr_tools::ProvenanceJson(SmallRecord())));
  EXPECT_EQ(KeysOf(parsed),
            (std::vector<std::string>{ "tool", "version", "gitDescribe", "commandLine", "parameters", "inputs",
                                       "outputs", "rank", "sigma", "backend", "solver", "device", "notes", "started",
                                       "seconds" }));
  EXPECT_EQ(KeysOf(parsed["parameters"]), (std::vector<std::string>{ "policy", "patch" }));
  EXPECT_EQ(KeysOf(parsed["rank"]), (std::vector<std::string>{ "min", "median", "max", "count" }));
  EXPECT_TRUE(parsed["solver"].is_null()); // no choice of solver
  EXPECT_TRUE(parsed["device"].is_null()); // the CPU
}

TEST(ProvenanceJson, TextIsTwoSpaceIndentedWithOneSpaceAfterEachColon)
{
  const Json document = { { "magnitudeNoise", "vst+noise-floor" }, { "echoes", 3 } };
  EXPECT_EQ(JsonText(document), "{\n  \"magnitudeNoise\": \"vst+noise-floor\",\n  \"echoes\": 3\n}\n");
}

TEST(ProvenanceJson, StringsAreEscapedAndBytesThatAreNotUtf8Replaced)
{
  auto              record = SmallRecord();
  const std::string quoted = "a \"b\" c\\d\ne\x01";
  const std::string latin1 = "caf\xe9.nii.gz"; // a Latin-1 file name
  record.commandLine = { quoted, latin1 };
  const std::string text = JsonText(svdlr_tools::ProvenanceJson(record));
  const Json        parsed = Json::parse(text);
  EXPECT_EQ(parsed["commandLine"][0], quoted);
  EXPECT_EQ(parsed["commandLine"][1], "caf\xEF\xBF\xBD.nii.gz") << "U+FFFD for the byte that is not UTF-8";
  EXPECT_NE(text.find("\\u0001"), std::string::npos) << text;
}

TEST(ProvenanceJson, MapSidecarPutsTheMapFirstThenTheRun)
{
  const Json run = svdlr_tools::ProvenanceJson(SmallRecord());
  const Json sidecar = svdlr_tools::MapSidecarJson(run, svdlr::kNoiseMap, { "dwi.nii.gz", "echo2.nii.gz" });
  const auto keys = KeysOf(sidecar);
  ASSERT_EQ(keys.size(), KeysOf(run).size() + 3);
  EXPECT_EQ(std::vector<std::string>(keys.begin(), keys.begin() + 4),
            (std::vector<std::string>{ "Description", "Units", "Sources", "tool" }));
  EXPECT_EQ(sidecar["Description"], svdlr::kNoiseMap.description);
  EXPECT_EQ(sidecar["Sources"], Json({ "dwi.nii.gz", "echo2.nii.gz" }));
  EXPECT_EQ(sidecar["parameters"], run["parameters"]);
}

class ProvenanceJsonFile : public svdlr_test::RandomTest
{};

TEST_F(ProvenanceJsonFile, WrittenAtomicallyAsItsText)
{
  const Json        document = svdlr_tools::ProvenanceJson(SmallRecord());
  const std::string path = (m_Directory / "out.json").string();
  std::ofstream(path) << "an older sidecar";
  svdlr_tools::WriteJsonAtomically(document, path); // replaces it
  std::ifstream     file(path, std::ios::binary);
  const std::string written((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_EQ(written, JsonText(document));
  EXPECT_EQ(std::distance(svdlr_test::fs::directory_iterator(m_Directory), svdlr_test::fs::directory_iterator()), 1)
    << "no temporary left beside it";
}

} // namespace
