// The challenger's own share of each round (challenger/session/round_costs.h): the histogram's
// buckets and quantiles on known values, and how RoundCostStats sums sessions (added = build +
// check, rounds without an answer counted as sent only, the transcript and the wave report apart).
// No timing is asserted here: the figures are measured by scripts/load-test.sh (docs/benchmarks.md).
#include "challenger/session/round_costs.h"

#include <gtest/gtest.h>

#include <string>

namespace wipeproof {
namespace {

TEST(CostHistogramTest, ExactBelow64AndWithinOneStepAbove) {
  for (uint64_t v = 0; v < 64; ++v) {
    EXPECT_EQ(CostHistogram::BucketOf(v), v);
    EXPECT_EQ(CostHistogram::UpperEdge(CostHistogram::BucketOf(v)), v);
  }
  // 64..127: steps of 2; 1024..2047: steps of 32; the top bucket ends at the largest value.
  EXPECT_EQ(CostHistogram::UpperEdge(CostHistogram::BucketOf(64)), 65u);
  EXPECT_EQ(CostHistogram::UpperEdge(CostHistogram::BucketOf(65)), 65u);
  EXPECT_EQ(CostHistogram::UpperEdge(CostHistogram::BucketOf(127)), 127u);
  EXPECT_EQ(CostHistogram::UpperEdge(CostHistogram::BucketOf(1000)), 1007u);
  EXPECT_EQ(CostHistogram::UpperEdge(CostHistogram::BucketOf(1024)), 1055u);
  EXPECT_EQ(CostHistogram::UpperEdge(CostHistogram::BucketOf(~uint64_t{0})), ~uint64_t{0});
  // Every value lies in its bucket, whose upper edge is less than 1/32 above it.
  for (uint64_t v : {uint64_t{64}, uint64_t{100}, uint64_t{4095}, uint64_t{4096}, uint64_t{123456789},
                     uint64_t{1} << 40, (uint64_t{1} << 63) + 12345}) {
    const uint64_t edge = CostHistogram::UpperEdge(CostHistogram::BucketOf(v));
    EXPECT_GE(edge, v);
    EXPECT_LT(edge - v, v / 32 + 1) << v;
    if (CostHistogram::BucketOf(v) > 0) EXPECT_LT(CostHistogram::UpperEdge(CostHistogram::BucketOf(v) - 1), v);
  }
}

TEST(CostHistogramTest, QuantilesOfKnownValues) {
  CostHistogram h;
  EXPECT_EQ(h.Quantile(0.5), 0u);
  for (uint64_t v = 1; v <= 60; ++v) h.Add(v);  // exact buckets
  EXPECT_EQ(h.count(), 60u);
  EXPECT_EQ(h.sum(), 60u * 61 / 2);
  EXPECT_EQ(h.max(), 60u);
  EXPECT_EQ(h.Quantile(0.5), 30u);
  EXPECT_EQ(h.Quantile(0.99), 60u);  // rank ceil(59.4) = 60
  EXPECT_EQ(h.Quantile(0.01), 1u);
  EXPECT_EQ(h.Quantile(1.0), 60u);

  CostHistogram big;
  for (int i = 0; i < 99; ++i) big.Add(1000);
  big.Add(50'000);
  EXPECT_EQ(big.Quantile(0.5), 1007u);      // 1000's bucket edge
  EXPECT_EQ(big.Quantile(0.99), 1007u);     // rank 99 of 100
  EXPECT_EQ(big.Quantile(0.999), 50'000u);  // the top bucket's edge is cut to the largest value seen
}

TEST(RoundCostStatsTest, SumsSessionsAndCountsUnansweredRoundsAsSentOnly) {
  SessionCosts a;
  a.rounds.push_back({/*build*/ 10, /*build_cpu*/ 8, /*send*/ 5, /*check*/ 20, /*check_cpu*/ 15, true,
                      /*transcript*/ 4, /*wave_report*/ 0, /*round*/ 400});
  a.rounds.push_back({30, 25, 6, 40, 35, true, 6, 900, 600});  // its last proof round: the wave report
  a.rounds.push_back({50, 45, 7, 0, 0, false});           // no answer: late, or the agent failed
  a.thread_cpu_ns = 3000;
  a.loop_turns = 7;
  SessionCosts b;
  b.rounds.push_back({2, 2, 1, 3, 3, true, 0, 0, 100});
  b.thread_cpu_ns = 500;
  b.loop_turns = 2;
  SessionCosts empty;  // a session that sent no round

  RoundCostStats stats;
  stats.Add(a);
  stats.Add(b);
  stats.Add(empty);
  const RoundCostStats::Summary s = stats.Snapshot();
  EXPECT_EQ(s.sessions, 3u);
  EXPECT_EQ(s.rounds, 4u);
  EXPECT_EQ(s.answered, 3u);
  EXPECT_EQ(s.build.count(), 4u);
  EXPECT_EQ(s.build.max(), 50u);
  EXPECT_EQ(s.check.count(), 3u);
  EXPECT_EQ(s.added.count(), 3u);
  EXPECT_EQ(s.added.sum(), 30u + 70u + 5u);  // build + check of each answered round
  EXPECT_EQ(s.added_cpu.sum(), 23u + 60u + 5u);
  EXPECT_EQ(s.added.max(), 70u);  // neither the transcript nor the wave report is added time
  EXPECT_EQ(s.added_first.count(), 2u);  // each session's first answered round: a's and b's
  EXPECT_EQ(s.added_first.sum(), 30u + 5u);
  EXPECT_EQ(s.added_after_first.count(), 1u);
  EXPECT_EQ(s.added_after_first.sum(), 70u);
  EXPECT_EQ(s.transcript.count(), 3u);
  EXPECT_EQ(s.transcript.sum(), 10u);
  EXPECT_EQ(s.wave_report.count(), 1u);
  EXPECT_EQ(s.wave_report.max(), 900u);
  EXPECT_EQ(s.thread_cpu_ns, 3500u);
  EXPECT_EQ(s.loop_turns, 9u);
  EXPECT_EQ(s.session_cpu_per_round.count(), 2u);  // per session with rounds: 3000/3 and 500/1
  EXPECT_EQ(s.session_cpu_per_round.sum(), 1000u + 500u);
  EXPECT_EQ(s.round.count(), 3u);  // answered rounds only
  EXPECT_EQ(s.round.sum(), 400u + 600u + 100u);
  EXPECT_EQ(s.round.max(), 600u);

  const std::string json = stats.Json(/*process_cpu_ns=*/8'000'000);
  EXPECT_NE(json.find("\"sessions\": 3, \"rounds\": 4, \"answered\": 3"), std::string::npos) << json;
  EXPECT_NE(json.find("\"added\": {\"count\": 3, \"p50_us\": 0.030, \"p99_us\": 0.070, \"p999_us\": 0.070, "
                      "\"max_us\": 0.070}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"session_thread_cpu_us\": 3.500"), std::string::npos) << json;
  EXPECT_NE(json.find("\"session_thread_cpu_us_per_round\": 0.875"), std::string::npos) << json;  // 3500 / 4
  EXPECT_NE(json.find("\"process_cpu_us\": 8000.000, \"process_cpu_us_per_round\": 2000.000"), std::string::npos)
      << json;
  EXPECT_EQ(stats.Json().find("process_cpu"), std::string::npos);  // not given: not stated
  EXPECT_NE(json.find("\"round\": {\"count\": 3, \"p50_us\": 0.407, \"p99_us\": 0.600"), std::string::npos) << json;
}

// Sessions on a shared event loop count no thread CPU of their own (SessionEnv::thread_shared); the
// loop's thread is added whole, once, and per-session figures leave them out.
TEST(RoundCostStatsTest, ASharedLoopThreadIsCountedOnceNotPerSession) {
  SessionCosts a;
  a.rounds.push_back({10, 8, 5, 20, 15, true, 4, 0, 300});
  SessionCosts b = a;
  RoundCostStats stats;
  stats.Add(a);
  stats.Add(b);
  stats.AddSharedThreadCpu(7000);
  const RoundCostStats::Summary s = stats.Snapshot();
  EXPECT_EQ(s.sessions, 2u);
  EXPECT_EQ(s.thread_cpu_ns, 7000u);
  EXPECT_EQ(s.session_cpu_per_round.count(), 0u);
  EXPECT_NE(stats.Json().find("\"session_thread_cpu_us_per_round\": 3.500"), std::string::npos) << stats.Json();
}

}  // namespace
}  // namespace wipeproof
