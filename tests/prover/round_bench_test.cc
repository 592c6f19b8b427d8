// The round benchmark (prover/bench/round_bench.h, `bench --what=rounds`) on all its paths, briefly:
// every answer is verified label by label inside it (a wrong label is an error), and the figures it
// reports hang together. Times are not asserted (benchmarks show performance; docs/benchmarks.md).
#include "prover/bench/round_bench.h"

#include <gtest/gtest.h>

#include <iterator>

#include "prover/bench/round_floor.h"
#include "prover/bench/round_floor_blocking.h"

namespace wipeproof {
namespace {

void ExpectOrdered(const Percentiles& p, const char* what) {
  EXPECT_GE(p.p50_us, 0) << what;
  EXPECT_LE(p.p50_us, p.p99_us) << what;
  EXPECT_LE(p.p99_us, p.p999_us) << what;
  EXPECT_LE(p.p999_us, p.max_us) << what;
}

TEST(RoundBenchTest, EveryPathAnswersEveryRoundRightAndReportsItsStages) {
  RoundBenchOptions options;
  options.rounds = 40;
  options.labels_per_round = 64;
  options.session_labels = 1 << 16;
  const char* paths[] = {"in-process",         "tcp-loopback-plaintext",         "tcp-loopback-tls13",
                         "channel-in-process", "channel-tcp-loopback-plaintext", "channel-tcp-loopback-tls13"};
  options.paths.assign(std::begin(paths), std::end(paths));
  auto results = RunRoundBench(options);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  ASSERT_EQ(results->size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    const RoundPathResult& r = (*results)[i];
    SCOPED_TRACE(r.path);
    EXPECT_EQ(r.path, paths[i]);
    EXPECT_EQ(r.rounds, 40u);
    EXPECT_EQ(r.labels_per_round, 64u);
    ExpectOrdered(r.round, "round");
    ExpectOrdered(r.agent_answer, "agent answer");
    EXPECT_GT(r.round.p50_us, 0);
    // The agent reported every round's stages, each inside the round it belongs to.
    EXPECT_GT(r.agent_answer.p50_us, 0);
    EXPECT_GT(r.agent_lookups.max_us, 0);
    EXPECT_GT(r.agent_transcript.max_us, 0) << "no transcript hash reported after the answers";
    EXPECT_LE(r.agent_answer.max_us, r.round.max_us);
    EXPECT_LE(r.agent_checks.p50_us + r.agent_lookups.p50_us, r.agent_answer.max_us);
    EXPECT_GE(r.transport.p50_us, 0);
    EXPECT_GT(r.client_cpu_us, 0);
    if (r.path == "in-process" || r.path == "channel-in-process") {
      EXPECT_EQ(r.agent_cpu_us, -1);
      EXPECT_EQ(r.tls_handshake_p50_us, -1);
    } else {
      EXPECT_GT(r.agent_cpu_us, 0);
    }
    if (r.path == "tcp-loopback-tls13") EXPECT_GT(r.tls_handshake_p50_us, 0);
    // Counted, or said why not.
    EXPECT_TRUE(r.client_instructions > 0 || !r.instructions_unavailable.empty());
  }
}

// The floor paths (round_floor.h): the same messages without the RPC system or the agent; each
// answer's round index and size are checked inside (a mismatch is an error).
TEST(RoundBenchTest, FloorPathsAnswerEveryRound) {
  RoundBenchOptions options;
  options.rounds = 40;
  options.labels_per_round = 64;
  options.session_labels = 1 << 16;
  options.paths = {"floor-raw-in-process",
                   "floor-in-process",
                   "floor-tcp-loopback-plaintext",
                   "floor-tcp-loopback-tls13",
                   "floor-blocking-in-process",
                   "floor-blocking-tcp-loopback-plaintext",
                   "floor-blocking-tcp-loopback-tls13"};
  auto results = RunRoundBench(options);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  ASSERT_EQ(results->size(), 7u);
  for (size_t i = 0; i < 7; ++i) {
    const RoundPathResult& r = (*results)[i];
    SCOPED_TRACE(r.path);
    EXPECT_EQ(r.path, options.paths[i]);
    EXPECT_EQ(r.rounds, 40u);
    EXPECT_EQ(r.labels_per_round, 64u);
    ExpectOrdered(r.round, "round");
    EXPECT_GT(r.round.p50_us, 0);
    EXPECT_EQ(r.transport.p50_us, r.round.p50_us);  // no agent: the round is all transport
    EXPECT_EQ(r.agent_answer.max_us, 0);
    EXPECT_GT(r.client_cpu_us, 0);
    if (r.path != "floor-raw-in-process" && r.path != "floor-in-process") {
      EXPECT_GT(r.agent_cpu_us, 0) << "the echo thread's CPU";
    } else {
      EXPECT_EQ(r.agent_cpu_us, -1);
    }
  }
}

TEST(RoundBenchTest, FloorRefusesWhatItCannotRun) {
  RoundBenchOptions options;
  options.rounds = 3;
  EXPECT_EQ(MeasureRoundFloor(options, "in-process", nullptr, nullptr).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(MeasureRoundFloor(options, "floor-tcp-loopback-tls13", nullptr, nullptr).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(MeasureBlockingFloor(options, "floor-in-process", {}, {}).status().code(), StatusCode::kInvalidArgument);
  // The largest round a bench asks (q = 4096: a 128 KiB answer, several TLS records) on the blocking
  // TLS floor, and on one thread's socketpair, which it still fits.
  options.labels_per_round = 4096;
  options.session_labels = uint64_t{4096} * options.chunk_labels;
  const proto::KeyPair echo_key = proto::GenerateKeyPair();
  const proto::KeyPair client_key = proto::GenerateKeyPair();
  auto largest_tls = MeasureBlockingFloor(options, "floor-blocking-tcp-loopback-tls13", echo_key, client_key);
  ASSERT_TRUE(largest_tls.ok()) << largest_tls.status().ToString();
  EXPECT_EQ(largest_tls->rounds, 3u);
  auto largest = MeasureRoundFloor(options, "floor-raw-in-process", nullptr, nullptr);
  ASSERT_TRUE(largest.ok()) << largest.status().ToString();
  EXPECT_EQ(largest->rounds, 3u);
}

TEST(RoundBenchTest, RefusesWhatItCannotMeasure) {
  RoundBenchOptions bad_path;
  bad_path.paths = {"in-process", "udp"};
  EXPECT_EQ(RunRoundBench(bad_path).status().code(), StatusCode::kInvalidArgument);
  RoundBenchOptions too_many;
  too_many.session_labels = 1 << 12;  // 16 chunks of m = 256
  too_many.labels_per_round = 17;
  auto refused = RunRoundBench(too_many);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("at most the session's chunks (16)"), std::string::npos)
      << refused.status().ToString();
  RoundBenchOptions odd_m;
  odd_m.chunk_labels = 300;
  EXPECT_EQ(RunRoundBench(odd_m).status().code(), StatusCode::kInvalidArgument);
  RoundBenchOptions no_rounds;
  no_rounds.rounds = 0;
  EXPECT_EQ(RunRoundBench(no_rounds).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace wipeproof
