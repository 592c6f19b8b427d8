// When `serve` prepares a wave run and what it publishes about its schedule
// (challenger/fleet/scheduler.h PrepareStartDelayUs, wave_service.h): the prepare-time rule's known
// answers; the wave's challenged labels and the per-label estimate of its first precompute; nothing
// prepared while a far-off run is awaited; and no metric series or label value that carries the
// next run's time.
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "challenger/fleet/fleet_metrics.h"
#include "challenger/fleet/scheduler.h"
#include "challenger/fleet/wave_run.h"
#include "challenger/fleet/wave_service.h"
#include "challenger/ledger/ledger.h"
#include "common/clock.h"
#include "common/metrics_registry.h"
#include "tests/support/challenger_fixtures.h"
#include "tests/support/ledger_test_util.h"

namespace wipeproof {
namespace {

constexpr uint64_t kSecondUs = 1'000'000;

// threat-model: T-PREPARED-SECRETS
TEST(PrepareTimeRuleTest, KnownAnswers) {
  // Twice the precompute time before the run.
  EXPECT_EQ(PrepareStartDelayUs(3600 * kSecondUs, 10 * kSecondUs), 3580 * kSecondUs);
  EXPECT_EQ(PrepareStartDelayUs(86'400 * kSecondUs, 1800 * kSecondUs), 82'800 * kSecondUs);
  EXPECT_EQ(PrepareStartDelayUs(1000, 1), 998u);
  // A lead of exactly the delay, or more: prepare now.
  EXPECT_EQ(PrepareStartDelayUs(100 * kSecondUs, 50 * kSecondUs), 0u);
  EXPECT_EQ(PrepareStartDelayUs(100 * kSecondUs, 51 * kSecondUs), 0u);
  EXPECT_EQ(PrepareStartDelayUs(101, 50), 1u);
  EXPECT_EQ(PrepareStartDelayUs(0, 0), 0u);
  EXPECT_EQ(PrepareStartDelayUs(0, 5), 0u);
  // No estimate: at the run's time.
  EXPECT_EQ(PrepareStartDelayUs(3600 * kSecondUs, 0), 3600 * kSecondUs);
  // No overflow at the ends of the range.
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(PrepareStartDelayUs(max, max), 0u);
  EXPECT_EQ(PrepareStartDelayUs(max, max / 2), 1u);
  EXPECT_EQ(PrepareStartDelayUs(max, 1), max - 2);
  EXPECT_EQ(PrepareStartDelayUs(5, max), 0u);
}

// The labels the estimate counts are exactly those PrepareWave computes: node-a's two devices and
// node-b's host, R = 16 proof batches of q = 32 and 16 holding batches of q / 8 = 4 each.
TEST(PrepareTimeRuleTest, ChallengedLabelsAreThoseAWaveRunComputes) {
  const Inventory inventory = testing::TestInventory();
  const Profile profile = testing::TestProfile();
  const TcpSessionOptions options = testing::TcpTestOptions();
  const uint64_t labels = ChallengedLabels(PlanWave(inventory, inventory.waves[0], profile, *options.clock));
  EXPECT_EQ(labels, 3 * (16 * 32 + 16 * 4));
  const PreparedWave prepared = PrepareWave(inventory, inventory.waves[0], profile, options);
  EXPECT_EQ(prepared.ExpectedLabelBytes(), labels * 32);
  const double label_us = MeasureExpectedLabelUs(profile, 1);
  EXPECT_GT(label_us, 0);
  EXPECT_LT(label_us, 1e6) << "a chunk of 64 labels takes a second?";
}

// A held wave's members ask an occupancy window as long as the wave's longest gap (period + jitter:
// the inventory states it anyway), and close it at the run's secret time, which is in no order.
// threat-model: T-SCHEDULE-SECRET
TEST(HeldWaveTest, MembersHoldToTheNextRunWhoseTimeIsInNoOrder) {
  Inventory inventory = testing::TestInventory();
  Wave& wave = inventory.waves[0];
  wave.period_s = 600;
  wave.jitter_s = 60;
  wave.hold = WaveHold{2, 0.25, 8};
  const Profile profile = testing::TestProfile();
  const Clock& clock = *testing::TcpTestOptions().clock;
  // Without a close time (the estimate of a run's precompute): no window.
  for (const auto& plan : PlanWave(inventory, wave, profile, clock).plans) {
    ASSERT_TRUE(plan.has_value());
    EXPECT_EQ(plan->occupancy_window_us, 0u);
  }
  const uint64_t close_us = 617'123'456;
  const WavePlans plans = PlanWave(inventory, wave, profile, clock, close_us);
  EXPECT_TRUE(plans.whole);
  for (const auto& plan : plans.plans) {
    ASSERT_TRUE(plan.has_value());
    EXPECT_EQ(plan->occupancy_window_us, 660 * kSecondUs);
    EXPECT_EQ(plan->occupancy_close_us, close_us);
    EXPECT_EQ(plan->OccupancyRunUs(), close_us);
    EXPECT_EQ(plan->occupancy_mean_gap_us, 2 * kSecondUs);
    uint64_t planned = 0, occupancy_labels = 0;
    for (const PlannedDevice& d : plan->devices) {
      planned += d.planned_bytes();
      occupancy_labels += d.occupancy_labels;
      EXPECT_GE(d.occupancy_labels, 1u);
    }
    EXPECT_EQ(plan->occupancy_shortfall_bytes, planned / 4);
    EXPECT_GE(occupancy_labels, plan->devices.size());
    // The order carries the window, never the close time.
    capnp::MallocMessageBuilder message;
    auto order = message.initRoot<proto::WipeOrder>();
    WriteOrder(*plan, proto::KeyId{}, order);
    EXPECT_EQ(order.getOccupancyWindowUs(), 660 * kSecondUs);
    EXPECT_EQ(PlanFromOrder(order.asReader()).occupancy_close_us, 0u);
    const kj::Array<capnp::word> words = capnp::messageToFlatArray(message);
    const std::string bytes(reinterpret_cast<const char*>(words.begin()), words.size() * sizeof(capnp::word));
    const std::string needle(reinterpret_cast<const char*>(&close_us), sizeof close_us);
    EXPECT_EQ(bytes.find(needle), std::string::npos);
  }
  // A close beyond the window is the window.
  EXPECT_EQ(PlanWave(inventory, wave, profile, clock, 700 * kSecondUs).plans[0]->OccupancyRunUs(), 660 * kSecondUs);
}

class WaveServiceScheduleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    inventory_ = testing::TestInventory();
    // A year's period: the first run, uniform in it, is not due while the test runs.
    inventory_.waves[0].period_s = 31'536'000;
    inventory_.waves[0].jitter_s = 86'400;
    waves_ = {&inventory_.waves[0]};
    auto ledger = Ledger::Open(dir_.File("ledger.db"), keys_.challenger, SystemClock());
    ASSERT_TRUE(ledger.ok()) << ledger.status().ToString();
    ledger_ = std::move(ledger).value();
  }

  ledger_test::TempDir dir_;
  Inventory inventory_;
  std::vector<const Wave*> waves_;
  Profile profile_ = testing::TestProfile();
  SessionKeys keys_{testing::TestKey(0x11), testing::TestKey(0x22)};
  std::unique_ptr<Ledger> ledger_;
};

// threat-model: T-PREPARED-SECRETS
TEST_F(WaveServiceScheduleTest, NothingIsPreparedWhileAFarOffRunIsAwaited) {
  WaveServiceOptions options;
  options.prepare_ahead_bytes = uint64_t{1} << 30;  // room to prepare ahead: the rule, not the budget, decides
  TcpSessionOptions session = testing::TcpTestOptions();
  std::atomic<uint64_t> computed{0};  // expected labels computed, any member
  session.prepare_progress = [&](const std::string&, uint64_t done, uint64_t) { computed.store(done); };
  std::ostringstream out, err;
  WaveService service(inventory_, waves_, profile_, keys_, *ledger_, session, options, nullptr, out, err);
  std::atomic<bool> stop{false};
  std::atomic<int> signal{0};
  std::thread run([&] { service.Run(stop, signal); });
  // Preparing this wave takes milliseconds: had it started when the wait began, it would show.
  for (int i = 0; i < 100 && computed.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  stop.store(true);
  run.join();
  EXPECT_EQ(computed.load(), 0u) << "expected labels computed a year before their run";
  EXPECT_EQ(service.HeldExpectedLabelBytes(), 0u);
  EXPECT_THAT(err.str(), ::testing::HasSubstr("next run at ")) << err.str();
}

// Every value and label value of a scrape, with its series.
struct Scraped {
  std::string series;
  std::vector<std::string> label_values;
  double value = 0;
};

std::vector<Scraped> ParseScrape(const std::string& text) {
  std::vector<Scraped> samples;
  const std::regex label(R"re((\w+)="((?:[^"\\]|\\.)*)")re");
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    Scraped s;
    s.series = line.substr(0, space);
    const std::string value = line.substr(space + 1);
    s.value = value == "NaN" ? std::nan("") : std::stod(value);
    for (auto it = std::sregex_iterator(s.series.begin(), s.series.end(), label); it != std::sregex_iterator(); ++it) {
      s.label_values.push_back((*it)[2]);
    }
    samples.push_back(s);
  }
  return samples;
}

// The scrape says nothing about when the next run is: no value or numeric label value, read as
// Unix seconds, milliseconds or microseconds, falls between a minute from now and the latest the
// next run can be (period + jitter from now); no label value names the next run's time as text.
// The pass-due time (last pass + period + jitter + 10 min) lies past that window by design.
// threat-model: T-SCHEDULE-SECRET
TEST_F(WaveServiceScheduleTest, NoMetricCarriesTheNextRunsTime) {
  MetricsRegistry registry;
  FleetMetrics metrics(registry, "test", waves_, SystemClock().UnixMicros());
  std::ostringstream out, err;
  WaveService service(inventory_, waves_, profile_, keys_, *ledger_, testing::TcpTestOptions(), WaveServiceOptions{},
                      &metrics, out, err);
  registry.AddCollector([&] { metrics.SetPrecompute(service.HeldExpectedLabelBytes(), service.WavesPreparing()); });
  std::atomic<bool> stop{true};  // schedules each wave (its "next run at" line), then stops
  std::atomic<int> signal{0};
  service.Run(stop, signal);
  // The next run's time as serve printed it, e.g. 2027-03-04T05:06:07Z.
  std::smatch next;
  const std::string lines = err.str();
  ASSERT_TRUE(std::regex_search(lines, next, std::regex(R"(next run at (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)Z)"))) << lines;
  const std::string next_text = next[1];
  const std::string next_date = next_text.substr(0, 10);

  const double now_s = static_cast<double>(SystemClock().UnixMicros()) / 1e6;
  const double from_s = now_s + 60;
  const double to_s = now_s + inventory_.waves[0].period_s + inventory_.waves[0].jitter_s;
  auto in_window = [&](double v) {
    for (double scale : {1.0, 1e3, 1e6}) {
      if (std::isfinite(v) && v / scale >= from_s && v / scale <= to_s) return true;
    }
    return false;
  };
  const std::string text = registry.Render();
  const std::vector<Scraped> samples = ParseScrape(text);
  ASSERT_GT(samples.size(), 20u) << text;
  for (const Scraped& s : samples) {
    EXPECT_FALSE(in_window(s.value)) << s.series << " " << s.value << " lies where the next run can be";
    for (const std::string& v : s.label_values) {
      char* end = nullptr;
      const double number = std::strtod(v.c_str(), &end);
      if (end != v.c_str() && *end == '\0') {
        EXPECT_FALSE(in_window(number)) << s.series << ": label value " << v;
      }
      EXPECT_EQ(v.find(next_date), std::string::npos) << s.series << ": label value " << v << " names " << next_text;
    }
  }
  EXPECT_EQ(text.find("next_wave"), std::string::npos) << text;
}

}  // namespace
}  // namespace wipeproof
