// The agent's round path (agent_core.h AnswerRound, "the cheap path"): a round over many devices
// starts every device's lookup before it waits for any, so it is answered in about one device's
// lookup time, not one per device; the transcript still covers every round when its hash runs
// after the answer (HashAnsweredRound, or at the latest the next round or Finish).
#include <capnp/message.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kernels/gpu/emulated_runtime.h"
#include "proto/transcript.h"
#include "prover/agent/agent_core.h"
#include "prover/backends/gpu/gpu_backend.h"
#include "tests/prover/agent_test_util.h"

namespace wipeproof {
namespace {

constexpr ConnectionId kOwner = 1;
const PeerKeyId kAsChallenger = proto::KeyIdOf(agent_test::ChallengerKey().public_key);
constexpr uint32_t kM = 256;
constexpr uint64_t kLabelsPerDevice = 4096;  // 16 chunks of m = 256
constexpr int kGpus = 8;
// The injected lookup latency of each GPU. Looked up one device after another, a round takes at
// least kGpus * kLatencyUs (800 ms: the latencies are sleeps, they only add up); together,
// kLatencyUs and the copying (well under a millisecond). The bound asserted, below kGpus *
// kLatencyUs, so fails for any round that waited for its devices one by one, and leaves 700 ms for
// a loaded machine's scheduling. The order of the lookups' steps is asserted too, which no load
// changes.
constexpr uint64_t kLatencyUs = 100'000;
constexpr uint64_t kOneByOneUs = kGpus * kLatencyUs;

using Devices = agent_test::RoundDevices;

// Builds round `index` over `devices` and answers it on `core` into `round`.
Status Answer(AgentCore& core, agent_test::Round& round, const proto::Bytes& session_id, uint32_t index,
              const Devices& devices) {
  auto request = round.Build(session_id, index, devices);
  return core.AnswerRound(kOwner, request.asReader(), round.response.initRoot<proto::RoundAnswer>());
}

// An order over `selectors` in that order, kLabelsPerDevice labels each, consecutive ranges.
agent_test::OrderSpec NineDeviceOrder(const std::vector<std::string>& selectors) {
  agent_test::OrderSpec spec;
  spec.chunk_labels = kM;
  spec.devices.clear();
  for (size_t i = 0; i < selectors.size(); ++i) spec.devices.push_back({selectors[i], i * kLabelsPerDevice, kLabelsPerDevice, 2});
  return spec;
}

// Two labels of every device: its first and its last.
Devices TwoLabelsOfEach(size_t devices) {
  Devices out;
  for (size_t d = 0; d < devices; ++d) {
    out.push_back({static_cast<uint16_t>(d), {d * kLabelsPerDevice, d * kLabelsPerDevice + kLabelsPerDevice - 1}});
  }
  return out;
}

// Every label of the answer is the reference labeler's.
void ExpectRightLabels(proto::RoundAnswer::Reader answer, const Devices& asked) {
  const std::vector<uint8_t> expected = agent_test::ExpectedLabels(kM, 0, asked.size() * kLabelsPerDevice);
  auto labels = answer.getLabels();
  size_t at = 0;
  for (const auto& [device, indices] : asked) {
    for (uint64_t index : indices) {
      ASSERT_LT((at + 1) * 32, labels.size() + 1);
      EXPECT_EQ(0, std::memcmp(labels.begin() + 32 * at, expected.data() + 32 * index, 32))
          << "device " << device << " label " << index;
      ++at;
    }
  }
  EXPECT_EQ(at * 32, labels.size());
}

int64_t ElapsedUs(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - since).count();
}

// Eight fake GPUs, each lookup taking kLatencyUs after its start, and host memory: every lookup
// is started before the first is waited for, and the round takes about one latency.
TEST(AgentRoundPathTest, NineDevicesAreLookedUpTogether) {
  std::mutex log_mu;
  std::vector<std::string> log;
  BackendSet backends;
  std::vector<std::string> selectors;
  for (int g = 0; g < kGpus; ++g) {
    agent_test::FakeDeviceOptions gpu;
    gpu.id = "GPU-fake-" + std::to_string(g);
    gpu.total_bytes = gpu.available_bytes = 4 * kMiB;
    gpu.lookup_delay_us = kLatencyUs;
    gpu.on_lookup = [&log_mu, &log](const std::string& event) {
      std::lock_guard<std::mutex> lock(log_mu);
      log.push_back(event);
    };
    selectors.push_back(gpu.id);
    backends.backends.push_back(agent_test::MakeFakeDeviceBackend(gpu));
  }
  backends.backends.push_back(agent_test::MakeCountingHostBackend(64 * kMiB));
  selectors.push_back("host");
  AgentCore core(agent_test::TestConfig(), std::move(backends), SystemClock());

  const agent_test::OrderSpec spec = NineDeviceOrder(selectors);
  const proto::SignedEnvelope order = agent_test::SignedOrder(spec, SystemClock());
  auto report = core.StartSession(order, kOwner, kAsChallenger);
  ASSERT_TRUE(report.ok()) << report.status().ToString();

  const Devices asked = TwoLabelsOfEach(selectors.size());
  agent_test::Round round;
  const auto t0 = std::chrono::steady_clock::now();
  Status answered = Answer(core, round, spec.session_id, 0, asked);
  const int64_t elapsed_us = ElapsedUs(t0);
  ASSERT_TRUE(answered.ok()) << answered.ToString();
  ExpectRightLabels(round.answer().asReader(), asked);

  // Every GPU's lookup started before any was waited for.
  ASSERT_EQ(log.size(), 2u * kGpus);
  for (int k = 0; k < kGpus; ++k) EXPECT_EQ(log[k].rfind("start ", 0), 0u) << "event " << k << ": " << log[k];
  for (int k = kGpus; k < 2 * kGpus; ++k) EXPECT_EQ(log[k].rfind("finish ", 0), 0u) << "event " << k << ": " << log[k];
  // About one latency: never less (each lookup takes it), far less than one per device.
  EXPECT_GE(elapsed_us, static_cast<int64_t>(kLatencyUs));
  EXPECT_LT(elapsed_us, static_cast<int64_t>(kOneByOneUs)) << "the devices were looked up one after another";
  EXPECT_GE(round.answer().asReader().getAgentMicros(), kLatencyUs);
  EXPECT_LT(round.answer().asReader().getAgentMicros(), kOneByOneUs);
  ASSERT_TRUE(core.Finish(kOwner, agent_test::SignedVerdict(order, true)).ok());
}

// The same through the real GPU backend (DeviceRegion::StartLookup and FinishLookup) on eight
// emulated devices whose lookups complete kLatencyUs after their launch.
TEST(AgentRoundPathTest, EightEmulatedGpusAndHostAnswerInAboutOneLookupLatency) {
  gpu::EmulatedGpuConfig emulated;
  emulated.devices = kGpus;
  emulated.total_bytes = 16 * kMiB;
  emulated.runtime_overhead_bytes = kMiB;
  emulated.multiprocessors = 2;
  emulated.lookup_latency_us = kLatencyUs;
  GpuBackendConfig small;
  small.tuning.side_scratch_bytes = kMiB;
  auto owned_runtime = std::make_unique<gpu::EmulatedRuntime>(emulated);
  const gpu::EmulatedRuntime* runtime = owned_runtime.get();  // the backend owns it
  auto gpu = StartGpuBackend(DeviceKind::kCuda, std::move(owned_runtime), small);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  BackendSet backends;
  backends.backends.push_back(std::move(gpu).value());
  backends.backends.push_back(agent_test::MakeCountingHostBackend(64 * kMiB));
  AgentCore core(agent_test::TestConfig(), std::move(backends), SystemClock());
  std::vector<std::string> selectors;
  for (const DeviceInfo& d : core.Describe().devices) selectors.push_back(d.id);
  ASSERT_EQ(selectors.size(), size_t{kGpus} + 1);

  const agent_test::OrderSpec spec = NineDeviceOrder(selectors);
  const proto::SignedEnvelope order = agent_test::SignedOrder(spec, SystemClock());
  auto report = core.StartSession(order, kOwner, kAsChallenger);
  ASSERT_TRUE(report.ok()) << report.status().ToString();

  const Devices asked = TwoLabelsOfEach(selectors.size());
  for (uint32_t r = 0; r < 2; ++r) {
    agent_test::Round round;
    const auto t0 = std::chrono::steady_clock::now();
    Status answered = Answer(core, round, spec.session_id, r, asked);
    const int64_t elapsed_us = ElapsedUs(t0);
    ASSERT_TRUE(answered.ok()) << answered.ToString();
    ExpectRightLabels(round.answer().asReader(), asked);
    EXPECT_GE(elapsed_us, static_cast<int64_t>(kLatencyUs)) << "round " << r;
    EXPECT_LT(elapsed_us, static_cast<int64_t>(kOneByOneUs)) << "round " << r << ": looked up one after another";
  }
  EXPECT_EQ(runtime->max_lookups_in_flight(), kGpus) << "not every GPU's lookup was in flight at once";
  ASSERT_TRUE(core.Finish(kOwner, agent_test::SignedVerdict(order, true)).ok());
}

// A device whose lookup fails fails the round naming it, and ends the session; the lookups
// already started on the other devices are waited for first (their kernels write into the answer).
TEST(AgentRoundPathTest, ADeviceWhoseLookupFailsEndsTheSessionAfterTheOthersFinished) {
  std::mutex log_mu;
  std::vector<std::string> log;
  BackendSet backends;
  std::vector<std::string> selectors;
  for (int g = 0; g < 2; ++g) {
    agent_test::FakeDeviceOptions gpu;
    gpu.id = "GPU-fake-" + std::to_string(g);
    gpu.total_bytes = gpu.available_bytes = 4 * kMiB;
    gpu.lookup_delay_us = 1000;
    if (g == 1) gpu.lookup_error = InternalError("uncorrectable ECC error (injected)");
    gpu.on_lookup = [&log_mu, &log](const std::string& event) {
      std::lock_guard<std::mutex> lock(log_mu);
      log.push_back(event);
    };
    selectors.push_back(gpu.id);
    backends.backends.push_back(agent_test::MakeFakeDeviceBackend(gpu));
  }
  AgentCore core(agent_test::TestConfig(), std::move(backends), SystemClock());
  const agent_test::OrderSpec spec = NineDeviceOrder(selectors);
  ASSERT_TRUE(core.StartSession(agent_test::SignedOrder(spec, SystemClock()), kOwner, kAsChallenger).ok());
  agent_test::Round round;
  Status answered = Answer(core, round, spec.session_id, 0, TwoLabelsOfEach(2));
  EXPECT_EQ(answered.code(), StatusCode::kInternal) << answered.ToString();
  EXPECT_NE(answered.message().find("device 'GPU-fake-1'"), std::string::npos) << answered.ToString();
  EXPECT_NE(answered.message().find("session ended"), std::string::npos) << answered.ToString();
  EXPECT_EQ(log, (std::vector<std::string>{"start GPU-fake-0", "start GPU-fake-1", "finish GPU-fake-0"}));
  EXPECT_TRUE(core.WaitUntilIdle(20'000'000));
  EXPECT_NE(core.GetStatus().last_error.find("GPU-fake-1"), std::string::npos);
}

// The transcript the agent signs covers every answered round, whether HashAnsweredRound ran after
// each answer (as the RPC layer does) or not at all (the next round and Finish add it): both give
// the digest a challenger computes from the same messages.
TEST(AgentRoundPathTest, TheTranscriptCoversEveryRoundWhenItsHashIsDeferred) {
  for (bool hash_after_each : {true, false}) {
    SCOPED_TRACE(hash_after_each ? "HashAnsweredRound after each answer" : "never called");
    FakeClock clock;
    AgentCore core(agent_test::TestConfig(), agent_test::HostBackends(), clock);
    agent_test::OrderSpec spec;
    const proto::SignedEnvelope order = agent_test::SignedOrder(spec, clock);
    auto report = core.StartSession(order, kOwner, kAsChallenger);
    ASSERT_TRUE(report.ok()) << report.status().ToString();

    proto::TranscriptHasher challenger;
    ASSERT_TRUE(challenger.AddOrder(proto::AsView(order.payload)).ok());
    ASSERT_TRUE(challenger.AddReport(proto::AsView(report->payload)).ok());
    StatusOr<proto::SignedEnvelope> notice = InternalError("never called");
    core.AwaitDeviceFilled(kOwner, proto::AsView(spec.session_id), 0,
                           [&notice](StatusOr<proto::SignedEnvelope> n) { notice = std::move(n); });
    ASSERT_TRUE(notice.ok()) << notice.status().ToString();
    ASSERT_TRUE(challenger.AddNotice(0, proto::AsView(notice->payload)).ok());
    for (uint32_t r = 0; r < 3; ++r) {
      agent_test::Round round;
      ASSERT_TRUE(Answer(core, round, spec.session_id, r, {{0, {r, 1000 + r}}}).ok());
      if (hash_after_each) core.HashAnsweredRound();
      ASSERT_TRUE(challenger.AddRound(round.request.getRoot<proto::ChallengeRound>().asReader(), round.answer().asReader()).ok());
    }
    ASSERT_EQ(core.GetStatus().rounds_answered, 3u);
    auto transcript = core.Finish(kOwner, agent_test::SignedVerdict(order, true));
    ASSERT_TRUE(transcript.ok()) << transcript.status().ToString();
    auto parsed = proto::VerifyAndParse<proto::TranscriptDigest>(*transcript, agent_test::NodeKey().public_key);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(parsed->root().getRoundCount(), 3u);
    auto digest = challenger.Finish();
    ASSERT_TRUE(digest.ok());
    EXPECT_TRUE(parsed->root().getDigest() == proto::AsView(*digest));
  }
}

}  // namespace
}  // namespace wipeproof
