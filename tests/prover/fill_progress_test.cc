// When the agent logs a fill's progress (prover/agent/fill_progress.h), driven with given elapsed
// times and label counts: auto is quiet for 2 s, then a line per tenth or per 10 s; always logs
// from the start and a last line; never logs nothing.
#include "prover/agent/fill_progress.h"

#include <glog/logging.h>
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "prover/agent/device_fill.h"

namespace wipeproof {
namespace {

constexpr uint64_t kLabels = uint64_t{1} << 25;  // 1 GiB of 32-byte labels

TEST(FillProgress, AutoIsQuietForTwoSecondsThenLogsEachTenthOrEveryTenSeconds) {
  FillProgressTracker t({{"host", kLabels}}, ProgressMode::kAuto);
  EXPECT_TRUE(t.Sample(1'000'000, {kLabels / 4}).empty());  // 1 s: quiet
  auto first = t.Sample(2'000'000, {kLabels / 4});
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(
      first[0],
      "fill progress: device 'host' 25.0% 256.00 MiB of 1.00 GiB (268435456/1073741824 bytes), 0.13 GB/s, eta 6 s");
  EXPECT_TRUE(t.Sample(2'500'000, {kLabels / 4 + kLabels / 20}).empty());  // 5 % more: not yet
  EXPECT_TRUE(t.Sample(2'900'000, {kLabels / 2}).empty());                 // a tenth more, but < 1 s since
  EXPECT_EQ(t.Sample(3'000'000, {kLabels / 2}).size(), 1u);                // a tenth more and 1 s since
  EXPECT_TRUE(t.Sample(12'000'000, {kLabels / 2 + 1}).empty());            // 9 s, no tenth
  auto slow = t.Sample(13'000'000, {kLabels / 2 + 1});                     // 10 s since the last line
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_NE(slow[0].find("50.0%"), std::string::npos) << slow[0];
  auto last = t.Finish(14'000'000, {kLabels});
  ASSERT_EQ(last.size(), 1u);
  EXPECT_NE(last[0].find("100.0% 1.00 GiB of 1.00 GiB (1073741824/1073741824 bytes)"), std::string::npos) << last[0];
  EXPECT_NE(last[0].find("done in 14.0 s"), std::string::npos) << last[0];
}

TEST(FillProgress, AutoSaysNothingOfAShortFill) {
  FillProgressTracker t({{"host", kLabels}}, ProgressMode::kAuto);
  EXPECT_TRUE(t.Sample(500'000, {kLabels / 2}).empty());
  EXPECT_TRUE(t.Finish(900'000, {kLabels}).empty());
}

TEST(FillProgress, AlwaysLogsFromTheStartAndALastLinePerDevice) {
  FillProgressTracker t({{"host", kLabels}, {"GPU-a", 2 * kLabels}}, ProgressMode::kAlways);
  auto early = t.Sample(250'000, {kLabels / 8, 0});  // a device with nothing done yet has no line
  ASSERT_EQ(early.size(), 1u);
  EXPECT_EQ(early[0].rfind("fill progress: device 'host' 12.5%", 0), 0u) << early[0];
  auto last = t.Finish(500'000, {kLabels, 2 * kLabels});
  ASSERT_EQ(last.size(), 2u);
  EXPECT_NE(last[1].find("device 'GPU-a' 100.0% 2.00 GiB of 2.00 GiB (2147483648/2147483648 bytes), 4.29 GB/s"),
            std::string::npos)
      << last[1];
}

TEST(FillProgress, NeverLogsNothing) {
  FillProgressTracker t({{"host", kLabels}}, ProgressMode::kNever);
  EXPECT_TRUE(t.Sample(60'000'000, {kLabels / 2}).empty());
  EXPECT_TRUE(t.Finish(90'000'000, {kLabels}).empty());
}

// Collects the glog lines logged while it lives.
class LineSink : public google::LogSink {
 public:
  LineSink() { google::AddLogSink(this); }
  ~LineSink() override { google::RemoveLogSink(this); }
  void send(google::LogSeverity, const char*, const char*, int, const struct ::tm*, const char* message,
            size_t message_len) override {
    std::lock_guard<std::mutex> lock(mu_);
    lines_.emplace_back(message, message_len);
  }
  std::vector<std::string> Lines() {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

std::vector<std::unique_ptr<DeviceSlot>> OneHostSlot(uint64_t labels_done) {
  MatchedDevice plan;
  plan.selector = "host";
  plan.label_count = kLabels;
  plan.label_bytes = kLabels * 32;
  std::vector<std::unique_ptr<DeviceSlot>> slots;
  slots.push_back(std::make_unique<DeviceSlot>(plan));
  slots[0]->labels_filled = labels_done;
  return slots;
}

// A fill that failed or was cancelled ends with its error, not with a progress line after it (the
// agent's log showed "fill progress: ... 11.7% ..., eta 25 s" after "labeling cancelled").
TEST(FillProgressLogger, ALastLineOnlyWhenTheFillEndedWell) {
  auto filled = OneHostSlot(kLabels);
  auto partial = OneHostSlot(kLabels / 8);
  LineSink sink;
  { FillProgressLogger logger("s1", filled, ProgressMode::kAlways); }
  { FillProgressLogger logger("s2", partial, ProgressMode::kAlways); }  // what stopping at a failure logged
  {
    FillProgressLogger logger("s3", partial, ProgressMode::kAlways);
    logger.StopWithoutLastLines();
  }
  std::vector<std::string> s1, s2, s3;
  for (const std::string& line : sink.Lines()) {
    if (line.rfind("s1: ", 0) == 0) s1.push_back(line);
    if (line.rfind("s2: ", 0) == 0) s2.push_back(line);
    if (line.rfind("s3: ", 0) == 0) s3.push_back(line);
  }
  ASSERT_EQ(s1.size(), 1u);
  EXPECT_NE(s1[0].find("100.0%"), std::string::npos) << s1[0];
  EXPECT_NE(s1[0].find("done in"), std::string::npos) << s1[0];
  ASSERT_EQ(s2.size(), 1u);
  EXPECT_NE(s2[0].find("12.5%"), std::string::npos) << s2[0];
  EXPECT_TRUE(s3.empty()) << s3[0];
}

}  // namespace
}  // namespace wipeproof
