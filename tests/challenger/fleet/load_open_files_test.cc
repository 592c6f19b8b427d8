// Open files for wave runs (challenger/fleet/open_files.h): the count a wave needs, the check `serve`
// makes at start, raising the soft limit, and `serve` itself under a low limit: it raises the soft
// limit as far as its waves need (up to the hard one), and refuses at start a wave that cannot fit
// under the hard limit. Each test runs in its own process (ctest), so changing limits is local.
// threat-model: T-LOAD
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "challenger/fleet/open_files.h"
#include "common/hex.h"
#include "proto/key_files.h"
#include "tests/support/run_binary.h"

namespace wipeproof {
namespace {

TEST(OpenFilesTest, NeededCountsEverySessionOnTopOfTheBase) {
  EXPECT_EQ(OpenFilesNeeded(0), 64u);
  EXPECT_EQ(OpenFilesNeeded(1), 69u);  // epoll, eventfd, signalfd, RPC, the round channel
  EXPECT_EQ(OpenFilesNeeded(200), 1064u);
  EXPECT_EQ(OpenFilesNeeded(UINT64_MAX / 2), kUnlimitedOpenFiles);  // saturates, never wraps
}

TEST(OpenFilesTest, RoomChecksTheNeedAgainstTheLimit) {
  EXPECT_TRUE(CheckOpenFileRoom(192, 1024, "wave w").ok());  // 1024 exactly
  Status over = CheckOpenFileRoom(193, 1024, "wave w");
  EXPECT_EQ(over.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(over.message(),
            "wave w needs about 1029 open files (193 concurrent sessions), the limit is 1024; raise it "
            "(ulimit -n, or LimitNOFILE= for a systemd unit)");
  EXPECT_TRUE(CheckOpenFileRoom(1'000'000, kUnlimitedOpenFiles, "wave w").ok());
}

// Sets this test process's soft limit (its hard limit stays); false when it cannot.
bool SetSoftLimit(rlim_t soft) {
  struct rlimit limit {};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return false;
  limit.rlim_cur = soft;
  return setrlimit(RLIMIT_NOFILE, &limit) == 0;
}

rlim_t SoftLimit() {
  struct rlimit limit {};
  return getrlimit(RLIMIT_NOFILE, &limit) == 0 ? limit.rlim_cur : 0;
}

TEST(OpenFilesTest, RaiseLiftsTheSoftLimitAsFarAsWantedAndNeverLowersIt) {
  struct rlimit limit {};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  ASSERT_GE(limit.rlim_max, 200u) << "this test needs a hard limit of at least 200";
  ASSERT_TRUE(SetSoftLimit(100));
  auto raised = RaiseOpenFileLimit(150);
  ASSERT_TRUE(raised.ok()) << raised.status().ToString();
  EXPECT_EQ(*raised, 150u);
  EXPECT_EQ(SoftLimit(), 150u);
  auto kept = RaiseOpenFileLimit(120);  // below the soft limit: left as it is
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(*kept, 150u);
  EXPECT_EQ(SoftLimit(), 150u);
}

TEST(OpenFilesTest, RaiseStopsAtTheHardLimit) {
  struct rlimit limit {};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  ASSERT_GE(limit.rlim_max, 100u);
  ASSERT_TRUE(SetSoftLimit(100));
  auto raised = RaiseOpenFileLimit(kUnlimitedOpenFiles);
  ASSERT_TRUE(raised.ok()) << raised.status().ToString();
  EXPECT_EQ(SoftLimit(), limit.rlim_max);
  EXPECT_EQ(*raised, limit.rlim_max == RLIM_INFINITY ? kUnlimitedOpenFiles : static_cast<uint64_t>(limit.rlim_max));
}

class ServeOpenFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/wp-load-open-files-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    ASSERT_EQ(Run("", "keygen --out=k"), 0) << err_;
    std::ofstream(dir_ + "/profile.json") << R"({
      "name": "open-files-test", "chunk_labels": 64, "rounds": 1, "labels_per_round": 1,
      "round_deadline_us": 500000, "fill_deadline_ms": 60000,
      "adversary": {"class": "commodity-cpu", "t_min_ps": 40000, "safety_factor": 2},
      "confidence": 0.99, "calibrated": false})";
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  // Runs `wipeproof-challenger <args>` in dir_ after `limits` (shell commands); its exit code.
  int Run(const std::string& limits, const std::string& args) {
    const std::string command = "cd " + dir_ + " && " + (limits.empty() ? "" : limits + " && ") +
                                std::string(WIPEPROOF_CHALLENGER_BIN) + " " + args + " >out 2>err";
    const int status = std::system(("sh -c '" + command + "'").c_str());
    err_ = testing::ReadWholeFile(dir_ + "/err");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // One wave of `nodes` nodes, all at a closed loopback port (each session fails at once as
  // `disconnected`), all under one node key (the challenger's authority key: any valid key does).
  void WriteInventory(int nodes) {
    auto key = proto::ReadPublicKeyFile(dir_ + "/k-authority.pub");
    ASSERT_TRUE(key.ok()) << key.status().ToString();
    nlohmann::json inventory = {{"nodes", nlohmann::json::array()}, {"reserves", {{"host-dram", 0}}}};
    nlohmann::json wave = {
        {"name", "big"}, {"nodes", nlohmann::json::array()}, {"period_s", 3600}, {"jitter_s", 60}, {"complete", true}};
    for (int i = 0; i < nodes; ++i) {
      const std::string name = "n" + std::to_string(i);
      inventory["nodes"].push_back(
          {{"name", name},
           {"address", "127.0.0.1:1"},
           {"public_key", HexEncode(key->data(), key->size())},
           {"devices", {{{"selector", "host"}, {"model", "host-dram"}, {"capacity_bytes", 64 * 64 * 32}}}}});
      wave["nodes"].push_back(name);
    }
    inventory["waves"] = {wave};
    std::ofstream(dir_ + "/inventory.json") << inventory.dump(2);
  }

  static constexpr char kServe[] =
      "serve --once --inventory=inventory.json --authority_key=k-authority.key --challenger_key=k-challenger.key "
      "--ledger=ledger.db --profile=profile.json --threads=1 --connect_timeout_s=2";
  std::string dir_, err_;
};

TEST_F(ServeOpenFilesTest, RefusesAtStartAWaveThatCannotFitUnderTheHardLimit) {
  WriteInventory(40);  // needs 64 + 5 * 40 = 264 open files
  EXPECT_EQ(Run("ulimit -n 128", kServe), 3) << err_;  // the environment: the open-file limit
  EXPECT_NE(err_.find("wave big needs about 264 open files (40 concurrent sessions), the limit is 128"),
            std::string::npos)
      << err_;
  EXPECT_NE(access((dir_ + "/ledger.db").c_str(), F_OK), 0) << "refused before the ledger was opened";
}

TEST_F(ServeOpenFilesTest, RaisesTheSoftLimitSoAWaveThatFitsTheHardLimitRuns) {
  WriteInventory(10);  // needs 114: over the soft limit of 64, under the hard limit of 128
  // Every node is unreachable, so every session fails (exit 1), but every one ran: none was refused
  // or failed for want of descriptors.
  EXPECT_EQ(Run("ulimit -n 128 && ulimit -Sn 64", kServe), 1) << err_;
  EXPECT_EQ(err_.find("open files"), std::string::npos) << err_;
  EXPECT_NE(err_.find("10 session(s), 10 failed"), std::string::npos) << err_;
  EXPECT_EQ(err_.find("no session"), std::string::npos) << err_;
}

}  // namespace
}  // namespace wipeproof
