// `wipeproof-challenger selftest` as a user runs it: JSON with the documented fields, Markdown,
// re-rendering from JSON, and clear errors for bad command lines.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/run_binary.h"

namespace wipeproof {
namespace {

using testing::ReadWholeFile;
using testing::RunBinary;

const std::string kBin = WIPEPROOF_CHALLENGER_BIN;

// --progress=auto (the default) draws only on a terminal: stderr here is a file, so it stays empty;
// never is quiet too; a bad mode is a usage error.
TEST(SelftestCliTest, ProgressOnlyOnATerminalUnlessAlways) {
  for (const std::string mode : {"", " --progress=auto", " --progress=never"}) {
    auto run = RunBinary(kBin, "selftest --adversaries --runs=2 --only=0 --scaffold_m=none --json" + mode);
    ASSERT_EQ(run.exit_code, 0) << mode << ": " << run.err;
    EXPECT_EQ(run.err, "") << mode;
    EXPECT_EQ(nlohmann::json::parse(run.out)["runs_per_scenario"], 2) << mode;
  }
  // --only runs what it names: no scaffold-storage experiment (adversary 8) unless --scaffold_m asks.
  auto always = RunBinary(kBin, "selftest --adversaries --runs=2 --only=0 --json --progress=always");
  ASSERT_EQ(always.exit_code, 0) << always.err;
  EXPECT_EQ(always.err, "\rselftest [1/1] 0-honest: 2/2 runs   \n");
  EXPECT_TRUE(nlohmann::json::parse(always.out)["scaffold"].is_null()) << always.out;
  auto bad = RunBinary(kBin, "selftest --adversaries --progress=sometimes");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--progress: want auto, always or never"), std::string::npos) << bad.err;
}

TEST(SelftestCliTest, WritesJsonAndMarkdownWithTheDocumentedFields) {
  const std::string json_path = ::testing::TempDir() + "/selftest_cli.json";
  const std::string md_path = ::testing::TempDir() + "/selftest_cli.md";
  auto run =
      RunBinary(kBin, "selftest --adversaries --runs=4 --only=0,2,4a,7d --seed=3 --scaffold_m=256 --json=" + json_path +
                          " --markdown=" + md_path + " --progress=always");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("selftest [1/5] 0-honest: 4/4 runs"), std::string::npos) << run.err;  // progress
  EXPECT_NE(run.err.find("selftest: scaffold-storage experiments, m = 256"), std::string::npos) << run.err;
  auto doc = nlohmann::json::parse(ReadWholeFile(json_path));
  EXPECT_EQ(doc["schema"], "wipeproof-selftest/1");
  EXPECT_EQ(doc["runs_per_scenario"], 4);
  EXPECT_EQ(doc["seed"], 3);
  EXPECT_EQ(doc["confidence"], 0.99);
  EXPECT_TRUE(doc["all_match"].get<bool>());
  // Adversary 8 at m = 256: rows for that m only, no stored set beat the outputs it replaces.
  const auto& scaffold = doc["scaffold"];
  EXPECT_TRUE(scaffold["ok"].get<bool>());
  EXPECT_TRUE(scaffold["passed"].get<bool>());
  EXPECT_EQ(scaffold["max_gain"], 0);
  ASSERT_FALSE(scaffold["rows"].empty());
  for (const auto& row : scaffold["rows"]) {
    EXPECT_EQ(row["m"], 256);
    EXPECT_EQ(row["threshold"], 384);
  }
  EXPECT_EQ(doc["setup"]["chunk_labels"], 256);
  EXPECT_EQ(doc["setup"]["round_deadline_us"], 7);
  ASSERT_EQ(doc["scenarios"].size(), 5u);
  const auto& honest = doc["scenarios"][0];
  EXPECT_EQ(honest["id"], "0-honest");
  EXPECT_EQ(honest["expected"], "pass");
  EXPECT_EQ(honest["outcomes"], nlohmann::json({{"pass", 4}}));
  EXPECT_TRUE(honest["caught_by"].is_null());
  const auto& over = doc["scenarios"][2];
  EXPECT_EQ(over["id"], "2-relay-over-deadline");
  EXPECT_EQ(over["caught_by"], "lateRound");
  EXPECT_EQ(over["relay"]["round_us"], 8);
  EXPECT_EQ(doc["scenarios"][3]["caught_by"], "shortCapacity");
  EXPECT_EQ(doc["scenarios"][4]["caught_by"], "badSignature");
  for (const auto& s : doc["scenarios"]) {
    for (const char* field : {"id", "adversary", "title", "description", "expected", "runs", "outcomes", "caught",
                              "caught_by", "hidden_fraction", "challenged_labels_n", "theoretical_rate", "exact_rate",
                              "measured_rate", "cp_lower", "cp_upper", "matches", "judgement"}) {
      EXPECT_TRUE(s.contains(field)) << s["id"] << " lacks " << field;
    }
  }
  const std::string md = ReadWholeFile(md_path);
  EXPECT_NE(md.find("# Security results: adversary selftest"), std::string::npos);
  EXPECT_NE(md.find("| 2-relay-over-deadline | relay, +6 us link | lateRound | 4 | lateRound 4 | lateRound |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("## Adversary 8: scaffold storage"), std::string::npos);
  EXPECT_NE(md.find("**No stored set beat the outputs it replaces**: max gain 0"), std::string::npos) << md;
  EXPECT_NE(md.find("| 256 | "), std::string::npos) << md;

  // Re-rendering from the JSON gives the same document.
  const std::string md2_path = ::testing::TempDir() + "/selftest_cli2.md";
  auto render = RunBinary(kBin, "selftest --render=" + json_path + " --markdown=" + md2_path);
  ASSERT_EQ(render.exit_code, 0) << render.err;
  EXPECT_EQ(ReadWholeFile(md2_path), md);

  // A document whose "all_match" contradicts its own rows is refused, not rendered as a pass.
  doc["scenarios"][1]["matches"] = false;
  const std::string forged_path = ::testing::TempDir() + "/selftest_cli_forged.json";
  std::ofstream(forged_path) << doc.dump();
  auto forged = RunBinary(kBin, "selftest --render=" + forged_path + " --markdown=" + md2_path);
  EXPECT_NE(forged.exit_code, 0);
  EXPECT_NE(forged.err.find("\"all_match\" contradicts"), std::string::npos) << forged.err;
  EXPECT_EQ(ReadWholeFile(md2_path), md);  // untouched
}

TEST(SelftestCliTest, JsonOnStdoutAndSummaryWithoutFiles) {
  auto run = RunBinary(kBin, "selftest --adversaries --runs=2 --only=6a --scaffold_m=none --json --quiet");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, "");
  auto doc = nlohmann::json::parse(run.out);
  EXPECT_EQ(doc["scenarios"][0]["outcomes"], nlohmann::json({{"wrongLabel", 2}}));
  EXPECT_TRUE(doc.contains("scaffold") && doc["scaffold"].is_null());  // --scaffold_m=none

  auto summary = RunBinary(kBin, "selftest --adversaries --runs=2 --only=6a --scaffold_m=none --quiet");
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_NE(summary.out.find("6a-wrong-seed"), std::string::npos);
  EXPECT_NE(summary.out.find("every outcome matches its expectation"), std::string::npos);
}

TEST(SelftestCliTest, BadCommandLinesExitTwoWithAReason) {
  struct Case {
    const char* args;
    const char* message;
  };
  for (const Case& c : {Case{"selftest", "say what to run: --adversaries"},
                        Case{"selftest --adversaries --runs=0", "--runs: want an integer in [1, 1000000]"},
                        Case{"selftest --adversaries --runs=x", "bad value 'x' for --runs"},
                        Case{"selftest --adversaries --confidence=1", "--confidence: want a number in (0, 1)"},
                        Case{"selftest --adversaries --only=9z", "unknown scenario '9z'"},
                        Case{"selftest --adversaries --bogus", "unknown flag '--bogus'"},
                        Case{"selftest --adversaries --scaffold_m=100", "'100' is not a power of two in [4, 65536]"},
                        Case{"selftest --adversaries --scaffold_m=2", "'2' is not a power of two in [4, 65536]"},
                        Case{"selftest --adversaries --scaffold_m=", "--scaffold_m: want a list of m, or none"},
                        Case{"selftest --adversaries --scaffold_m=,", "--scaffold_m: want a list of m, or none"},
                        Case{"selftest --adversaries --only=,", "--only: want scenario ids"},
                        Case{"selftest --render=x.json --markdown=x.md --runs=5", "--render runs nothing; drop --runs"},
                        Case{"selftest --render=/nonexistent.json --markdown=/tmp/x.md", "/nonexistent.json"},
                        Case{"selftest --render=/nonexistent.json", "--render needs --markdown=FILE"}}) {
    auto run = RunBinary(kBin, c.args);
    EXPECT_EQ(run.exit_code, 2) << c.args << ": " << run.err;
    EXPECT_NE(run.err.find(c.message), std::string::npos) << c.args << ": " << run.err;
  }
  auto help = RunBinary(kBin, "selftest --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("-runs (sessions per scenario (1 to 1000000)"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("type: uint64 default: 200"), std::string::npos) << help.out;
}

}  // namespace
}  // namespace wipeproof
