// Deeply nested JSON is refused before any parser or recursive code sees it (common/json_nesting.h):
// the pre-scan itself, ParseJsonText (inventory, profiles, adversary classes), the signed node
// profile, `ledger verify --export/--expect_head` and `selftest --render`.
// threat-model: T-HOSTILE-JSON
#include "common/json_nesting.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "challenger/cli/cli_ledger.h"
#include "challenger/cli/cli_selftest.h"
#include "challenger/ledger/ledger.h"
#include "common/clock.h"
#include "common/json_fields.h"
#include "proto/key_files.h"
#include "proto/node_profile.h"
#include "tests/support/ledger_test_util.h"

namespace wipeproof {
namespace {

std::string Nested(size_t depth, const std::string& open = "[", const std::string& close = "]") {
  std::string text;
  text.reserve(depth * (open.size() + close.size()) + 1);
  for (size_t i = 0; i < depth; ++i) text += open;
  text += "1";
  for (size_t i = 0; i < depth; ++i) text += close;
  return text;
}

void WriteText(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

TEST(CheckJsonNestingTest, AcceptsUpToTheLimitAndRefusesOneMore) {
  EXPECT_EQ(kMaxJsonNesting, 64u);
  EXPECT_TRUE(CheckJsonNesting(Nested(64), "doc").ok());
  Status s = CheckJsonNesting(Nested(65), "doc");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "doc: JSON nested deeper than 64 levels");
  EXPECT_TRUE(CheckJsonNesting(Nested(3), "doc", 3).ok());
  EXPECT_FALSE(CheckJsonNesting(Nested(4), "doc", 3).ok());
}

TEST(CheckJsonNestingTest, CountsObjectsAndArraysButNotBracketsInStrings) {
  EXPECT_FALSE(CheckJsonNesting("{\"a\":[{\"b\":[1]}]}", "doc", 3).ok());
  EXPECT_TRUE(CheckJsonNesting("{\"a\":[{\"b\":1}]}", "doc", 3).ok());
  // 100 brackets inside a string, including after an escaped quote, are text.
  const std::string brackets(100, '[');
  EXPECT_TRUE(CheckJsonNesting("{\"k\":\"" + brackets + "\"}", "doc", 1).ok());
  EXPECT_TRUE(CheckJsonNesting("[\"a\\\"" + brackets + "\"]", "doc", 1).ok());
  EXPECT_TRUE(CheckJsonNesting("[\"a\\\\\"]", "doc", 1).ok());       // escaped backslash ends the string
  EXPECT_FALSE(CheckJsonNesting("[\"a\\\\\",[1]]", "doc", 1).ok());  // so this bracket counts
  // Siblings do not add up: depth, not count.
  EXPECT_TRUE(CheckJsonNesting("[[1],[2],[3],{\"a\":1},{}]", "doc", 2).ok());
}

TEST(ParseJsonTextTest, RefusesDeepNestingInsideAField) {
  const std::string text = "{\"nodes\": " + Nested(200000) + "}";
  auto doc = ParseJsonText(text, "inventory");
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(doc.status().message(), "inventory: JSON nested deeper than 64 levels");

  auto objects = ParseJsonText(Nested(100000, "{\"a\":", "}"), "profile");
  ASSERT_FALSE(objects.ok());
  EXPECT_EQ(objects.status().message(), "profile: JSON nested deeper than 64 levels");
}

TEST(ParseJsonTextTest, ParsesAtTheLimitAndStillNamesNestedDuplicates) {
  auto doc = ParseJsonText(Nested(64), "doc");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  const nlohmann::json* v = &*doc;
  for (int i = 0; i < 64; ++i) v = &(*v)[0];
  EXPECT_EQ(*v, 1);

  auto dup = ParseJsonText(R"({"nodes": [{"name": "a"}, {"devices": [{"x": 1}, {"x": 2, "x": 3}]}]})", "inventory");
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().message(),
            "inventory: nodes[1].devices[1].x: duplicate key (a key may appear only once in an object)");
}

TEST(NodeProfileTest, RefusesDeepNestingBeforeParsing) {
  auto profile = proto::VerifyNodeProfile("{\"profile\": " + Nested(100000) + "}", proto::PublicKey{});
  ASSERT_FALSE(profile.ok());
  EXPECT_EQ(profile.status().message(), "signed node profile: JSON nested deeper than 64 levels");
}

class DeepJsonCliTest : public ::testing::Test {
 protected:
  struct Result {
    int code;
    std::string out;
    std::string err;
  };
  Result RunLedger(std::vector<std::string> args) {
    std::ostringstream out, err;
    const int code = RunLedgerCommand(args, out, err);
    return {code, out.str(), err.str()};
  }
  Result RunSelftest(std::vector<std::string> args) {
    std::ostringstream out, err;
    const int code = RunSelftestCommand(args, out, err);
    return {code, out.str(), err.str()};
  }
  ledger_test::TempDir dir_;
};

TEST_F(DeepJsonCliTest, LedgerVerifyRefusesADeepExportAndExpectedHead) {
  ledger_test::Keys keys;
  const std::string key_path = dir_.File("challenger.pub");
  ASSERT_TRUE(proto::WritePublicKeyFile(key_path, keys.challenger.public_key).ok());
  const std::string deep = dir_.File("deep.json");
  WriteText(deep, "{\"format\": \"x\", \"entries\": " + Nested(100000) + "}");

  Result r = RunLedger({"verify", "--export=" + deep, "--challenger_key=" + key_path});
  EXPECT_EQ(r.code, 2) << r.err;  // not an export it reads: an input to fix
  EXPECT_NE(r.err.find(deep + ": JSON nested deeper than 64 levels"), std::string::npos) << r.err;

  const std::string ledger_path = dir_.File("ledger.db");
  {
    FakeClock clock{1'800'000'000'000'000};
    auto ledger = ledger_test::Must(Ledger::Open(ledger_path, keys.challenger, clock), "Open");
  }
  Result head =
      RunLedger({"verify", "--ledger=" + ledger_path, "--challenger_key=" + key_path, "--expect_head=" + deep});
  EXPECT_EQ(head.code, 2) << head.err;
  EXPECT_NE(head.err.find("JSON nested deeper than 64 levels"), std::string::npos) << head.err;
}

TEST_F(DeepJsonCliTest, SelftestRenderRefusesADeepDocumentAndWritesNothing) {
  const std::string deep = dir_.File("results.json");
  WriteText(deep, "{\"all_match\": true, \"scenarios\": " + Nested(200000) + "}");
  const std::string markdown = dir_.File("o.md");
  Result r = RunSelftest({"--render=" + deep, "--markdown=" + markdown});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(deep + ": JSON nested deeper than 64 levels"), std::string::npos) << r.err;
  EXPECT_FALSE(std::ifstream(markdown).good());
}

}  // namespace
}  // namespace wipeproof
