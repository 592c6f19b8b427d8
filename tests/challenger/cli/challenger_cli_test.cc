// wipeproof-challenger, run as a process: keygen, exit codes, `wipe` and `serve --once` over TCP
// against the cheating agent served from this process (tests/support/challenger_fixtures.h), and the ledger they write
// verified with `ledger verify`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "challenger/ledger/ledger.h"
#include "challenger/ledger/ledger_records.h"
#include "common/clock.h"
#include "common/hex.h"
#include "proto/key_files.h"
#include "proto/tls_certificate.h"
#include "tests/support/challenger_fixtures.h"
#include "tests/support/cli_help_check.h"
#include "tests/support/ledger_test_util.h"
#include "tests/support/run_binary.h"

namespace wipeproof {
namespace {

using CliRun = testing::BinaryRun;
using testing::ReadWholeFile;

class ChallengerCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/wp-challenger-cli-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    std::ofstream(dir_ + "/profile.json") << R"({
      "name": "cli-test", "chunk_labels": 64, "rounds": 4, "labels_per_round": 8,
      "round_deadline_us": 500000, "fill_deadline_ms": 60000,
      "adversary": {"class": "commodity-cpu", "t_min_ps": 40000, "safety_factor": 2},
      "confidence": 0.99, "calibrated": false})";
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  // Runs `wipeproof-challenger <args>` in dir_.
  CliRun Challenger(const std::string& args) { return testing::RunBinary(WIPEPROOF_CHALLENGER_BIN, args, dir_); }

  // The node certificates an inventory pins: n1.crt (key 0x33) and n2.crt (key 0x44).
  void WriteNodeCertificates() {
    ASSERT_TRUE(proto::WriteCertificateFile(dir_ + "/n1.crt", testing::TestKey(0x33), true).ok());
    ASSERT_TRUE(proto::WriteCertificateFile(dir_ + "/n2.crt", testing::TestKey(0x44), true).ok());
  }

  void WriteInventory(const std::string& address) {
    WriteNodeCertificates();
    const proto::PublicKey node = testing::TestKeyPublic(0x33);
    nlohmann::json inv = {
        {"nodes",
         {{{"name", "n1"},
           {"address", address},
           {"public_key", HexEncode(node.data(), node.size())},
           {"certificate_file", "n1.crt"},
           {"devices", {{{"selector", "host"}, {"model", "host-dram"}, {"capacity_bytes", 64 * 64 * 32}}}}}}},
        {"waves", {{{"name", "w1"}, {"nodes", {"n1"}}, {"period_s", 3600}, {"jitter_s", 60}, {"complete", true}}}},
        {"reserves", {{"host-dram", 0}}}};
    std::ofstream(dir_ + "/inventory.json") << inv.dump(2);
  }

  std::string SessionFlags() {
    return "--inventory=inventory.json --authority_key=k-authority.key --challenger_key=k-challenger.key "
           "--ledger=ledger.db --profile=profile.json --threads=1";
  }

  proto::PublicKey Pub(const std::string& name) {
    auto key = proto::ReadPublicKeyFile(dir_ + "/" + name);
    EXPECT_TRUE(key.ok()) << key.status().ToString();
    return key.ok() ? *key : proto::PublicKey{};
  }

  // The challenger certificate keygen wrote (k-challenger.crt), pinned against k-challenger.pub.
  proto::PinnedCertificate ChallengerCertificate() {
    auto pinned = proto::ReadPinnedCertificate(dir_ + "/k-challenger.crt", Pub("k-challenger.pub"));
    EXPECT_TRUE(pinned.ok()) << pinned.status().ToString();
    return pinned.ok() ? *pinned : proto::PinnedCertificate{};
  }

  std::string dir_;
};

TEST_F(ChallengerCliTest, UsageErrorsExitTwo) {
  EXPECT_EQ(Challenger("").exit_code, 2);
  EXPECT_EQ(Challenger("frobnicate").exit_code, 2);
  CliRun help = Challenger("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("keygen"), std::string::npos);
  CliRun version = Challenger("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out, "wipeproof-challenger " WIPEPROOF_TEST_VERSION " (wipe protocol version 3)\n");
  CliRun stray = Challenger("wipe --out=x");
  EXPECT_EQ(stray.exit_code, 2);
  EXPECT_EQ(stray.err, "wipeproof-challenger wipe: --out does not apply to wipe\n");
  CliRun unknown = Challenger("wipe --node=a --frobnicate");  // gflags alone would exit 1
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err,
            "wipeproof-challenger wipe: unknown flag '--frobnicate' (see wipeproof-challenger wipe --help)\n");
  EXPECT_EQ(Challenger("wipe --inventory=inventory.json").exit_code, 2);  // no --node
  EXPECT_EQ(Challenger("keygen").exit_code, 2);                           // no --out
}

// The exit-code table (common/cli_exit_codes.h) over the challenger's error classes, each with the
// words of its message: no status code name, no "sqlite:", one line on stderr.
TEST_F(ChallengerCliTest, ExitCodesFollowTheTableAndMessagesAreWords) {
  ASSERT_EQ(Challenger("keygen --out=k").exit_code, 0);
  WriteInventory("127.0.0.1:1");
  // A ledger with one (failed: nobody listens on port 1) session in it.
  ASSERT_EQ(Challenger("wipe --node=n1 --connect_timeout_s=2 " + SessionFlags()).exit_code, 1);
  const std::string other_key = " --challenger_key=k-authority.pub";  // a real key, not this ledger's
  struct Case {
    std::string args;
    int exit_code;
    std::string words;  // expected on stderr
  } cases[] = {
      // 2: a key that did not sign this ledger.
      {"ledger verify --ledger=ledger.db" + other_key, 2, "was written by challenger key "},
      {"ledger show --ledger=ledger.db" + other_key, 2, "was written by challenger key "},
      {"status --inventory=inventory.json --ledger=ledger.db" + other_key, 2, "was written by challenger key "},
      // 2: a file that is not a ledger.
      {"ledger verify --ledger=inventory.json --challenger_key=k-challenger.pub", 2,
       "inventory.json is not a wipeproof ledger (SQLite)"},
      {"status --inventory=inventory.json --ledger=profile.json --challenger_key=k-challenger.pub", 2,
       "profile.json is not a wipeproof ledger (SQLite)"},
      {"ledger verify --ledger=absent.db --challenger_key=k-challenger.pub", 2, "ledger absent.db: No such file"},
      // 2: an output into a folder that does not exist.
      {"ledger export --ledger=ledger.db --challenger_key=k-challenger.pub --out=absent/e.json", 2,
       "cannot write absent/e.json: the folder absent does not exist; create it first"},
      {"keygen --out=absent/k", 2, "the folder absent does not exist; create it first"},
      // 2: a public key where the secret one is needed, named before its (public) mode.
      {"wipe --node=n1 --inventory=inventory.json --authority_key=k-authority.pub --challenger_key=k-challenger.key "
       "--ledger=ledger.db --profile=profile.json",
       2, "k-authority.pub is a public key file; this needs the secret key file (PREFIX.key)"},
      // 2: values gflags would refuse with its own exit 1, and plan's GPU count.
      {"wipe --node=n1 --threads=many " + SessionFlags(), 2, "bad value 'many' for --threads (want a whole number)"},
      {"plan --gpus=0 --verify_rate=1e7", 2, "--gpus must be in [1, 256] GPUs per node, got 0"},
      {"plan --gpus=8 --verify_rate=1e7 --compute_rate=-1", 2,
       "--compute_rate must be in [1000, 1e16] compressions/s, or 0 (not shown)"},
      {"plan --gpus=4000000 --verify_rate=1e7", 2, "--gpus must be in [1, 256] GPUs per node, got 4000000"},
      // 2: a wipe period that is no period, or shorter than one wipe (fill + rounds) takes.
      {"plan --gpus=8 --verify_rate=1e7 --fleet_nodes=10 --period_s=0", 2,
       "--period_s must be a positive number of seconds (how often each node is wiped), got 0"},
      {"plan --gpus=8 --verify_rate=1e7 --fleet_nodes=10 --period_s=5", 2,
       "--period_s=5 is shorter than one wipe takes: at least 60 s (class fpga-asic: fill + rounds)"},
      // 2: a ledger in a folder that does not exist (SQLite alone says "unable to open database file").
      {"wipe --node=n1 --inventory=inventory.json --authority_key=k-authority.key --challenger_key=k-challenger.key "
       "--profile=profile.json --ledger=nofolder/l.db",
       2, "--ledger=nofolder/l.db: the folder nofolder does not exist; create it first"},
      {"serve --once --inventory=inventory.json --authority_key=k-authority.key --challenger_key=k-challenger.key "
       "--profile=profile.json --ledger=nofolder/l.db",
       2, "--ledger=nofolder/l.db: the folder nofolder does not exist; create it first"},
      {"status --inventory=inventory.json --challenger_key=k-challenger.pub --ledger=nofolder/l.db", 2,
       "ledger nofolder/l.db: No such file or directory"},
      // 2: gflags' own flags are no flags of ours: they would read a file or the environment behind the
      // subcommand's back (--flagfile=/dev/zero grows without end), or exit 1 with gflags' texts.
      {"plan --gpus=8 --flagfile=/dev/zero", 2,
       "wipeproof-challenger plan: unknown flag '--flagfile' (see wipeproof-challenger plan --help)"},
      {"status --fromenv=HOME", 2, "unknown flag '--fromenv'"},
      {"ledger show --helpfull", 2, "unknown flag '--helpfull'"},
      // 2: an output that is the input: writing it would destroy the ledger (or the document to sign).
      {"ledger export --ledger=ledger.db --challenger_key=k-challenger.pub --out=ledger.db", 2,
       "ledger.db is the ledger (--ledger) itself; writing it would destroy it"},
      {"ledger export --ledger=ledger.db --challenger_key=k-challenger.pub --out=k-challenger.pub", 2,
       "k-challenger.pub is the challenger key (--challenger_key) itself; writing it would destroy it"},
      {"ledger export --ledger=ledger.db --challenger_key=k-challenger.pub --inventory=inventory.json "
       "--out=./inventory.json",
       2, "./inventory.json is the inventory (--inventory) itself"},
      {"ledger export --ledger=ledger.db --challenger_key=k-challenger.pub --inventory=inventory.json --out=n1.crt", 2,
       "n1.crt is a file the inventory names for node n1 itself"},
      {"ledger certificate --ledger=ledger.db --challenger_key=k-challenger.pub --authority_key=k-authority.pub "
       "--session=00000000000000000000000000000000 --out=k-authority.pub",
       2, "k-authority.pub is the authority key (--authority_key) itself"},
      {"sign --what=profile --in=profile.json --out=./profile.json --authority_key=k-authority.key", 2,
       "./profile.json is the document to sign (--in) itself"},
      // 2: ledger: one line naming the flag and where the subcommand's flags are listed.
      {"ledger verify --ledger=ledger.db --bogus", 2,
       "wipeproof-challenger ledger verify: unknown flag '--bogus' (see wipeproof-challenger ledger verify --help)"},
      {"ledger frobnicate", 2,
       "wipeproof-challenger ledger: unknown subcommand 'frobnicate' (see wipeproof-challenger ledger --help)"},
      // 2: audit pins one key of each kind; a list (verify's form) is told what audit takes.
      {"ledger audit --export=e.json --challenger_key=k-challenger.pub,k-authority.pub --authority_key=k-authority.pub",
       2, "--challenger_key takes one key file, the key the auditor pins for every source"},
      // 3: an export written under another schema: no conclusion (a build of that schema can audit it).
      {"ledger audit --export=old-schema.json --challenger_key=k-challenger.pub --authority_key=k-authority.pub", 3,
       "written with the schema of SHA-256 aaaa"},
      // 1: a pinned key the export does not match stays "the checked thing is bad".
      {"ledger audit --export=e.json --challenger_key=k-challenger.pub --authority_key=k-challenger.pub", 1,
       "authority"},
      // 2: help of a subcommand that does not exist, at any level, is the usage error it is without help.
      {"help ledger nosuch", 2,
       "wipeproof-challenger ledger: unknown subcommand 'nosuch' (see wipeproof-challenger ledger --help)"},
      {"ledger help nosuch", 2,
       "wipeproof-challenger ledger: unknown subcommand 'nosuch' (see wipeproof-challenger ledger --help)"},
      {"ledger nosuch --help", 2,
       "wipeproof-challenger ledger: unknown subcommand 'nosuch' (see wipeproof-challenger ledger --help)"},
      {"help ledger verify nosuch", 2,
       "wipeproof-challenger ledger verify: unexpected argument 'nosuch' (see wipeproof-challenger ledger verify "
       "--help)"},
      {"help nosuch", 2, "wipeproof-challenger: unknown subcommand 'nosuch' (see wipeproof-challenger --help)"},
      {"help wipe nosuch", 2,
       "wipeproof-challenger wipe: unknown subcommand 'nosuch' (wipe has none; see wipeproof-challenger wipe --help)"},
      // 2: an export over the cap is refused at once, by its size (a 3 GiB sparse file), naming the cap.
      {"ledger verify --export=big.json --challenger_key=k-challenger.pub", 2,
       "big.json: 3221225472 bytes, over the limit of 1024 MiB (the largest export read; verify or audit a larger "
       "ledger with --ledger"},
      {"ledger audit --export=big.json --challenger_key=k-challenger.pub --authority_key=k-authority.pub", 2,
       "big.json: 3221225472 bytes, over the limit of 1024 MiB"},
      {"ledger verify --ledger=ledger.db --challenger_key=k-challenger.pub --expect_head=big.json", 2,
       "big.json: 3221225472 bytes, over the limit of 1024 MiB"},
      // 2: a node name that is no host name is refused when the inventory is loaded, escaped (a newline
      // would split the line, ESC recolour the terminal).
      {"status --inventory=newline-inventory.json --ledger=ledger.db --challenger_key=k-challenger.pub", 2,
       "nodes[0].name: 'y\\u000afake line' has a character other than letters, digits, '.', '_' and '-' (a node "
       "name is a host name)"},
      {"status --inventory=esc-inventory.json --ledger=ledger.db --challenger_key=k-challenger.pub", 2,
       "nodes[0].name: 'x\\u001b[31m\\u009b\\u202e' has a character other than"},
      // 2: a --node the ledger lacks, escaped in the one form (a literal backslash doubled).
      {"ledger show --ledger=ledger.db --challenger_key=k-challenger.pub '--node=x\x1b[31m\\u001b'", 2,
       "no session of node 'x\\u001b[31m\\\\u001b' in ledger ledger.db (its nodes: n1)"},
  };
  // A 3 GiB export (sparse: no disk used), and inventories naming a node with control characters.
  std::ofstream(dir_ + "/big.json").close();
  ASSERT_EQ(::truncate((dir_ + "/big.json").c_str(), off_t{3} << 30), 0);
  for (const auto& [file, name] : std::map<std::string, std::string>{
           {"newline-inventory.json", "y\nfake line"}, {"esc-inventory.json", "x\x1b[31m\xc2\x9b\xe2\x80\xae"}}) {
    nlohmann::json inv = nlohmann::json::parse(ReadWholeFile(dir_ + "/inventory.json"));
    inv["nodes"][0]["name"] = name;
    inv["waves"][0]["nodes"] = {name};
    std::ofstream(dir_ + "/" + file) << inv.dump();
  }
  ASSERT_EQ(Challenger("ledger export --ledger=ledger.db --challenger_key=k-challenger.pub "
                       "--authority_key=k-authority.pub --out=e.json")
                .exit_code,
            0);
  nlohmann::json old_schema = nlohmann::json::parse(ReadWholeFile(dir_ + "/e.json"));
  old_schema["schema_sha256"] = std::string(64, 'a');
  std::ofstream(dir_ + "/old-schema.json") << old_schema.dump();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    CliRun run = Challenger(c.args);
    EXPECT_EQ(run.exit_code, c.exit_code) << run.err;
    EXPECT_NE(run.err.find(c.words), std::string::npos) << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;  // printed once
    EXPECT_EQ(run.err.find('\x1b'), std::string::npos) << run.err;              // no raw ESC
    for (const char* code : {"INVALID_ARGUMENT", "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "INTERNAL",
                             "DATA_LOSS", "UNAVAILABLE", "FAILED_PRECONDITION", "sqlite:", "chmod"}) {
      EXPECT_EQ(run.err.find(code), std::string::npos) << code << " in: " << run.err;
    }
  }
  // A ledger whose entry was modified: 1, the checked thing is bad.
  ASSERT_EQ(std::system(("cd " + dir_ +
                         " && sqlite3 ledger.db \"UPDATE entries SET recorded_at_unix_us = "
                         "recorded_at_unix_us + 1 WHERE sequence = 1\"")
                            .c_str()),
            0);
  CliRun tampered = Challenger("ledger verify --ledger=ledger.db --challenger_key=k-challenger.pub");
  EXPECT_EQ(tampered.exit_code, 1) << tampered.err;
  EXPECT_NE(tampered.err.find("ledger entry 1: "), std::string::npos) << tampered.err;
  EXPECT_EQ(tampered.err.find("DATA_LOSS"), std::string::npos) << tampered.err;
  // Sizes for people: GiB beside the bytes in plan's human lines.
  CliRun plan = Challenger("plan --gpus=8 --verify_rate=1e7");
  EXPECT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("node: 8 x NVIDIA H200 (140.40 GiB = 150754820096 B, reserve 512.00 MiB = 536870912 B"),
            std::string::npos)
      << plan.out;
}

// The occupancy flags are checked before anything is read or run, naming what was given.
TEST_F(ChallengerCliTest, OccupancyFlagsAreCheckedBeforeAnythingRuns) {
  CliRun alone = Challenger("wipe --node=n --inventory=/nonexistent --occupancy_shortfall=0.5");
  EXPECT_EQ(alone.exit_code, 2) << alone.err;
  EXPECT_NE(alone.err.find("--occupancy_shortfall is used only with an occupancy window: give --occupancy_window_s"),
            std::string::npos)
      << alone.err;
  CliRun gap = Challenger("wipe --node=n --inventory=/nonexistent --occupancy_window_s=60 --occupancy_mean_gap_s=120");
  EXPECT_EQ(gap.exit_code, 2) << gap.err;
  EXPECT_NE(gap.err.find("--occupancy_mean_gap_s 120 is not in [0.000001, --occupancy_window_s 60] seconds"),
            std::string::npos)
      << gap.err;
  CliRun long_window = Challenger("wipe --node=n --inventory=/nonexistent --occupancy_window_s=4e6");
  EXPECT_EQ(long_window.exit_code, 2) << long_window.err;
  EXPECT_NE(long_window.err.find("--occupancy_window_s 4000000 is not in (0, 2678400] seconds (31 days)"),
            std::string::npos)
      << long_window.err;
}

TEST_F(ChallengerCliTest, EachSubcommandHelpListsOnlyItsOwnFlags) {
  CliRun top = Challenger("--help");
  ASSERT_EQ(top.exit_code, 0);
  EXPECT_NE(top.out.find("Exit codes (both wipeproof-prover and wipeproof-challenger):\n  0  done"), std::string::npos)
      << top.out;
  EXPECT_NE(top.out.find("\n  3  no conclusion"), std::string::npos) << top.out;
  const std::vector<std::string> subs = {"keygen", "sign", "wipe", "serve", "calibrate", "plan", "status"};
  for (const std::string& sub : subs) {
    SCOPED_TRACE(sub);
    CliRun help = Challenger(sub + " --help");
    ASSERT_EQ(help.exit_code, 0);
    EXPECT_FALSE(testing::ListedHelpFlags(help.out).empty());
    EXPECT_EQ(testing::HelpFlagProblems(help.out, sub, subs), std::vector<std::string>{}) << help.out;
  }
  // Texts that were wrong for the subcommand showing them.
  EXPECT_EQ(Challenger("plan --help").out.find("print each verdict"), std::string::npos);
  EXPECT_EQ(Challenger("status --help").out.find("signs verdicts"), std::string::npos);
  // plan's shown defaults are plan's own, in words where the default is no value.
  const std::string plan = Challenger("plan --help").out;
  EXPECT_NE(plan.find("default: every class of --classes\n"), std::string::npos) << plan;
  EXPECT_NE(plan.find("default: none: m, R and the deadlines are computed from the flags, as calibrate would\n"),
            std::string::npos)
      << plan;
  EXPECT_NE(plan.find("confidence is used instead) type: double default: 0.999\n"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("built-in uncalibrated profile"), std::string::npos) << plan;
  // Every flag wipe, serve and calibrate cannot run without is marked (required); the three take
  // --delegation (deployment) or --authority_key (lab), one of them.
  for (const std::string sub : {"wipe", "serve", "calibrate"}) {
    const std::string help = Challenger(sub + " --help").out;
    std::vector<std::string> flags = {"inventory", "challenger_key"};
    for (const std::string& flag : flags) {
      const size_t at = help.find("    -" + flag + " (");
      ASSERT_NE(at, std::string::npos) << sub << " " << flag;
      const std::string block = help.substr(at, help.find(" type: ", at) - at);
      EXPECT_NE(block.find("(required)"), std::string::npos) << sub << ": " << block;
    }
  }
  // `help SUB` is `SUB --help`; `ledger SUB --help` lists only that subcommand's flags.
  for (const std::string sub : {"wipe", "plan", "selftest", "ledger", "ledger audit"}) {
    SCOPED_TRACE(sub);
    CliRun help = Challenger("help " + sub);
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_EQ(help.out, Challenger(sub + " --help").out);
  }
  EXPECT_EQ(Challenger("help wipe").out.rfind("usage: wipeproof-challenger wipe [flags]\n", 0), 0u);
  CliRun verify = Challenger("ledger verify --help");
  EXPECT_EQ(verify.exit_code, 0);
  EXPECT_EQ(verify.out.rfind("usage: wipeproof-challenger ledger verify [flags]\n", 0), 0u) << verify.out;
  EXPECT_NE(verify.out.find("-expect_head (the ledger must still extend"), std::string::npos) << verify.out;
  EXPECT_EQ(verify.out.find("-threads"), std::string::npos) << verify.out;  // audit's
  EXPECT_EQ(verify.out.find("  audit "), std::string::npos) << verify.out;
  const std::string audit = Challenger("ledger audit --help").out;
  EXPECT_NE(audit.find("-threads (audit: threads recomputing labels"), std::string::npos) << audit;
  EXPECT_EQ(audit.find("-expect_head"), std::string::npos) << audit;
  EXPECT_NE(audit.find("-certificate (check this certificate"), std::string::npos) << audit;
  // `ledger --help` names every ledger subcommand, certificate too; each lists exactly its own flags.
  const std::string ledger = Challenger("ledger --help").out;
  EXPECT_NE(ledger.find("usage: wipeproof-challenger ledger <show|verify|export|audit|certificate|decode> [flags]"),
            std::string::npos)
      << ledger;
  EXPECT_NE(ledger.find("\n  certificate  write one self-contained, checkable certificate of a session or a wave\n"),
            std::string::npos)
      << ledger;
  const std::vector<std::pair<std::string, std::set<std::string>>> ledger_flags = {
      {"show", {"ledger", "challenger_key", "session", "node", "json"}},
      {"verify", {"ledger", "challenger_key", "expect_head", "export"}},
      {"export", {"ledger", "challenger_key", "session", "out", "envelopes", "authority_key", "inventory"}},
      {"audit",
       {"export", "ledger", "certificate", "challenger_key", "authority_key", "inventory", "session", "json",
        "threads"}},
      {"certificate", {"ledger", "challenger_key", "authority_key", "inventory", "session", "wave", "out", "threads"}},
      {"decode", {"ledger", "export", "sequence", "record", "kind", "json"}}};
  for (const auto& [sub, flags] : ledger_flags) {
    SCOPED_TRACE("ledger " + sub);
    CliRun help = Challenger("ledger " + sub + " --help");
    EXPECT_EQ(help.exit_code, 0);
    // The flag lines; a wrapped description line may begin with "--export);", which is no flag line.
    std::set<std::string> listed;
    for (const std::string& name : testing::ListedHelpFlags(help.out)) {
      if (name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") == std::string::npos) listed.insert(name);
    }
    EXPECT_EQ(listed, flags) << help.out;
  }
  const std::string certificate = Challenger("ledger certificate --help").out;
  EXPECT_NE(certificate.find("-wave (certificate: one certificate of this wave's latest verdict"), std::string::npos)
      << certificate;
  EXPECT_EQ(Challenger("help ledger certificate").out, certificate);
}

// A challenger killed mid-wipe (SIGKILL) leaves an order without a verdict in the ledger: once the
// order's session can no longer run (expiresAt + sessionTimeout past), `status` counts it as a failed
// wipe of its node (docs/threat-model.md), in the row, the failures and the JSON; before, RUNNING.
TEST_F(ChallengerCliTest, StatusCountsAnInterruptedSessionAsAFailedWipe) {
  ASSERT_EQ(Challenger("keygen --out=k").exit_code, 0);
  WriteInventory("127.0.0.1:1");
  auto key = proto::ReadSecretKeyFile(dir_ + "/k-challenger.key");
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  // An order as `wipe` records it before sending it, for a session of `timeout_us`, issued at `at`.
  auto append_order = [&](uint8_t id, int64_t at, uint64_t timeout_us) {
    auto ledger = Ledger::Open(dir_ + "/ledger.db", *key, SystemClock());
    ASSERT_TRUE(ledger.ok()) << ledger.status().ToString();
    capnp::MallocMessageBuilder message;
    auto order = message.initRoot<proto::WipeOrder>();
    order.setProtocolVersion(proto::PROTOCOL_VERSION);
    const proto::Bytes session(proto::kSessionIdBytes, id);
    order.setSessionId(proto::AsView(session));
    order.setIssuedAtUnixUs(at);
    order.setExpiresAtUnixUs(at + 60'000'000);
    order.setSessionTimeoutUs(timeout_us);
    order.setNodeName("n1");
    order.setNodeKeyId(proto::AsView(proto::KeyIdOf(testing::TestKeyPublic(0x33))));
    const proto::Bytes seed(proto::kSessionSeedBytes, 0x5a);
    order.setSeed(proto::AsView(seed));
    order.setFormat(proto::LabelFormat::POSEDB_BLAKE3_C1);
    order.setChunkLabels(64);
    auto device = order.initDevices(1)[0];
    device.setSelector("host");
    device.setLabelCount(64 * 32);
    device.setLabelsPerRound(8);
    device.setCapacityBytes(64 * 64 * 32);
    device.setFillDeadlineUs(60'000'000);
    order.setFillDeadlineUs(60'000'000);
    order.setChallengerKeyId(proto::AsView(proto::KeyIdOf(key->public_key)));
    order.setRoundDeadlineUs(500'000);
    order.initProfile().setName("cli-test");
    order.setHostMemoryInPlan(true);
    order.setWaveName("w1");
    auto appended =
        (*ledger)->Append(proto::LedgerRecordKind::ORDER, proto::AsView(ledger_test::SignToEnvelopeBytes(order, *key)),
                          proto::AsView(session));
    ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  };
  const int64_t now = SystemClock().UnixMicros();
  const std::string status = "status --inventory=inventory.json --ledger=ledger.db --challenger_key=k-challenger.pub";
  append_order(0x51, now - 3'600'000'000, 600'000'000);  // ended 49 min ago: interrupted
  CliRun table = Challenger(status);
  EXPECT_EQ(table.exit_code, 0) << table.err;  // shown: status's exit says nothing of the verdicts
  EXPECT_THAT(table.out, ::testing::ContainsRegex("\nn1 +w1 +INTERRUPTED +60\\.0 min +no verdict +1 of 1 \\(1 "
                                                  "interrupted\\) "));
  EXPECT_NE(table.out.find("n1: last session " + HexEncode(proto::Bytes(proto::kSessionIdBytes, 0x51)) +
                           " ordered at " + FormatUnixMicrosUtc(now - 3'600'000'000) +
                           ": no verdict, interrupted (the challenger stopped before its verdict): counted as a "
                           "failed wipe\n"),
            std::string::npos)
      << table.out;
  CliRun json = Challenger(status + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto node = nlohmann::json::parse(json.out)["nodes"][0];
  EXPECT_EQ(node["state"], "interrupted");
  EXPECT_EQ(node["failures"], 1);
  EXPECT_EQ(node["interrupted"], 1);
  EXPECT_EQ(node["sessions"], 1);
  // A newer order whose session may still run: RUNNING, not counted.
  append_order(0x52, now, 600'000'000);
  CliRun running = Challenger(status);
  EXPECT_EQ(running.exit_code, 0) << running.err;
  EXPECT_THAT(running.out, ::testing::ContainsRegex("\nn1 +w1 +RUNNING +[0-9]+ s +no verdict +1 of 1 \\(1 "
                                                    "interrupted\\) "));
  EXPECT_NE(running.out.find(": running, no verdict yet (a failed wipe if none is recorded by "), std::string::npos)
      << running.out;
}

TEST_F(ChallengerCliTest, KeygenWritesBothPairsAndRefusesToOverwrite) {
  CliRun run = Challenger("keygen --out=k");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("authority  key id "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("challenger key id "), std::string::npos) << run.out;
  for (const char* name : {"k-authority.key", "k-challenger.key"}) {
    struct stat st;
    ASSERT_EQ(stat((dir_ + "/" + name).c_str(), &st), 0) << name;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << name;
  }
  EXPECT_NE(Pub("k-authority.pub"), Pub("k-challenger.pub"));
  // The challenger's certificate carries the challenger key (agents pin it); the authority has none.
  EXPECT_EQ(ChallengerCertificate().public_key, Pub("k-challenger.pub"));
  EXPECT_NE(run.out.find("challenger certificate k-challenger.crt"), std::string::npos) << run.out;
  struct stat st;
  EXPECT_NE(stat((dir_ + "/k-authority.crt").c_str(), &st), 0);
  CliRun again = Challenger("keygen --out=k");
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("exists (use --overwrite"), std::string::npos) << again.err;
  EXPECT_EQ(Challenger("keygen --out=k --overwrite").exit_code, 0);
}

TEST_F(ChallengerCliTest, WipePassesAndTheLedgerVerifies) {
  ASSERT_EQ(Challenger("keygen --out=k").exit_code, 0);
  auto agent = testing::ServeTestAgent(testing::TestKey(0x33), {}, Pub("k-authority.pub"), ChallengerCertificate());
  WriteInventory(agent->address());
  CliRun run = Challenger("wipe --node=n1 --json " + SessionFlags());
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  // One compact JSON object on one line, with the wave and the session's times.
  EXPECT_EQ(run.out.find('\n'), run.out.size() - 1) << run.out;
  nlohmann::json verdict = nlohmann::json::parse(run.out);
  EXPECT_EQ(verdict["node"], "n1");
  EXPECT_EQ(verdict["wave"], "w1");
  EXPECT_EQ(verdict["pass"], true);
  const nlohmann::json& t = verdict["times"];
  for (const char* name : {"order_issued", "order_sent", "fill_reported", "last_round", "verdict_signed"}) {
    ASSERT_TRUE(t[std::string(name) + "_unix_us"].is_number_integer()) << name << ": " << t;
    EXPECT_EQ(t[name].get<std::string>().size(), 27u) << t;  // 2027-01-15T08:00:00.123456Z
  }
  const auto at = [&t](const char* name) { return t[std::string(name) + "_unix_us"].get<int64_t>(); };
  EXPECT_LE(at("order_issued"), at("order_sent"));
  EXPECT_EQ(at("fill_reported"), at("order_sent") + verdict["fill_us"].get<int64_t>());
  EXPECT_LT(at("fill_reported"), at("last_round"));
  EXPECT_LE(at("last_round"), at("verdict_signed"));
  EXPECT_LT(at("verdict_signed") - at("order_issued"), 60'000'000);
  EXPECT_EQ(verdict["statement"], "no bound: parameters not calibrated (profile cli-test)");
  EXPECT_GE(verdict["rounds"].size(), 4u);  // 4 proof rounds, then holding rounds until done
  EXPECT_EQ(verdict["failure"]["reason"], "none");
  EXPECT_EQ(verdict["ledger"]["verdict_sequence"], 4);              // order, fill notice, report, round log
  EXPECT_NE(run.err.find("  PASS"), std::string::npos) << run.err;  // the summary, on stderr with --json
  EXPECT_NE(run.err.find("NOT HELD  physical-binding"), std::string::npos) << run.err;

  CliRun verify = Challenger("ledger verify --ledger=ledger.db --challenger_key=k-challenger.pub");
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;

  // The node's history from the ledger agrees with what wipe printed.
  CliRun show = Challenger("ledger show --ledger=ledger.db --challenger_key=k-challenger.pub --node=n1 --json");
  ASSERT_EQ(show.exit_code, 0) << show.err;
  nlohmann::json history = nlohmann::json::parse(show.out);
  ASSERT_EQ(history["sessions"].size(), 1u) << show.out;
  const nlohmann::json& session = history["sessions"][0];
  EXPECT_EQ(session["session_id"], verdict["session_id"]);
  EXPECT_EQ(session["outcome"], "pass");
  EXPECT_EQ(session["wave"], "w1");
  EXPECT_EQ(session["times"]["order_issued_unix_us"], t["order_issued_unix_us"]);
  EXPECT_EQ(session["times"]["verdict_issued_unix_us"], t["verdict_signed_unix_us"]);
  EXPECT_EQ(session["times"]["verdict_issued"], t["verdict_signed"]);
  EXPECT_EQ(session["ledger"]["verdict_sequence"], verdict["ledger"]["verdict_sequence"]);
  EXPECT_EQ(session["rounds"], verdict["rounds"].size());
}

// The deployment form: the authority's keys made and kept apart (keygen --role), a delegation signed
// with them (delegate), and wipe run with the delegation and the authority's public key only: the
// order carries the delegation and the agent accepts it. wipe refuses a delegation for another
// challenger key, one signed by another key, or one that does not cover its profile, before any order.
// threat-model: T-DELEGATION
TEST_F(ChallengerCliTest, WipeRunsUnderTheAuthoritysDelegationWithoutItsSecretKey) {
  CliRun authority = Challenger("keygen --role=authority --out=a");
  ASSERT_EQ(authority.exit_code, 0) << authority.err;
  EXPECT_EQ(authority.err.find("warning"), std::string::npos) << authority.err;
  CliRun challenger = Challenger("keygen --role=challenger --out=k");
  ASSERT_EQ(challenger.exit_code, 0) << challenger.err;
  struct stat st;
  EXPECT_NE(stat((dir_ + "/k-authority.key").c_str(), &st), 0);  // the challenger's side has no authority key
  EXPECT_NE(stat((dir_ + "/a-challenger.key").c_str(), &st), 0);
  EXPECT_NE(Challenger("keygen --out=both").err.find("warning: both-authority.key is the authority's secret key"),
            std::string::npos);
  // A delegation that lists nothing delegates nothing.
  EXPECT_EQ(Challenger("delegate --authority_key=a-authority.key --challenger_pub=k-challenger.pub --out=d").exit_code,
            2);
  CliRun delegate = Challenger(
      "delegate --authority_key=a-authority.key --challenger_pub=k-challenger.pub --allow_unsigned_profiles "
      "--valid_days=1 --name=cli-test --out=k.delegation");
  ASSERT_EQ(delegate.exit_code, 0) << delegate.err;
  EXPECT_NE(delegate.out.find("delegation 'cli-test' to challenger key " + proto::KeyIdHex(proto::KeyIdOf(Pub("k-challenger.pub")))),
            std::string::npos)
      << delegate.out;

  auto agent = testing::ServeTestAgent(testing::TestKey(0x33), {}, Pub("a-authority.pub"), ChallengerCertificate());
  WriteInventory(agent->address());
  const std::string flags = "--inventory=inventory.json --challenger_key=k-challenger.key --ledger=ledger.db "
                            "--profile=profile.json --threads=1 --authority_pub=a-authority.pub ";
  CliRun run = Challenger("wipe --node=n1 " + flags + "--delegation=k.delegation");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  // No authority key here: no lab warning; the delegation names no inventory: that warning only.
  EXPECT_EQ(run.err.find("warning: the authority's secret key"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("warning: verdicts will state no bound and no assumption will hold: the delegation names no "
                         "inventory"),
            std::string::npos)
      << run.err;

  // Both forms at once, or neither: a usage error naming them.
  CliRun both = Challenger("wipe --node=n1 " + flags + "--delegation=k.delegation --authority_key=a-authority.key");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("--delegation with --authority_pub"), std::string::npos) << both.err;
  // A delegation for another challenger key.
  ASSERT_EQ(Challenger("keygen --role=challenger --out=other").exit_code, 0);
  ASSERT_EQ(Challenger("delegate --authority_key=a-authority.key --challenger_pub=other-challenger.pub "
                       "--allow_unsigned_profiles --out=other.delegation")
                .exit_code,
            0);
  CliRun foreign = Challenger("wipe --node=n1 " + flags + "--delegation=other.delegation");
  EXPECT_EQ(foreign.exit_code, 2) << foreign.err;
  EXPECT_NE(foreign.err.find("is not for --challenger_key"), std::string::npos) << foreign.err;
  // A delegation the challenger host signed itself.
  ASSERT_EQ(Challenger("delegate --authority_key=k-challenger.key --challenger_pub=k-challenger.pub "
                       "--allow_unsigned_profiles --out=self.delegation")
                .exit_code,
            0);
  CliRun self = Challenger("wipe --node=n1 " + flags + "--delegation=self.delegation");
  EXPECT_EQ(self.exit_code, 2) << self.err;
  EXPECT_NE(self.err.find("does not verify under the authority key"), std::string::npos) << self.err;
  // A delegation of signed profiles only, for this unsigned one: refused before any order.
  std::ofstream(dir_ + "/classes.json") << R"({"classes": [{"name": "commodity-cpu", "t_min_ps": 40000, "safety_factor": 2}]})";
  ASSERT_EQ(Challenger("sign --what=classes --in=classes.json --out=classes.signed.json --authority_key=a-authority.key")
                .exit_code,
            0);
  ASSERT_EQ(Challenger("sign --what=profile --in=profile.json --out=profile.signed.json --authority_key=a-authority.key")
                .exit_code,
            0);
  CliRun signed_only = Challenger(
      "delegate --authority_key=a-authority.key --challenger_pub=k-challenger.pub --profile=profile.signed.json "
      "--classes=classes.signed.json --out=signed.delegation");
  ASSERT_EQ(signed_only.exit_code, 0) << signed_only.out << signed_only.err;
  EXPECT_NE(signed_only.out.find("profile cli-test: class commodity-cpu, t_min 40000 ps"), std::string::npos)
      << signed_only.out;
  // With an inventory whose reach is shorter than the profile's round deadline: delegated, with a
  // warning that its verdicts will hold neither reach assumption (this test's inventory, plus a reach).
  nlohmann::json short_reach = nlohmann::json::parse(std::ifstream(dir_ + "/inventory.json"));
  short_reach["reach_round_deadline_us"] = 1;
  std::ofstream(dir_ + "/short-reach.json") << short_reach.dump(2);
  CliRun reach_warned = Challenger(
      "delegate --authority_key=a-authority.key --challenger_pub=k-challenger.pub --profile=profile.signed.json "
      "--classes=classes.signed.json --inventory=short-reach.json --out=reach.delegation");
  ASSERT_EQ(reach_warned.exit_code, 0) << reach_warned.out << reach_warned.err;
  EXPECT_NE(reach_warned.out.find("reach: round deadlines up to 1 us (reach_round_deadline_us)"), std::string::npos)
      << reach_warned.out;
  EXPECT_NE(reach_warned.err.find("warning: profile cli-test's round deadline of "), std::string::npos)
      << reach_warned.err;
  EXPECT_NE(reach_warned.err.find("its verdicts will hold neither wave-complete nor no-nvme-in-reach"),
            std::string::npos)
      << reach_warned.err;
  EXPECT_EQ(signed_only.err.find("warning"), std::string::npos) << signed_only.err;  // no inventory, no warning
  CliRun unlisted = Challenger("wipe --node=n1 " + flags + "--delegation=signed.delegation");
  EXPECT_EQ(unlisted.exit_code, 2) << unlisted.err;
  EXPECT_NE(unlisted.err.find("does not list profile 'cli-test' as loaded here (unsigned, and it allows no unsigned "
                              "profile)"),
            std::string::npos)
      << unlisted.err;
  // Under the signed profile and classes it lists: runs.
  CliRun listed = Challenger("wipe --node=n1 " + flags +
                             "--delegation=signed.delegation --profile=profile.signed.json --classes=classes.signed.json");
  EXPECT_EQ(listed.exit_code, 0) << listed.out << listed.err;
  // A signed profile the delegation does not list is refused by delegate when unendorsed, by wipe otherwise.
  CliRun unendorsed = Challenger("delegate --authority_key=a-authority.key --challenger_pub=k-challenger.pub "
                                 "--profile=profile.signed.json --out=x.delegation");  // no --classes: class unsigned
  EXPECT_EQ(unendorsed.exit_code, 2) << unendorsed.err;
  EXPECT_NE(unendorsed.err.find("cannot be delegated: class commodity-cpu is not the authority's"), std::string::npos)
      << unendorsed.err;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The inventory is the authority's finding: delegate --inventory names its digest (node keys inline),
// wipe plans only from that very file and records it in the ledger, where the audit reads it back.
// threat-model: T-INVENTORY-UNSIGNED
TEST_F(ChallengerCliTest, WipePlansOnlyFromTheInventoryTheDelegationNames) {
  ASSERT_EQ(Challenger("keygen --role=authority --out=a").exit_code, 0);
  ASSERT_EQ(Challenger("keygen --role=challenger --out=k").exit_code, 0);
  auto agent = testing::ServeTestAgent(testing::TestKey(0x33), {}, Pub("a-authority.pub"), ChallengerCertificate());
  WriteInventory(agent->address());
  const std::string delegate = "delegate --authority_key=a-authority.key --challenger_pub=k-challenger.pub "
                               "--allow_unsigned_profiles --valid_days=1 --out=k.delegation --inventory=";
  // An inventory naming a key by file: its digest would not cover the key.
  std::ofstream(dir_ + "/by-file.json") << R"({"nodes": [{"name": "n1", "address": "127.0.0.1:1",
      "public_key_file": "n1.pub", "devices": [{"selector": "host", "model": "host-dram", "capacity_bytes": 131072}]}],
      "reserves": {"host-dram": 0}})";
  CliRun by_file = Challenger(delegate + "by-file.json");
  EXPECT_EQ(by_file.exit_code, 2) << by_file.out;
  EXPECT_NE(by_file.err.find("public_key_file: a signed inventory names each node key inline"), std::string::npos)
      << by_file.err;
  CliRun signed_inventory = Challenger(delegate + "inventory.json");
  ASSERT_EQ(signed_inventory.exit_code, 0) << signed_inventory.err;
  const std::string text = ReadFile(dir_ + "/inventory.json");
  const proto::Digest digest =
      proto::Blake2b256(proto::ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  EXPECT_NE(signed_inventory.out.find("inventory inventory.json: 1 node(s), digest " + HexEncode(digest.data(), 32)),
            std::string::npos)
      << signed_inventory.out;

  const std::string flags = "--inventory=inventory.json --challenger_key=k-challenger.key --ledger=ledger.db "
                            "--profile=profile.json --threads=1 --authority_pub=a-authority.pub --delegation=k.delegation";
  CliRun run = Challenger("wipe --node=n1 --json " + flags);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(run.err.find("warning"), std::string::npos) << run.err;
  // The verdict's assumptions now rest on the authority's word: the complete wave of one node holds.
  const nlohmann::json verdict = nlohmann::json::parse(run.out);
  bool wave_held = false;
  for (const auto& a : verdict["assumptions"]) wave_held = wave_held || (a["name"] == "wave-complete" && a["held"] == true);
  EXPECT_TRUE(wave_held) << run.out;
  CliRun exported = Challenger("ledger export --ledger=ledger.db --challenger_key=k-challenger.pub --out=export.json");
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const nlohmann::json document = nlohmann::json::parse(ReadFile(dir_ + "/export.json"));
  ASSERT_EQ(document["documents"].size(), 1u);
  EXPECT_EQ(document["documents"][0]["text"], text);
  CliRun audit = Challenger("ledger audit --export=export.json --challenger_key=k-challenger.pub "
                            "--authority_key=a-authority.pub");
  EXPECT_EQ(audit.exit_code, 0) << audit.out << audit.err;

  // The challenger host editing the inventory (here one byte more): refused before any order.
  std::ofstream(dir_ + "/inventory.json", std::ios::app) << "\n";
  CliRun edited = Challenger("wipe --node=n1 " + flags);
  EXPECT_EQ(edited.exit_code, 2) << edited.err;
  EXPECT_NE(edited.err.find("is not the inventory the delegation 'challenger "), std::string::npos) << edited.err;
  EXPECT_NE(edited.err.find("names (" + HexEncode(digest.data(), 32) + ")"), std::string::npos) << edited.err;
}

TEST_F(ChallengerCliTest, UnreachableNodeFailsWithExitOneAndIsRecorded) {
  ASSERT_EQ(Challenger("keygen --out=k").exit_code, 0);
  WriteInventory("127.0.0.1:1");
  CliRun run = Challenger("wipe --node=n1 --connect_timeout_s=2 " + SessionFlags());
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.out.find("FAIL"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("failure: disconnected: cannot connect to the agent at 127.0.0.1:1"), std::string::npos)
      << run.out;
  EXPECT_EQ(run.err.find("cannot connect to the agent"), std::string::npos) << run.err;  // printed once, not logged too
  CliRun show = Challenger("ledger show --ledger=ledger.db --challenger_key=k-challenger.pub");
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("failure=disconnected"), std::string::npos) << show.out;
}

TEST_F(ChallengerCliTest, ConfigurationErrorsExitTwoNamingTheField) {
  ASSERT_EQ(Challenger("keygen --out=k").exit_code, 0);
  std::ofstream(dir_ + "/inventory.json") << R"({"nodes": [{"name": "n1"}], "reserves": {}})";
  CliRun run = Challenger("wipe --node=n1 " + SessionFlags());
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("inventory.json: nodes[0].address: missing"), std::string::npos) << run.err;
  WriteInventory("127.0.0.1:1");
  CliRun unknown = Challenger("wipe --node=n9 " + SessionFlags());
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("no node named 'n9'"), std::string::npos) << unknown.err;
  std::ofstream(dir_ + "/bad-profile.json") << R"({"name": "x"})";
  CliRun profile = Challenger(
      "wipe --node=n1 --inventory=inventory.json --authority_key=k-authority.key "
      "--challenger_key=k-challenger.key --ledger=ledger.db --profile=bad-profile.json");
  EXPECT_EQ(profile.exit_code, 2);
  EXPECT_NE(profile.err.find("chunk_labels: missing"), std::string::npos) << profile.err;
  chmod((dir_ + "/k-authority.key").c_str(), 0644);
  CliRun key = Challenger("wipe --node=n1 " + SessionFlags());
  EXPECT_EQ(key.exit_code, 2);
  EXPECT_NE(key.err.find("--authority_key"), std::string::npos) << key.err;
}

TEST_F(ChallengerCliTest, ServeOnceRunsEveryWave) {
  ASSERT_EQ(Challenger("keygen --out=k").exit_code, 0);
  auto agent = testing::ServeTestAgent(testing::TestKey(0x33), {}, Pub("k-authority.pub"), ChallengerCertificate());
  WriteInventory(agent->address());
  CliRun run = Challenger("serve --once --json " + SessionFlags());
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  nlohmann::json verdict = nlohmann::json::parse(run.out);  // one line, one session
  EXPECT_EQ(verdict["pass"], true);
  for (const auto& a : verdict["assumptions"]) {
    if (a["name"] == "wave-complete") EXPECT_EQ(a["held"], true) << a.dump();
  }
  EXPECT_NE(run.err.find("1 session(s), 0 failed, 0 of them busy"), std::string::npos) << run.err;
  // The schedule, and each run's start and end, in plain lines.
  // --once: one run, now, and no "next run" before or after it.
  EXPECT_NE(run.err.find("wipeproof-challenger serve: wave w1 (1 node(s), period 3600 s, jitter 60 s): one run now "
                         "(--once: no next run)\n"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(run.err.find("next run at"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("wipeproof-challenger serve: wave w1: run started at 20"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("Z, 1 node(s)\n"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("wipeproof-challenger serve: wave w1: run ended at 20"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(" s: 1 passed, 0 failed, 0 busy, 0 without a session\n"), std::string::npos) << run.err;
}

// serve --session_loops: the wave's sessions as fibers on shared event loops pass as on threads;
// a count outside [0, 4096] is refused before anything runs, and wipe (one node) does not take it.
TEST_F(ChallengerCliTest, ServeRunsAWaveOnSessionLoopsAndRefusesABadCount) {
  ASSERT_EQ(Challenger("keygen --out=k").exit_code, 0);
  auto agent = testing::ServeTestAgent(testing::TestKey(0x33), {}, Pub("k-authority.pub"), ChallengerCertificate());
  WriteInventory(agent->address());
  CliRun run = Challenger("serve --once --json --session_loops=2 " + SessionFlags());
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["pass"], true);
  for (const std::string bad : {"-1", "4097"}) {
    CliRun refused = Challenger("serve --once --session_loops=" + bad + " " + SessionFlags());
    EXPECT_EQ(refused.exit_code, 2) << bad << ": " << refused.err;
    EXPECT_NE(refused.err.find("--session_loops must be in [0, 4096], got " + bad), std::string::npos) << refused.err;
  }
  EXPECT_EQ(Challenger("wipe --node=n1 --session_loops=2 " + SessionFlags()).exit_code, 2);
}

// SIGTERM before the first run: serve says at once that it stops and that no run is in progress,
// and exits 0. (The wave's period is a year: its first run, uniform in the period, is not due.)
// plan --authority_pub says whether --classes and --profile verified under the authority key, and
// that a verdict under an unsigned profile states no bound (it used to check and say nothing).
TEST_F(ChallengerCliTest, PlanSaysWhetherTheDocumentsAreTheAuthoritys) {
  ASSERT_EQ(Challenger("keygen --out=k").exit_code, 0);
  ASSERT_EQ(Challenger("sign --what=profile --in=profile.json --out=signed.json --authority_key=k-authority.key")
                .exit_code,
            0);
  CliRun signed_run =
      Challenger("plan --gpus=1 --verify_rate=1e8 --profile=signed.json --authority_pub=k-authority.pub");
  EXPECT_EQ(signed_run.exit_code, 0) << signed_run.err;
  EXPECT_NE(signed_run.err.find("--classes (built-in): NOT signed by the authority key (--authority_pub "
                                "k-authority.pub): the built-in adversary classes are not signed"),
            std::string::npos)
      << signed_run.err;
  // Signed, but its class is from the built-in (unsigned) classes: still no bound.
  EXPECT_NE(signed_run.err.find("--profile: a verdict under it states no bound"), std::string::npos) << signed_run.err;
  CliRun plain = Challenger("plan --gpus=1 --verify_rate=1e8 --profile=profile.json --authority_pub=k-authority.pub");
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.err.find("--profile: a verdict under it states no bound: "), std::string::npos) << plain.err;
  CliRun unchecked = Challenger("plan --gpus=1 --verify_rate=1e8 --profile=profile.json");
  EXPECT_EQ(unchecked.err.find("signed by"), std::string::npos) << unchecked.err;  // nothing checked, nothing said
}

TEST_F(ChallengerCliTest, ServeSaysWhenItStops) {
  ASSERT_EQ(Challenger("keygen --out=k").exit_code, 0);
  WriteInventory("127.0.0.1:1");
  std::string inventory = ReadWholeFile(dir_ + "/inventory.json");
  const std::string period = "\"period_s\": 3600";
  ASSERT_NE(inventory.find(period), std::string::npos) << inventory;
  inventory.replace(inventory.find(period), period.size(), "\"period_s\": 31536000");
  std::ofstream(dir_ + "/inventory.json") << inventory;
  // The signal goes once serve has printed its schedule (so its handler is in place).
  const std::string command = "cd " + dir_ + " && { " WIPEPROOF_CHALLENGER_BIN " serve " + SessionFlags() +
                              " 2>serve.err & pid=$!; for i in $(seq 1 600); do grep -q 'next run at' serve.err && "
                              "break; sleep 0.05; done; kill -TERM $pid; wait $pid; }";
  const int status = std::system(command.c_str());
  const std::string err = ReadWholeFile(dir_ + "/serve.err");
  ASSERT_TRUE(WIFEXITED(status)) << err;
  EXPECT_EQ(WEXITSTATUS(status), 0) << err;
  EXPECT_NE(err.find("wave w1 (1 node(s), period 31536000 s, jitter 60 s): next run at "), std::string::npos) << err;
  EXPECT_NE(err.find("wipeproof-challenger serve: signal 15: stopping; no new wave runs; no wave run in progress\n"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("0 session(s), 0 failed, 0 of them busy"), std::string::npos) << err;
}

// A node whose agent refuses the order as busy (the real agent's typed refusal, BUSY) is reported
// busy: its own line, outcome "busy" in the JSON, and counted as a failed wipe, since serve has no
// session there (serve exits 1); refusals in a row escalate. Text alone never makes a refusal busy.
// threat-model: T-BUSY-FOREVER
TEST_F(ChallengerCliTest, ServeCountsABusyNodeAsAFailedWipe) {
  ASSERT_EQ(Challenger("keygen --out=k").exit_code, 0);
  testing::Deviation busy;
  busy.kind = testing::DeviationKind::kAlwaysBusy;
  auto agent = testing::ServeTestAgent(testing::TestKey(0x33), busy, Pub("k-authority.pub"), ChallengerCertificate());
  WriteInventory(agent->address());
  CliRun serve = Challenger("serve --once --json " + SessionFlags());
  EXPECT_EQ(serve.exit_code, 1) << serve.err;
  nlohmann::json verdict = nlohmann::json::parse(serve.out);
  EXPECT_EQ(verdict["pass"], false);
  EXPECT_EQ(verdict["outcome"], "busy");
  EXPECT_EQ(verdict["failure"]["reason"], "nodeBusy");
  EXPECT_NE(serve.err.find("wipeproof-challenger serve: wave w1 node n1: busy (its agent says it runs another session; "
                           "this challenger has none there): not wiped, counted as a failed wipe (1 in a row)\n"),
            std::string::npos)
      << serve.err;
  EXPECT_NE(serve.err.find("0 passed, 0 failed, 1 busy, 0 without a session"), std::string::npos) << serve.err;
  EXPECT_NE(serve.err.find("1 session(s), 1 failed, 1 of them busy"), std::string::npos) << serve.err;
  CliRun wipe = Challenger("wipe --node=n1 " + SessionFlags());
  EXPECT_EQ(wipe.exit_code, 1) << wipe.err;  // a failed wipe
  EXPECT_NE(wipe.out.find("  BUSY\nbusy: node n1 refused the order, saying it runs another session"), std::string::npos)
      << wipe.out;
  // status counts both as failed wipes, of which busy.
  CliRun status = Challenger("status --inventory=inventory.json --ledger=ledger.db --challenger_key=k-challenger.pub");
  EXPECT_NE(status.out.find("2 of 2 (2 busy)"), std::string::npos) << status.out;
  // Refusals in a row escalate: from the third on, each adds an ERROR line (a wave every 0.2 s).
  nlohmann::json inventory = nlohmann::json::parse(ReadWholeFile(dir_ + "/inventory.json"));
  inventory["waves"][0]["period_s"] = 0.2;
  inventory["waves"][0]["jitter_s"] = 0;
  std::ofstream(dir_ + "/inventory.json") << inventory.dump();
  CliRun repeated = Challenger("serve --max_sessions=4 " + SessionFlags());
  EXPECT_EQ(repeated.exit_code, 1) << repeated.err;
  EXPECT_NE(repeated.err.find("counted as a failed wipe (4 in a row)"), std::string::npos) << repeated.err;
  EXPECT_EQ(repeated.err.find("has refused 2 orders in a row"), std::string::npos) << repeated.err;
  EXPECT_NE(repeated.err.find("ERROR: node n1 has refused 3 orders in a row as busy: its wipes keep failing"),
            std::string::npos)
      << repeated.err;
  EXPECT_NE(repeated.err.find("ERROR: node n1 has refused 4 orders in a row as busy"), std::string::npos)
      << repeated.err;
  // The real agent's busy text in a plain refusal is an orderRefused failure, not busy.
  testing::Deviation text;
  text.kind = testing::DeviationKind::kRefuseOrder;
  text.note = "session a5a5a5a5a5a5a5a5a5a5a5a5a5a5a501 in progress (filling)";
  auto texting = testing::ServeTestAgent(testing::TestKey(0x33), text, Pub("k-authority.pub"), ChallengerCertificate());
  WriteInventory(texting->address());
  CliRun refused = Challenger("wipe --node=n1 --json " + SessionFlags());
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_EQ(nlohmann::json::parse(refused.out)["outcome"], "fail");
  // No fill ran: the summary says so instead of a fill time (it said "fill: 0.053 s").
  EXPECT_NE(wipe.out.find("\nfill: none reported (deadline "), std::string::npos) << wipe.out;
}

// The tester's repro: an agent whose startSession fails with a 5 MiB error used to abort the
// process (CHECK failure) in `wipe` and take `serve` down for the whole wave, leaving the order in
// the ledger without a verdict. Now the text is cut, the session fails with exit 1, the other node
// of the wave passes, and every order has its verdict in a ledger that verifies.
TEST_F(ChallengerCliTest, HostileAgentNeitherCrashesWipeNorServe) {
  ASSERT_EQ(Challenger("keygen --out=k").exit_code, 0);
  const proto::PublicKey authority = Pub("k-authority.pub");
  const proto::PinnedCertificate challenger = ChallengerCertificate();
  WriteNodeCertificates();
  auto inventory = [&](const std::string& honest, const std::string& hostile) {
    const proto::PublicKey a = testing::TestKeyPublic(0x33), b = testing::TestKeyPublic(0x44);
    auto node = [](const std::string& name, const std::string& address, const proto::PublicKey& key) {
      return nlohmann::json{
          {"name", name},
          {"address", address},
          {"public_key", HexEncode(key.data(), key.size())},
          {"certificate_file", name + ".crt"},
          {"devices", {{{"selector", "host"}, {"model", "host-dram"}, {"capacity_bytes", 64 * 64 * 32}}}}};
    };
    nlohmann::json inv = {
        {"nodes", {node("n1", honest, a), node("n2", hostile, b)}},
        {"waves",
         {{{"name", "w1"}, {"nodes", {"n1", "n2"}}, {"period_s", 3600}, {"jitter_s", 60}, {"complete", true}}}},
        {"reserves", {{"host-dram", 0}}}};
    std::ofstream(dir_ + "/inventory.json") << inv.dump(2);
  };

  {
    auto hostile = testing::ServeTestAgent(testing::TestKey(0x44), testing::Cheat(testing::DeviationKind::kHugeRefusal),
                                           authority, challenger);
    inventory("127.0.0.1:1", hostile->address());
    CliRun wipe = Challenger("wipe --node=n2 --json " + SessionFlags());
    EXPECT_EQ(wipe.exit_code, 1) << wipe.err.substr(0, 4000);
    nlohmann::json verdict = nlohmann::json::parse(wipe.out);
    EXPECT_EQ(verdict["pass"], false);
    EXPECT_EQ(verdict["failure"]["reason"], "orderRefused");
    const std::string text = verdict["failure"]["text"];
    EXPECT_LE(text.size(), 4096u);
    EXPECT_NE(text.find("bytes cut)"), std::string::npos) << text;
    EXPECT_EQ(wipe.err.find("Check failed"), std::string::npos);
  }
  {
    auto honest = testing::ServeTestAgent(testing::TestKey(0x33), {}, authority, challenger);
    auto hostile = testing::ServeTestAgent(testing::TestKey(0x44), testing::Cheat(testing::DeviationKind::kHugeRefusal),
                                           authority, challenger);
    inventory(honest->address(), hostile->address());
    CliRun serve = Challenger("serve --once --json " + SessionFlags());
    EXPECT_EQ(serve.exit_code, 1) << serve.err.substr(0, 4000);
    EXPECT_NE(serve.err.find("2 session(s), 1 failed, 0 of them busy"), std::string::npos) << serve.err.substr(0, 4000);
    std::istringstream lines(serve.out);
    std::string line;
    std::map<std::string, nlohmann::json> by_node;
    while (std::getline(lines, line)) {
      nlohmann::json v = nlohmann::json::parse(line);
      by_node[v["node"]] = v;
    }
    ASSERT_EQ(by_node.size(), 2u) << serve.out.substr(0, 4000);
    EXPECT_EQ(by_node["n1"]["pass"], true);
    EXPECT_EQ(by_node["n2"]["failure"]["reason"], "orderRefused");
  }
  // Three orders (wipe n2, serve n1 and n2), three verdicts, and the chain verifies.
  CliRun show = Challenger("ledger show --ledger=ledger.db --challenger_key=k-challenger.pub");
  EXPECT_EQ(show.exit_code, 0) << show.err;
  size_t orders = 0, verdicts = 0;
  for (size_t at = 0; (at = show.out.find("  order ", at)) != std::string::npos; ++at) ++orders;
  for (size_t at = 0; (at = show.out.find("  verdict ", at)) != std::string::npos; ++at) ++verdicts;
  EXPECT_EQ(orders, 3u) << show.out;
  EXPECT_EQ(verdicts, 3u) << show.out;
  CliRun verify = Challenger("ledger verify --ledger=ledger.db --challenger_key=k-challenger.pub");
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

}  // namespace
}  // namespace wipeproof
