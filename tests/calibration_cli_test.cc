// The calibration tools as processes: `wipeproof-challenger plan` (table, JSON, SVG, refusal),
// `wipeproof-challenger calibrate` refusing over real loopback TCP (no m fits: nothing written) and
// refusing a tampered node profile before it connects, and `wipeproof-prover bench --what=all`
// writing a signed node profile that the challenger's loader verifies under the node key only.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "challenger/calibration_node_profile.h"
#include "common/hex.h"
#include "proto/key_files.h"
#include "proto/node_profile.h"
#include "tests/challenger_test_agent.h"

namespace wipeproof {
namespace {

struct CliRun {
  int exit_code = -1;
  std::string out, err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

class CalibrationCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/wp-calibration-cli-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    // The keys TcpTestAgent trusts by default, and the node's.
    ASSERT_TRUE(proto::WriteSecretKeyFile(dir_ + "/a.key", testing::TestKey(0x11)).ok());
    ASSERT_TRUE(proto::WriteSecretKeyFile(dir_ + "/c.key", testing::TestKey(0x22)).ok());
    ASSERT_TRUE(proto::WriteSecretKeyFile(dir_ + "/node.key", testing::TestKey(0x33)).ok());
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  CliRun Run(const std::string& binary, const std::string& args) {
    const std::string out = dir_ + "/stdout", err = dir_ + "/stderr";
    const std::string command = "cd " + dir_ + " && " + binary + " " + args + " >" + out + " 2>" + err;
    const int status = std::system(command.c_str());
    CliRun run;
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    run.out = ReadFile(out);
    run.err = ReadFile(err);
    return run;
  }
  CliRun Challenger(const std::string& args) { return Run(WIPEPROOF_CHALLENGER_BIN, args); }
  CliRun Prover(const std::string& args) { return Run(WIPEPROOF_PROVER_BIN, args); }

  void WriteInventory(const std::string& address) {
    const proto::PublicKey node = testing::TestKeyPublic(0x33);
    nlohmann::json inv = {
        {"nodes",
         {{{"name", "n1"},
           {"address", address},
           {"public_key", HexEncode(node.data(), node.size())},
           {"devices", {{{"selector", "host"}, {"model", "host-dram"}, {"capacity_bytes", 64 * 64 * 32}}}}}}},
        {"reserves", {{"host-dram", 0}}}};
    std::ofstream(dir_ + "/inventory.json") << inv.dump(2);
  }

  std::string dir_;
};

TEST_F(CalibrationCliTest, PlanPrintsBothClassesAsJsonAndDrawsTheSvg) {
  CliRun r = Challenger("plan --gpus=8 --verify_rate=1e8 --challenger_cores=64 --json --plot=plan.svg");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["classes"].size(), 2u);
  EXPECT_EQ(j["classes"][0]["class"], "commodity-cpu");
  EXPECT_EQ(j["classes"][0]["chunk_labels"], 16384);
  EXPECT_EQ(j["classes"][1]["chunk_labels"], 131072);
  EXPECT_EQ(j["classes"][0]["round_deadline_us"], 400);
  EXPECT_EQ(j["classes"][0]["rounds"], 11);
  EXPECT_EQ(j["classes"][0]["devices"][0]["count"], 8);
  const std::string svg = ReadFile(dir_ + "/plan.svg");
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("Detection probability"), std::string::npos);
  EXPECT_NE(svg.find("fpga-asic"), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);

  CliRun table = Challenger("plan --gpus=8 --host_memory_gib=512 --verify_rate=1e8 --challenger_cores=64");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("round deadline"), std::string::npos);
  EXPECT_NE(table.out.find("host-dram: chunks"), std::string::npos);
  EXPECT_NE(table.out.find("wipe per wave"), std::string::npos);
}

TEST_F(CalibrationCliTest, PlanRefusesAClassNoMCanCoverAndReadsProfiles) {
  CliRun far = Challenger("plan --gpus=1 --round_p999_us=5000 --class=fpga-asic --verify_rate=1e8");
  EXPECT_EQ(far.exit_code, 1) << far.err;
  EXPECT_NE(far.out.find("refused: no m up to 2^20"), std::string::npos) << far.out;
  std::ofstream(dir_ + "/profile.json") << R"({
      "name": "rack", "chunk_labels": 16384, "rounds": 11, "labels_per_round": 63,
      "round_deadline_us": 400, "fill_deadline_ms": 60000,
      "adversary": {"class": "commodity-cpu", "t_min_ps": 40000, "safety_factor": 2},
      "confidence": 0.999, "calibrated": true, "honest_round_p999_us": 200})";
  CliRun fixed = Challenger("plan --profile=profile.json --gpus=8 --verify_rate=1e8 --json");
  ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
  auto j = nlohmann::json::parse(fixed.out);
  ASSERT_EQ(j["classes"].size(), 1u);
  EXPECT_EQ(j["classes"][0]["rule_satisfied"], true);
  EXPECT_EQ(j["classes"][0]["devices"][0]["labels_per_round"], 63);
  EXPECT_EQ(Challenger("plan --gpus=1 --class=gpu-core --verify_rate=1e8").exit_code, 2);
  EXPECT_EQ(Challenger("plan --gpus=1 --node=x").exit_code, 2);  // a flag plan does not take
}

TEST_F(CalibrationCliTest, CalibrateRefusesOverTcpAndWritesNothing) {
  testing::TcpTestAgent agent(testing::TestKey(0x33));
  WriteInventory(agent.address());
  // Loopback rounds take tens of microseconds at least; the ASIC floor at m <= 2^10 is 3.84 us.
  CliRun r = Challenger(
      "calibrate --node=n1 --inventory=inventory.json --authority_key=a.key --challenger_key=c.key "
      "--class=fpga-asic --max_chunk_labels=1024 --probe_chunk_labels=64 --probe_rounds=50 --labels_per_round=8 "
      "--threads=1 --out=profile.json");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("refused, no profile written"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no m up to 2^10"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("round probe: p50"), std::string::npos) << r.err;
  EXPECT_FALSE(Exists(dir_ + "/profile.json"));
}

TEST_F(CalibrationCliTest, CalibrateRejectsATamperedNodeProfileBeforeConnecting) {
  WriteInventory("127.0.0.1:1");  // nothing listens: the profile check must come first
  const proto::KeyPair node = testing::TestKey(0x33);
  const std::string profile = R"({"format": "wipeproof-node-profile-v1", "devices": []})";
  nlohmann::json doc = nlohmann::json::parse(*proto::SignNodeProfile(profile, node));
  doc["profile"] = R"({"format": "wipeproof-node-profile-v1", "devices": [] })";
  std::ofstream(dir_ + "/tampered.json") << doc.dump();
  const std::string flags =
      "calibrate --node=n1 --inventory=inventory.json --authority_key=a.key --challenger_key=c.key --out=p.json ";
  CliRun r = Challenger(flags + "--node_profile=tampered.json");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("does not verify"), std::string::npos) << r.err;
  EXPECT_FALSE(Exists(dir_ + "/p.json"));
  // Signed by another key: refused too.
  std::ofstream(dir_ + "/foreign.json") << *proto::SignNodeProfile(profile, testing::TestKey(0x44));
  CliRun foreign = Challenger(flags + "--node_profile=foreign.json");
  EXPECT_EQ(foreign.exit_code, 2) << foreign.err;
  EXPECT_NE(foreign.err.find("not by the node's key"), std::string::npos) << foreign.err;
  EXPECT_EQ(Challenger(flags + "--class=nonesuch").exit_code, 2);
}

TEST_F(CalibrationCliTest, BenchAllWritesASignedProfileTheChallengerVerifies) {
  CliRun r = Prover(
      "bench --what=all --fill_chunk_labels=64,256 --fill_gib=0.004 --lookup_samples=50 --lookup_labels=16 "
      "--threads=1 --node_key=node.key --out=node-profile.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto printed = nlohmann::json::parse(r.out);
  EXPECT_EQ(printed["format"], "wipeproof-node-profile-v1");
  auto loaded = LoadSignedNodeProfile(dir_ + "/node-profile.json", testing::TestKeyPublic(0x33));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_FALSE(loaded->devices.empty());
  const NodeDeviceProfile& host = loaded->devices[0];
  EXPECT_EQ(host.id, "host");
  ASSERT_EQ(host.fills.size(), 2u);
  EXPECT_EQ(host.fills[0].chunk_labels, 64u);
  EXPECT_GT(host.fills[1].bytes_per_s, 0);
  EXPECT_EQ(host.lookup.samples, 50u);
  EXPECT_EQ(host.lookup.labels_per_lookup, 16u);
  EXPECT_GT(host.lookup.p999_us, 0);
  EXPECT_EQ(host.one_chunk_labels, 256u);
  EXPECT_GT(loaded->host_sequential_compression_ps, 0);
  EXPECT_EQ(loaded->node_key_id, proto::KeyIdHex(proto::KeyIdOf(testing::TestKeyPublic(0x33))));
  EXPECT_EQ(LoadSignedNodeProfile(dir_ + "/node-profile.json", testing::TestKeyPublic(0x44)).status().code(),
            StatusCode::kPermissionDenied);
  // --out without a key is a usage error.
  EXPECT_EQ(Prover("bench --what=all --out=x.json").exit_code, 2);
}

}  // namespace
}  // namespace wipeproof
