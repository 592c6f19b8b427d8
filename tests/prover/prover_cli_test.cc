// wipeproof-prover, run as a process: every labels-public.json case through `labels --sha256`,
// hex lines, bad flags (non-zero exit, one-line reason), graph-info against the spec's table
// (label-spec.md §3), and smoke runs of each benchmark.
#include <gtest/gtest.h>
#include <sodium.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/exclusive_chains.h"
#include "common/hex.h"
#include "kernels/region_labeler.h"
#include "tests/support/cli_help_check.h"
#include "tests/support/run_binary.h"
#include "tests/support/test_data.h"

namespace wipeproof {
namespace {

using ProverRun = testing::BinaryRun;

// Runs `wipeproof-prover <args>` (args are plain words, no shell quoting needed).
ProverRun RunProver(const std::string& args) { return testing::RunBinary(WIPEPROOF_PROVER_BIN, args); }

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string LabelsArgs(const nlohmann::json& c) {
  return "labels --format=" + c["format"].get<std::string>() + " --seed=" + c["session_seed"].get<std::string>() +
         " --chunk_labels=" + std::to_string(c["chunk_labels"].get<uint64_t>()) +
         " --first=" + std::to_string(c["first"].get<uint64_t>()) +
         " --count=" + std::to_string(c["count"].get<uint64_t>());
}

// Source: tests/testdata/labels-public.json (label-spec.md §7; SOURCES.md).
TEST(ProverCli, EveryPublicCaseSha256) {
  const nlohmann::json cases = testing::LoadTestJson("labels-public.json")["cases"];
  ASSERT_GE(cases.size(), 20u);
  for (const auto& c : cases) {
    ProverRun run = RunProver(LabelsArgs(c) + " --sha256 --progress=false");
    SCOPED_TRACE(LabelsArgs(c));
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.out, c["sha256_concat"].get<std::string>() + "\n");
    EXPECT_EQ(run.err, "");
  }
}

TEST(ProverCli, HexLines) {
  const nlohmann::json cases = testing::LoadTestJson("labels-public.json")["cases"];
  int checked = 0;
  for (const auto& c : cases) {
    // posedb-blake3-c1 m = 256, first 2304, count 529: starts on a chunk, ends inside one.
    if (c["format"] != "posedb-blake3-c1" || c["chunk_labels"] != 256) continue;
    ProverRun run = RunProver(LabelsArgs(c) + " --threads=2");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    std::vector<std::string> lines = Lines(run.out);
    const uint64_t first = c["first"].get<uint64_t>();
    ASSERT_EQ(lines.size(), c["count"].get<uint64_t>());
    for (const auto& [index, hex] : c["labels"].items()) {
      EXPECT_EQ(lines.at(std::stoull(index) - first), hex.get<std::string>()) << index;
      ++checked;
    }
    for (const auto& line : lines) EXPECT_EQ(line.find_first_not_of("0123456789abcdef"), std::string::npos) << line;
  }
  EXPECT_GE(checked, 3);
}

// Ranges above the CLI's piece size (2^21 labels) are computed in chunk-aligned pieces; the
// digest must equal one LabelRegion call over the whole range, including a 192 trailing partial
// chunk and a range that starts inside a chunk.
TEST(ProverCli, LargeRangesStreamInPiecesWithTheSameBytes) {
  struct Case {
    LabelFormat format;
    uint32_t m;
    uint64_t first, count;
  } cases[] = {{LabelFormat::kC1, 1, 7, (1u << 21) + 5}, {LabelFormat::k192, 3, 1, (1u << 21) + 4}};
  for (const auto& c : cases) {
    RegionSpec spec;
    spec.format = c.format;
    for (int i = 0; i < kSeedBytes; ++i) spec.seed[i] = static_cast<uint8_t>(i * 13 + 1);
    spec.chunk_labels = c.m;
    spec.first = c.first;
    spec.count = c.count;
    std::vector<uint8_t> labels(c.count * 32);
    ASSERT_TRUE(LabelRegion(spec, labels.data()).ok());
    uint8_t digest[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(digest, labels.data(), labels.size());
    ProverRun run = RunProver(std::string("labels --sha256 --progress=false --format=") + LabelFormatName(c.format) +
                              " --seed=" + HexEncode(spec.seed, kSeedBytes) + " --chunk_labels=" +
                              std::to_string(c.m) + " --first=" + std::to_string(c.first) +
                              " --count=" + std::to_string(c.count));
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.out, HexEncode(digest, sizeof digest) + "\n") << LabelFormatName(c.format);
  }
}

TEST(ProverCli, BadFlagsExitNonZeroWithOneLineReason) {
  const std::string seed = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
  const std::string ok = " --chunk_labels=64 --count=4";
  struct BadCase {
    std::string args;
    std::string reason;  // expected in the message
  } cases[] = {
      {"labels --seed=" + std::string(64, 'g') + ok, "--seed"},       // non-hex
      {"labels --seed=" + seed.substr(0, 62) + ok, "64 hex digits"},  // wrong length
      {"labels --seed=" + seed + "00" + ok, "64 hex digits"},         // too long
      {"labels" + ok, "--seed is required"},                          // missing
      {"labels --seed=" + seed + " --chunk_labels=0 --count=4", "--chunk_labels"},
      {"labels --seed=" + seed + " --chunk_labels=1048577 --count=4", "[1, 1048576]"},
      {"labels --seed=" + seed + " --chunk_labels=64 --count=0", "--count"},
      {"labels --seed=" + seed + ok + " --format=posedb-sha256", "--format"},
      {"labels --seed=" + seed + ok + " --simd=sse9", "--simd"},
      {"labels --seed=" + seed + ok + " --gib=2", "does not apply"},
      {"labels --seed=" + seed + ok + " --bogus=1", "unknown flag '--bogus'"},
      {"labels --seed=" + seed + ok + " --progress=sometimes",
       "--progress: want auto (only on a terminal), always or never"},
      {"keygen --out=x --idle_timeout_s=2", "--idle_timeout_s does not apply to keygen"},  // a serve flag
      {"graph-info", "--chunk_labels is required"},
      {"graph-info --chunk_labels=0", "--chunk_labels must be in [1, 1048576], got 0"},  // given: not missing
      {"bench --what=everything", "--what"},
      {"bench --backend=opencl", "--backend"},
      // Help of a subcommand that does not exist, at any level: the usage error, one line.
      {"frobnicate", "wipeproof-prover: unknown subcommand 'frobnicate' (see wipeproof-prover --help)"},
      {"help nosuch", "wipeproof-prover: unknown subcommand 'nosuch' (see wipeproof-prover --help)"},
      {"help serve nosuch",
       "wipeproof-prover serve: unknown subcommand 'nosuch' (serve has none; see wipeproof-prover serve --help)"},
      {"'x\x1b[31m'", "wipeproof-prover: unknown subcommand 'x\\u001b[31m'"},  // escaped
  };
  for (const auto& c : cases) {
    ProverRun run = RunProver(c.args);
    SCOPED_TRACE(c.args);
    EXPECT_EQ(run.exit_code, 2);  // a bad command line, whatever the flag
    EXPECT_EQ(run.out, "");
    std::vector<std::string> lines = Lines(run.err);
    ASSERT_EQ(lines.size(), 1u) << run.err;
    EXPECT_NE(lines[0].find(c.reason), std::string::npos) << lines[0];
  }
}

TEST(ProverCli, UsageAndHelp) {
  ProverRun unknown = RunProver("frobnicate");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err, "wipeproof-prover: unknown subcommand 'frobnicate' (see wipeproof-prover --help)\n");
  EXPECT_EQ(RunProver("").exit_code, 2);
  ProverRun version = RunProver("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out, "wipeproof-prover " WIPEPROOF_TEST_VERSION " (wipe protocol version 3)\n");
  for (const char* sub : {"labels", "graph-info", "bench"}) {
    ProverRun help = RunProver(std::string(sub) + " --help");
    EXPECT_EQ(help.exit_code, 0) << sub;
    EXPECT_NE(help.out.find("-chunk_labels"), std::string::npos) << help.out;
  }
  ProverRun bench_help = RunProver("bench --helpshort");
  EXPECT_NE(bench_help.out.find("-seconds"), std::string::npos);
  EXPECT_EQ(bench_help.out.find("-sha256"), std::string::npos);  // labels-only flag not listed
  // doctor takes serve's flags as they are (it checks what serve would use; agent.env's line may
  // carry --progress, which doctor accepts and ignores) and --json.
  ProverRun doctor_help = RunProver("doctor --help");
  EXPECT_EQ(doctor_help.exit_code, 0);
  for (const char* flag :
       {"-json", "-node_key", "-listen", "-host_budget_gib", "-devices", "-clock_skew_us", "-progress"}) {
    EXPECT_NE(doctor_help.out.find(flag), std::string::npos) << flag << "\n" << doctor_help.out;
  }
  EXPECT_NE(RunProver("serve --help").out.find("-progress"), std::string::npos);
}

// label-spec.md §3 table.
TEST(ProverCli, GraphInfoReproducesTheSpecTable) {
  struct Row {
    uint32_t m;
    uint64_t nodes;
    double per_output;
    uint64_t min_depth;
  } rows[] = {{1024, 96254, 94.0, 1536},
              {4096, 557054, 136.0, 6144},
              {16384, 3047422, 186.0, 24576},
              {131072, 36175870, 276.0, 196608}};
  for (const auto& row : rows) {
    ProverRun run = RunProver("graph-info --chunk_labels=" + std::to_string(row.m));
    ASSERT_EQ(run.exit_code, 0) << run.err;
    nlohmann::json j = nlohmann::json::parse(run.out);
    EXPECT_EQ(j["chunk_labels"], row.m);
    EXPECT_EQ(j["nodes"], row.nodes);
    EXPECT_NEAR(j["nodes_per_output"].get<double>(), row.per_output, 0.05) << row.m;  // spec rounds to 0.1
    EXPECT_EQ(j["min_output_depth"], row.min_depth);
    EXPECT_GE(j["max_output_depth"].get<uint64_t>(), row.min_depth);
    EXPECT_GT(j["peak_live_labels"].get<uint64_t>(), 0u);
    // The exclusive chains as kernels/exclusive_chains.h computes them.
    const ExclusiveChains chains = ComputeExclusiveChains(row.m);
    const auto& x = j["exclusive_chain_nodes"];
    EXPECT_DOUBLE_EQ(x["per_output"].get<double>(), static_cast<double>(chains.prefix[row.m]) / row.m);
    EXPECT_EQ(x["min"].get<uint64_t>(), chains.prefix[1]);
    const uint32_t k90 = row.m - row.m / 10;
    EXPECT_DOUBLE_EQ(x["per_output_of_shortest_90_percent"].get<double>(), static_cast<double>(chains.prefix[k90]) / k90);
    EXPECT_LE(x["per_output"].get<double>(), row.per_output);
    EXPECT_LT(x["per_output_of_shortest_90_percent"].get<double>(), x["per_output"].get<double>());
  }
}

TEST(ProverCli, BenchLabelerChecksKnownAnswerAndPrintsRates) {
  for (const char* format : {"posedb-blake3-c1", "posedb-blake3-192"}) {
    ProverRun run = RunProver(std::string("bench --what=labeler --seconds=0.2 --chunk_labels=1024 --format=") + format);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    nlohmann::json j = nlohmann::json::parse(run.out);
    EXPECT_EQ(j["format"], format);
    EXPECT_EQ(j["known_answer"]["ok"], true);
    EXPECT_GT(j["labels_per_s"].get<double>(), 0);
    EXPECT_GT(j["compressions_per_s_per_core"].get<double>(), 0);
    EXPECT_GE(j["simd_width"].get<int>(), 1);
  }
  ProverRun portable = RunProver("bench --what=labeler --seconds=0.1 --chunk_labels=256 --simd=portable");
  ASSERT_EQ(portable.exit_code, 0) << portable.err;
  EXPECT_EQ(nlohmann::json::parse(portable.out)["simd"], "portable");
}

TEST(ProverCli, BenchVerifyAndFill) {
  ProverRun verify = RunProver("bench --what=verify --seconds=0.1");
  ASSERT_EQ(verify.exit_code, 0) << verify.err;
  nlohmann::json v = nlohmann::json::parse(verify.out);
  EXPECT_EQ(v["chunk_labels"], 16384);
  EXPECT_GT(v["ms_per_chunk"]["median"].get<double>(), 0);
  EXPECT_TRUE(v.contains("meets_target"));

  ProverRun fill = RunProver("bench --what=fill --gib=0.01 --chunk_labels=1024 --samples=4 --progress=false");
  ASSERT_EQ(fill.exit_code, 0) << fill.err;
  nlohmann::json f = nlohmann::json::parse(fill.out);
  EXPECT_EQ(f["bytes_held"], 10737418 / 4096 * 4096);
  EXPECT_EQ(f["check"]["ok"], true);
  EXPECT_EQ(f["check"]["chunks"], 4);
  EXPECT_EQ(f["scratch_bytes_after_fill"], 0);
}

TEST(ProverCli, GpuBackendSaysDisabledOrRuns) {
  for (const char* backend : {"cuda", "hip"}) {
    ProverRun run = RunProver(std::string("bench --what=labeler --seconds=0.1 --chunk_labels=1024 --backend=") + backend);
    if (run.exit_code == 0) continue;  // a GPU build on a GPU machine
    EXPECT_EQ(run.exit_code, 3);       // the environment: no conclusion
    EXPECT_NE(run.err.find(std::string(backend) + ": disabled: "), std::string::npos) << run.err;
    EXPECT_EQ(Lines(run.err).size(), 1u) << run.err;
  }
}

// The exit-code table (common/cli_exit_codes.h) over the prover's error classes, with the words of
// each message: no status code name ("NOT_FOUND: ...") reaches the user.
TEST(ProverCli, ExitCodesFollowTheTableAndMessagesAreWords) {
  const std::string dir = ::testing::TempDir() + "/prover_cli_exit_codes";
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  ASSERT_EQ(RunProver("keygen --out=" + dir + "/node").exit_code, 0);
  const std::string seed = " --seed=" + std::string(64, '0') + " --chunk_labels=64";
  // serve's required flags (files need not exist: the address is checked first).
  const std::string serve =
      "serve --node_name=n1 --authority_key=a.pub --challenger_key=c.pub "
      "--challenger_cert=c.crt --node_key=" +
      dir + "/node.key --devices=host";
  struct Case {
    std::string args;
    int exit_code;
    std::string words;  // expected in the one line on stderr
  } cases[] = {
      // 2: bad command line, including values gflags itself would refuse with exit 1.
      {"labels" + seed + " --count=abc", 2, "bad value 'abc' for --count (want a whole number >= 0)"},
      {"labels" + seed + " --count=4 --threads=1.5", 2, "bad value '1.5' for --threads (want a whole number)"},
      {"labels" + seed + " --count", 2, "--count needs a value (--count=VALUE)"},
      {"labels" + seed + " --count=4 --sha256=maybe", 2, "bad value 'maybe' for --sha256 (want true or false)"},
      // 2: a missing folder, an existing file.
      {"keygen --out=" + dir + "/absent/node", 2,
       "cannot write " + dir + "/absent/node.key: the folder " + dir + "/absent does not exist; create it first"},
      {"keygen --out=" + dir + "/node", 2, "exists; not overwriting it (--force overwrites it)"},
      // 2: the wrong kind of key file, named before its mode.
      {"bench --what=all --seconds=0.1 --node_key=" + dir + "/node.pub --out=" + dir + "/p.json", 2,
       "--node_key: " + dir + "/node.pub is a public key file; this needs the secret key file (PREFIX.key)"},
      // 2: a malformed address is a bad command line in doctor as in serve (doctor's 1 is for the node).
      {"doctor --devices=host --listen=bad", 2,
       "doctor: --listen must be HOST:PORT, e.g. 127.0.0.1:7300 (port 0: any free port), not 'bad'"},
      {"doctor --devices=host --listen=127.0.0.1:99999", 2,
       "doctor: --listen: the port of '127.0.0.1:99999' is not a number from 0 to 65535"},
      {"doctor --devices=host --metrics_listen=x:y", 2,
       "doctor: --metrics_listen: the port of 'x:y' is not a number from 0 to 65535"},
      {serve + " --listen=127.0.0.1:abc", 2, "serve: --listen: the port of '127.0.0.1:abc' is not a number"},
      {serve + " --listen=bad", 2, "serve: --listen must be HOST:PORT"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    ProverRun run = RunProver(c.args);
    EXPECT_EQ(run.exit_code, c.exit_code) << run.err;
    EXPECT_EQ(Lines(run.err).size(), 1u) << run.err;  // one line, printed once
    EXPECT_NE(run.err.find(c.words), std::string::npos) << run.err;
    for (const char* code : {"INVALID_ARGUMENT", "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "INTERNAL",
                             "DATA_LOSS", "UNAVAILABLE", "FAILED_PRECONDITION", "ERROR: "}) {
      EXPECT_EQ(run.err.find(code), std::string::npos) << code << " in: " << run.err;
    }
  }
}

TEST(ProverCli, EachSubcommandHelpListsOnlyItsOwnFlags) {
  ProverRun top = RunProver("--help");
  ASSERT_EQ(top.exit_code, 0);
  EXPECT_NE(top.out.find("Exit codes (both wipeproof-prover and wipeproof-challenger):\n  0  done"), std::string::npos)
      << top.out;
  for (const char* line :
       {"\n  1  the checked thing is bad", "\n  2  nothing was done, fix the input", "\n  3  no conclusion"}) {
    EXPECT_NE(top.out.find(line), std::string::npos) << line;
  }
  const std::vector<std::string> subs = {"labels", "graph-info", "bench", "keygen", "serve"};
  for (const std::string& sub : subs) {
    SCOPED_TRACE(sub);
    ProverRun help = RunProver(sub + " --help");
    ASSERT_EQ(help.exit_code, 0);
    EXPECT_FALSE(testing::ListedHelpFlags(help.out).empty());
    EXPECT_EQ(testing::HelpFlagProblems(help.out, sub, subs), std::vector<std::string>{}) << help.out;
  }
  // `help SUB` is `SUB --help`, not the top-level usage.
  for (const std::string sub : {"serve", "doctor", "bench"}) {
    SCOPED_TRACE(sub);
    ProverRun help = RunProver("help " + sub);
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_EQ(help.out, RunProver(sub + " --help").out);
    EXPECT_EQ(help.out.rfind("usage: wipeproof-prover " + sub + " [flags]\n", 0), 0u) << help.out;
  }
  // The flags serve cannot run without say so.
  const std::string serve = RunProver("serve --help").out;
  for (const std::string flag : {"authority_key", "challenger_key", "challenger_cert", "node_key", "node_name"}) {
    const size_t at = serve.find("    -" + flag + " (");
    ASSERT_NE(at, std::string::npos) << flag;
    const std::string block = serve.substr(at, serve.find(" type: ", at) - at);
    EXPECT_NE(block.find("(required)"), std::string::npos) << block;
  }
}

}  // namespace
}  // namespace wipeproof
