#include "common/metrics_registry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <thread>
#include <vector>

namespace wipeproof {
namespace {

TEST(MetricsRegistryTest, RendersCountersGaugesAndHistogramsExactly) {
  MetricsRegistry registry;
  CounterFamily& sessions = registry.AddCounter("demo_sessions_total", "Sessions ended, by outcome.", {"outcome"});
  GaugeFamily& held = registry.AddGauge("demo_held_bytes", "Bytes held.\nSecond line with a \\.", {"device", "node"});
  HistogramFamily& lookup = registry.AddHistogram("demo_lookup_seconds", "Lookup time.", {}, {0.125, 0.5, 2});
  registry.AddGauge("demo_unused", "A family with no series is left out.", {});

  sessions.WithLabels({"pass"}).Increment();
  sessions.WithLabels({"pass"}).Increment(2);
  sessions.WithLabels({"fail"}).Increment();
  sessions.WithLabels({"fail"}).Increment(-5);  // ignored: counters only go up
  held.WithLabels({"host", "node-a"}).Set(2147483648.0);
  held.WithLabels({"gpu \"0\"\n", "c:\\x"}).Set(0.5);
  lookup.WithLabels({}).Observe(0.0625);
  lookup.WithLabels({}).Observe(0.125);  // on the bound: counted in le="0.125"
  lookup.WithLabels({}).Observe(0.25);
  lookup.WithLabels({}).Observe(3);

  EXPECT_EQ(registry.Render(),
            "# HELP demo_sessions_total Sessions ended, by outcome.\n"
            "# TYPE demo_sessions_total counter\n"
            "demo_sessions_total{outcome=\"fail\"} 1\n"
            "demo_sessions_total{outcome=\"pass\"} 3\n"
            "# HELP demo_held_bytes Bytes held.\\nSecond line with a \\\\.\n"
            "# TYPE demo_held_bytes gauge\n"
            "demo_held_bytes{device=\"gpu \\\"0\\\"\\n\",node=\"c:\\\\x\"} 0.5\n"
            "demo_held_bytes{device=\"host\",node=\"node-a\"} 2147483648\n"
            "# HELP demo_lookup_seconds Lookup time.\n"
            "# TYPE demo_lookup_seconds histogram\n"
            "demo_lookup_seconds_bucket{le=\"0.125\"} 2\n"
            "demo_lookup_seconds_bucket{le=\"0.5\"} 3\n"
            "demo_lookup_seconds_bucket{le=\"2\"} 3\n"
            "demo_lookup_seconds_bucket{le=\"+Inf\"} 4\n"
            "demo_lookup_seconds_sum 3.4375\n"
            "demo_lookup_seconds_count 4\n");
}

TEST(MetricsRegistryTest, HistogramWithLabelsPutsLeLast) {
  MetricsRegistry registry;
  HistogramFamily& rounds = registry.AddHistogram("demo_round_seconds", "Round time.", {"node"}, {1});
  rounds.WithLabels({"b"}).Observe(2);
  EXPECT_EQ(registry.Render(),
            "# HELP demo_round_seconds Round time.\n"
            "# TYPE demo_round_seconds histogram\n"
            "demo_round_seconds_bucket{node=\"b\",le=\"1\"} 0\n"
            "demo_round_seconds_bucket{node=\"b\",le=\"+Inf\"} 1\n"
            "demo_round_seconds_sum{node=\"b\"} 2\n"
            "demo_round_seconds_count{node=\"b\"} 1\n");
}

TEST(MetricsRegistryTest, FormatsValues) {
  EXPECT_EQ(FormatMetricValue(0), "0");
  EXPECT_EQ(FormatMetricValue(-0.0), "0");
  EXPECT_EQ(FormatMetricValue(12), "12");
  EXPECT_EQ(FormatMetricValue(-3), "-3");
  EXPECT_EQ(FormatMetricValue(0.25), "0.25");
  EXPECT_EQ(FormatMetricValue(0.1), "0.1");
  EXPECT_EQ(FormatMetricValue(1e-06), "1e-06");
  EXPECT_EQ(FormatMetricValue(1.7e300), "1.7e+300");
  EXPECT_EQ(FormatMetricValue(1796688000000000.5), "1796688000000000.5");
  EXPECT_EQ(FormatMetricValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatMetricValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatMetricValue(std::nan("")), "NaN");
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

TEST(MetricsRegistryTest, CollectorsRunBeforeEachRenderAndClearDropsSeries) {
  MetricsRegistry registry;
  GaugeFamily& session = registry.AddGauge("demo_session_info", "The running session.", {"session_id"});
  int scrapes = 0;
  registry.AddCollector([&] {
    ++scrapes;
    session.Clear();
    if (scrapes == 1) session.WithLabels({"abc"}).Set(1);
  });
  EXPECT_EQ(registry.Render(),
            "# HELP demo_session_info The running session.\n"
            "# TYPE demo_session_info gauge\n"
            "demo_session_info{session_id=\"abc\"} 1\n");
  EXPECT_EQ(registry.Render(), "");
  EXPECT_EQ(scrapes, 2);
}

TEST(MetricsRegistryTest, UpdatesFromManyThreadsAreAllCounted) {
  MetricsRegistry registry;
  CounterFamily& rounds = registry.AddCounter("demo_rounds_total", "Rounds.", {"node"});
  HistogramFamily& latency = registry.AddHistogram("demo_latency_seconds", "Latency.", {"node"}, {0.5});
  GaugeFamily& level = registry.AddGauge("demo_level", "Level.", {});
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10000; ++i) {
        rounds.WithLabels({t % 2 ? "a" : "b"}).Increment();
        latency.WithLabels({"a"}).Observe(i % 2 ? 0.25 : 1.0);
        level.WithLabels({}).Add(1);
        if (i % 1000 == 0) registry.Render();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(rounds.WithLabels({"a"}).Value(), 40000);
  EXPECT_EQ(rounds.WithLabels({"b"}).Value(), 40000);
  EXPECT_EQ(level.WithLabels({}).Value(), 80000);
  const Histogram::Snapshot s = latency.WithLabels({"a"}).Get();
  EXPECT_EQ(s.count, 80000u);
  EXPECT_EQ(s.cumulative, (std::vector<uint64_t>{40000, 80000}));
  EXPECT_DOUBLE_EQ(s.sum, 40000 * 0.25 + 40000 * 1.0);
}

TEST(MetricsRegistryDeathTest, RefusesBadRegistrations) {
  MetricsRegistry registry;
  registry.AddCounter("demo_total", "x", {});
  EXPECT_DEATH(registry.AddCounter("demo_total", "again", {}), "registered twice");
  EXPECT_DEATH(registry.AddGauge("2bad", "x", {}), "invalid metric name");
  EXPECT_DEATH(registry.AddGauge("demo_g", "x", {"a-b"}), "invalid label name");
  EXPECT_DEATH(registry.AddGauge("demo_h", "x", {"__x"}), "invalid label name");
  EXPECT_DEATH(registry.AddHistogram("demo_s", "x", {"le"}, {1}), "label 'le'");
  EXPECT_DEATH(registry.AddHistogram("demo_t", "x", {}, {1, 1}), "strictly increasing");
  GaugeFamily& g = registry.AddGauge("demo_u", "x", {"a"});
  EXPECT_DEATH(g.WithLabels({}), "0 label values for 1 label names");
}

}  // namespace
}  // namespace wipeproof
