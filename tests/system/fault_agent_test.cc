// Faults between a real agent and a real challenger (issue #6), in process over loopback TCP: the
// agent (AgentCore + AgentRpcServer) on its own thread and event loop with fault-injecting devices
// or a skewed clock, the challenger's RunTcpSession on the test thread, a real SQLite ledger.
//   - a device that fails to allocate, or fails mid-fill after writing labels: the session fails
//     cleanly, the challenger's verdict names the device, every device's memory is released, and
//     the agent accepts the next order;
//   - an agent clock beyond the allowed skew (behind or ahead): the order is refused naming the
//     skew, nothing is held, and orders pass again once the clock agrees;
//   - a ledger with no room: the challenger refuses the session before any order reaches the agent,
//     and every record written before is intact and verifies;
//   - frames announcing a huge segment or segment table: refused on their header and counted;
//   - peers without the challenger's certificate connecting over and over during an honest session
//     (raw frames announcing 32 MiB, certificate-less TLS clients): no frame of theirs is read, none
//     gets more than the handshake byte limit read, and every round still meets its deadline.
// The process-level faults (kill -9 of either side, slow-loris and oversized frames against the
// real binary) are in fault_process_test.sh.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <kj/async-io.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "challenger/fleet/plan_builder.h"
#include "challenger/fleet/wave_run.h"
#include "challenger/ledger/ledger.h"
#include "challenger/ledger/ledger_record_sink.h"
#include "challenger/session/session_plan.h"
#include "proto/label_wire.h"
#include "prover/agent/agent_core.h"
#include "prover/agent/agent_rpc_server.h"
#include "tests/prover/agent_test_util.h"
#include "tests/support/challenger_fixtures.h"

namespace wipeproof {
namespace {

using proto::FailureReason;

constexpr char kGpu[] = "GPU-fault-0";
constexpr uint32_t kM = 64;                                      // labels per chunk
constexpr uint64_t kHostBytes = uint64_t{64} * kM * 32;          // 128 KiB: 64 chunks
constexpr uint64_t kGpuBytes = uint64_t{96} * kM * 32;           // 192 KiB: 96 chunks
constexpr uint64_t kGpuLabels = kGpuBytes / proto::kLabelBytes;  // 6144

// What the faulty GPU does and saw. Set before a session; read after it.
struct DeviceFaults {
  std::atomic<bool> fail_acquire{false};
  std::atomic<uint64_t> fail_fill_after_labels{0};  // 0: the fill succeeds
  std::atomic<uint64_t> live_bytes_at_fault{0};     // agent_test::LiveBytes() when the fill fault fired
};

// Fills the first `fail_fill_after_labels` labels for real, reports them as progress, then fails
// like a device error (an uncorrectable ECC error, a lost device).
class FaultyMemory final : public DeviceMemory {
 public:
  FaultyMemory(std::unique_ptr<DeviceMemory> inner, DeviceFaults* faults) : inner_(std::move(inner)), faults_(faults) {}
  const DeviceInfo& device() const override { return inner_->device(); }
  uint64_t bytes_held() const override { return inner_->bytes_held(); }
  Status Fill(const RegionSpec& plan, const FillOptions& options) override {
    const uint64_t after = faults_->fail_fill_after_labels.load();
    if (after == 0 || after >= plan.count) return inner_->Fill(plan, options);
    RegionSpec part = plan;
    part.count = after;
    WP_RETURN_IF_ERROR(inner_->Fill(part, options));
    if (options.progress) options.progress(after, plan.count);
    faults_->live_bytes_at_fault.store(agent_test::LiveBytes());
    return InternalError("uncorrectable ECC error after " + std::to_string(after) + " labels (injected)");
  }
  Status Lookup(const uint64_t* indices, size_t n, uint8_t* out) const override {
    return inner_->Lookup(indices, n, out);
  }
  void Release() override { inner_->Release(); }

 private:
  std::unique_ptr<DeviceMemory> inner_;
  DeviceFaults* faults_;
};

class FaultyBackend final : public Backend {
 public:
  FaultyBackend(std::unique_ptr<Backend> inner, DeviceFaults* faults) : inner_(std::move(inner)), faults_(faults) {}
  DeviceKind kind() const override { return inner_->kind(); }
  std::vector<DeviceInfo> Devices() const override { return inner_->Devices(); }
  StatusOr<std::unique_ptr<DeviceMemory>> Acquire(const std::string& id, const AcquireOptions& options) override {
    if (faults_->fail_acquire.load()) {
      return InternalError("cudaMalloc: an illegal memory access was encountered (injected)");
    }
    WP_ASSIGN_OR_RETURN(std::unique_ptr<DeviceMemory> memory, inner_->Acquire(id, options));
    return std::unique_ptr<DeviceMemory>(new FaultyMemory(std::move(memory), faults_));
  }

 private:
  std::unique_ptr<Backend> inner_;
  DeviceFaults* faults_;
};

// The system clock moved by an offset that tests change (a node whose clock is wrong, then fixed).
class SkewedClock final : public Clock {
 public:
  int64_t MonotonicMicros() const override { return SystemClock().MonotonicMicros(); }
  int64_t UnixMicros() const override { return SystemClock().UnixMicros() + offset_us.load(); }
  std::atomic<int64_t> offset_us{0};
};

// An agent listening on 127.0.0.1 (a free port), served on its own thread and event loop until
// destroyed. The core is thread-safe, so tests read its status from their own thread.
class TcpAgent {
 public:
  // `handshake_pace_us`: the server's pacing of handshakes while a session runs (agent_rpc_server.h).
  TcpAgent(BackendSet backends, AgentConfig config, const Clock& clock,
           int64_t handshake_pace_us = kDefaultHandshakePaceUs)
      : core_(std::move(config), std::move(backends), clock) {
    std::promise<unsigned> bound;
    std::future<unsigned> port = bound.get_future();
    thread_ = std::thread([this, &bound, handshake_pace_us] {
      kj::AsyncIoContext io = kj::setupAsyncIo();
      AgentRpcServerOptions options;
      options.timeout_check_interval_us = 10'000;
      options.tls = agent_test::AgentTls();
      options.handshake_pace_us = handshake_pace_us;
      AgentRpcServer server(core_, *io.provider, options);
      try {
        bound.set_value(server.Listen("127.0.0.1:0").wait(io.waitScope));
      } catch (const kj::Exception& e) {
        ADD_FAILURE() << "agent cannot listen: " << e.getDescription().cStr();
        bound.set_value(0);
        return;
      }
      while (!stop_.load()) {
        io.provider->getTimer().afterDelay(5 * kj::MILLISECONDS).wait(io.waitScope);
        handshakes_failed_.store(server.handshakes_failed());
        messages_refused_.store(server.messages_refused());
        max_handshake_bytes_read_.store(server.max_handshake_bytes_read());
        round_channels_opened_.store(server.round_channels_opened());
        round_channels_bound_.store(server.round_channels_bound());
        round_channel_rounds_.store(server.round_channel_rounds());
      }
    });
    port_ = port.get();
  }
  ~TcpAgent() {
    stop_.store(true);
    thread_.join();
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  unsigned port() const { return port_; }
  AgentCore& core() { return core_; }
  // The server's counters (agent_rpc_server.h), as of at most 5 ms ago.
  uint64_t handshakes_failed() const { return handshakes_failed_.load(); }
  uint64_t messages_refused() const { return messages_refused_.load(); }
  uint64_t max_handshake_bytes_read() const { return max_handshake_bytes_read_.load(); }
  uint64_t round_channels_opened() const { return round_channels_opened_.load(); }
  uint64_t round_channels_bound() const { return round_channels_bound_.load(); }
  uint64_t round_channel_rounds() const { return round_channel_rounds_.load(); }

 private:
  AgentCore core_;
  std::atomic<uint64_t> handshakes_failed_{0}, messages_refused_{0}, max_handshake_bytes_read_{0};
  std::atomic<uint64_t> round_channels_opened_{0}, round_channels_bound_{0}, round_channel_rounds_{0};
  std::atomic<bool> stop_{false};
  unsigned port_ = 0;
  std::thread thread_;
};

Inventory NodeInventory(const std::string& address) {
  Inventory inventory;
  InventoryNode node;
  node.name = agent_test::kNodeName;
  node.address = address;
  node.public_key = agent_test::NodeKey().public_key;
  node.certificate = agent_test::CertificateOf(agent_test::NodeKey());
  node.devices.push_back({"host", "host-dram", kHostBytes});
  node.devices.push_back({kGpu, "fault-gpu", kGpuBytes});
  inventory.nodes = {node};
  inventory.reserve_bytes_by_model = {{"host-dram", 0}, {"fault-gpu", 0}};
  return inventory;
}

Profile FaultProfile() {
  Profile p = DefaultProfile();
  p.name = "fault-test";
  p.chunk_labels = kM;
  p.rounds = 4;
  p.labels_per_round = 16;
  p.round_deadline_us = 2'000'000;  // loopback on a shared machine: generous
  p.fill_deadline_us = 60'000'000;
  return p;
}

class FaultTest : public ::testing::Test {
 protected:
  void SetUp() override { base_live_ = agent_test::LiveBytes(); }
  void TearDown() override {
    agent_.reset();
    EXPECT_EQ(agent_test::LiveBytes(), base_live_) << "device memory still held after the agent stopped";
  }

  // Host memory (64 MiB available; its fill held at `host_gate` when given) and the faulty GPU (64 MiB).
  void StartAgent(const Clock& clock, AgentConfig config = agent_test::TestConfig(),
                  const agent_test::FillGate* host_gate = nullptr,
                  int64_t handshake_pace_us = kDefaultHandshakePaceUs) {
    BackendSet backends;
    agent_test::FakeDeviceOptions gpu;
    gpu.id = kGpu;
    backends.backends.push_back(std::make_unique<FaultyBackend>(agent_test::MakeFakeDeviceBackend(gpu), &faults_));
    backends.backends.push_back(agent_test::MakeCountingHostBackend(64 * kMiB, host_gate));
    agent_ = std::make_unique<TcpAgent>(std::move(backends), std::move(config), clock, handshake_pace_us);
  }

  // One session against the agent, challenger on the system clock; records go to `sink`.
  StatusOr<SessionOutcome> RunSession(RecordSink& sink, const Profile& profile = FaultProfile(),
                                      bool round_channel = true) {
    const Inventory inventory = NodeInventory(agent_->address());
    auto plan = BuildPlan(inventory, agent_test::kNodeName, profile, {}, SystemClock());
    if (!plan.ok()) return plan.status();
    TcpSessionOptions options;
    options.clock = &SystemClock();
    options.threads = 1;
    options.round_channel = round_channel;
    return RunTcpSession(*plan, SessionKeys{agent_test::AuthorityKey(), agent_test::ChallengerKey()}, sink, nullptr,
                         options);
  }
  StatusOr<SessionOutcome> RunSession() { return RunSession(sink_); }

  // The agent is idle and holds nothing (the fake devices count every byte they hold).
  void ExpectNothingHeld() {
    ASSERT_TRUE(agent_->core().WaitUntilIdle(10'000'000));
    const AgentStatusSnapshot status = agent_->core().GetStatus();
    EXPECT_EQ(status.phase, proto::AgentPhase::IDLE);
    EXPECT_EQ(status.bytes_acquired, 0u);
    EXPECT_EQ(agent_test::LiveBytes(), base_live_);
  }

  // After a fault, the same agent takes a new order and the session passes.
  void ExpectNextSessionPasses() {
    auto next = RunSession();
    ASSERT_TRUE(next.ok()) << next.status().ToString();
    EXPECT_TRUE(next->pass) << next->failure.Describe();
    EXPECT_GT(next->rounds.size(), FaultProfile().rounds);  // proof rounds, then holding rounds
    ExpectNothingHeld();
  }

  DeviceFaults faults_;
  // A node's clock set wrong by the test; declared before agent_ so that it outlives the agent,
  // whose timeout loop reads it until the agent is destroyed in TearDown.
  SkewedClock skewed_clock_;
  std::unique_ptr<TcpAgent> agent_;
  // Records kept in memory: these tests are about the agent, the ledger test uses a real one.
  testing::MemoryRecordSink sink_;
  uint64_t base_live_ = 0;
};

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Polls `done` every 5 ms for up to 10 s (the agent thread publishes its counters every 5 ms).
bool WaitFor(const std::function<bool()>& done) {
  for (int i = 0; i < 2000 && !done(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return done();
}

// The round channel between the real challenger and the real agent (docs/protocol.md "The round
// channel"): once it is open (here, while the host memory's fill is held), the session's rounds go
// over it and the session passes; rounds never wait for it (the first ones may go over RPC). With
// round_channel off, none is opened.
TEST_F(FaultTest, RoundsGoOverTheRoundChannelUnlessItIsOff) {
  agent_test::FillGate gate;
  StartAgent(SystemClock(), agent_test::TestConfig(), &gate);
  std::optional<StatusOr<SessionOutcome>> with_channel;
  std::thread session([&] { with_channel.emplace(RunSession(sink_)); });
  const bool bound = WaitFor([&] { return agent_->round_channels_bound() == 1; });
  gate.Open();
  session.join();
  ASSERT_TRUE(bound) << "the challenger's round channel was never bound to the session";
  ASSERT_TRUE(with_channel->ok()) << with_channel->status().ToString();
  EXPECT_TRUE((*with_channel)->pass) << (*with_channel)->failure.Describe();
  EXPECT_TRUE((*with_channel)->transcript.has_value());
  ExpectNothingHeld();
  ASSERT_TRUE(WaitFor([&] { return agent_->round_channel_rounds() > 0; })) << "no round went over the channel";
  EXPECT_LE(agent_->round_channel_rounds(), (*with_channel)->rounds.size());
  auto on_channel = [](const SessionOutcome& o) {
    return std::count_if(o.rounds.begin(), o.rounds.end(), [](const RoundRecord& r) { return r.on_channel; });
  };
  EXPECT_EQ(static_cast<uint64_t>(on_channel(**with_channel)), agent_->round_channel_rounds())
      << "the challenger's record of each round's transport agrees with the agent's count";
  // The signed verdict says it too, round by round (RoundTiming.roundChannel).
  auto signed_on_channel = [](const SessionOutcome& o) {
    auto verdict = proto::VerifyAndParse<proto::Verdict>(o.verdict, agent_test::ChallengerKey().public_key);
    EXPECT_TRUE(verdict.ok()) << verdict.status().ToString();
    if (!verdict.ok()) return -1L;
    auto rounds = verdict->root().getRounds();
    EXPECT_EQ(rounds.size(), o.rounds.size());
    long n = 0;
    for (size_t i = 0; i < rounds.size() && i < o.rounds.size(); ++i) {
      EXPECT_EQ(rounds[static_cast<unsigned>(i)].getRoundChannel(), o.rounds[i].on_channel) << "round " << i;
      n += rounds[static_cast<unsigned>(i)].getRoundChannel() ? 1 : 0;
    }
    return n;
  };
  EXPECT_EQ(signed_on_channel(**with_channel), static_cast<long>(agent_->round_channel_rounds()));

  auto over_rpc = RunSession(sink_, FaultProfile(), /*round_channel=*/false);
  ASSERT_TRUE(over_rpc.ok()) << over_rpc.status().ToString();
  EXPECT_TRUE(over_rpc->pass) << over_rpc->failure.Describe();
  EXPECT_EQ(on_channel(*over_rpc), 0);
  EXPECT_EQ(signed_on_channel(*over_rpc), 0);
  ExpectNothingHeld();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // counters published every 5 ms
  EXPECT_EQ(agent_->round_channels_opened(), 1u) << "no second channel";
}

// No round waits for the round channel: the node decides when its channel opens, and a wait it
// could stretch would be time between its fill report and the proof rounds. Here the agent paces
// handshakes 8 s apart while a session runs, so the channel cannot open within the session: the
// proof rounds still follow the report at once, over RPC.
// threat-model: T-EARLY-FILL
TEST_F(FaultTest, NoRoundWaitsForTheRoundChannel) {
  StartAgent(SystemClock(), agent_test::TestConfig(), nullptr, /*handshake_pace_us=*/8'000'000);
  auto outcome = RunSession(sink_);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_TRUE(outcome->pass) << outcome->failure.Describe();
  uint64_t first_after_report_us = UINT64_MAX;
  for (const RoundRecord& r : outcome->rounds) {
    if (r.sent_after_order_us >= outcome->fill_us)
      first_after_report_us = std::min(first_after_report_us, r.sent_after_order_us);
  }
  ASSERT_NE(first_after_report_us, UINT64_MAX) << "no round after the fill report";
  EXPECT_LT(first_after_report_us - outcome->fill_us, 1'000'000u) << "a round waited after the report";
  EXPECT_EQ(agent_->round_channel_rounds(), 0u);
  EXPECT_EQ(agent_->round_channels_opened(), 0u) << "the channel's handshake was meant to be held back";
}

// threat-model: T-DEVICE-ERROR
TEST_F(FaultTest, DeviceAllocationFailureFailsCleanlyNamingTheDevice) {
  StartAgent(SystemClock());
  faults_.fail_acquire.store(true);
  auto outcome = RunSession();
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  ASSERT_FALSE(outcome->pass);
  EXPECT_EQ(outcome->failure.reason, FailureReason::ORDER_REFUSED) << outcome->failure.Describe();
  EXPECT_TRUE(Contains(outcome->failure.text, std::string("INTERNAL: device '") + kGpu + "'")) << outcome->failure.text;
  EXPECT_TRUE(Contains(outcome->failure.text, "cudaMalloc: an illegal memory access")) << outcome->failure.text;
  EXPECT_FALSE(outcome->report.has_value());
  // The order and the failed verdict are on record.
  ASSERT_GE(sink_.records().size(), 3u);
  EXPECT_EQ(sink_.records().front().kind, proto::LedgerRecordKind::ORDER);
  ExpectNothingHeld();
  EXPECT_TRUE(Contains(agent_->core().GetStatus().last_error, std::string("device '") + kGpu + "'"))
      << agent_->core().GetStatus().last_error;

  faults_.fail_acquire.store(false);
  ExpectNextSessionPasses();
}

// threat-model: T-DEVICE-ERROR
TEST_F(FaultTest, DeviceErrorMidFillFailsCleanlyNamingTheDevice) {
  StartAgent(SystemClock());
  faults_.fail_fill_after_labels.store(kGpuLabels / 2);
  auto outcome = RunSession();
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  ASSERT_FALSE(outcome->pass);
  EXPECT_EQ(outcome->failure.reason, FailureReason::ORDER_REFUSED) << outcome->failure.Describe();
  EXPECT_TRUE(Contains(outcome->failure.text,
                       std::string("INTERNAL: device '") + kGpu + "': uncorrectable ECC error after 3072 labels"))
      << outcome->failure.text;
  // When the device failed, both devices held their memory (host 128 KiB, GPU 192 KiB); all of it
  // was released.
  EXPECT_GE(faults_.live_bytes_at_fault.load(), base_live_ + kHostBytes + kGpuBytes);
  ExpectNothingHeld();

  faults_.fail_fill_after_labels.store(0);
  ExpectNextSessionPasses();
}

// The agent allows 5 s of skew; its clock is 60 s behind the challenger's: the order looks issued
// in the future. Once the clock is right, orders pass.
// threat-model: T-CLOCK-SKEW
TEST_F(FaultTest, AgentClockBehindBeyondTheSkewRefusesTheOrder) {
  SkewedClock& clock = skewed_clock_;
  clock.offset_us.store(-60'000'000);
  AgentConfig config = agent_test::TestConfig();
  config.clock_skew_us = 5'000'000;
  StartAgent(clock, config);
  auto outcome = RunSession();
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  ASSERT_FALSE(outcome->pass);
  EXPECT_EQ(outcome->failure.reason, FailureReason::ORDER_REFUSED) << outcome->failure.Describe();
  EXPECT_TRUE(Contains(outcome->failure.text, "FAILED_PRECONDITION: order issued ")) << outcome->failure.text;
  EXPECT_TRUE(Contains(outcome->failure.text,
                       "in the future by the agent's clock, more than the allowed clock "
                       "skew of 5000000 us"))
      << outcome->failure.text;
  ExpectNothingHeld();

  clock.offset_us.store(-3'000'000);  // within the skew
  ExpectNextSessionPasses();
}

// The agent's clock is ahead by more than the order's lifetime plus the skew: the order has
// expired by the agent's clock.
// threat-model: T-CLOCK-SKEW
TEST_F(FaultTest, AgentClockAheadBeyondTheSkewRefusesTheOrderAsExpired) {
  SkewedClock& clock = skewed_clock_;
  clock.offset_us.store(static_cast<int64_t>(FaultProfile().order_ttl_us) + 60'000'000);
  AgentConfig config = agent_test::TestConfig();
  config.clock_skew_us = 5'000'000;
  StartAgent(clock, config);
  auto outcome = RunSession();
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  ASSERT_FALSE(outcome->pass);
  EXPECT_EQ(outcome->failure.reason, FailureReason::ORDER_REFUSED) << outcome->failure.Describe();
  EXPECT_TRUE(Contains(outcome->failure.text, "DEADLINE_EXCEEDED: order expired: expiresAtUnixUs "))
      << outcome->failure.text;
  EXPECT_TRUE(Contains(outcome->failure.text, "(allowed clock skew 5000000 us): check both clocks (NTP)"))
      << outcome->failure.text;
  ExpectNothingHeld();
  EXPECT_EQ(agent_->core().GetStatus().sessions_completed, 0u);
}

// A TCP connection to 127.0.0.1:`port` (blocking), or -1.
int ConnectTo(unsigned port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Third parties without the challenger's certificate keep connecting while an honest session runs:
// raw connections sending a Cap'n Proto frame header that announces 32 MiB and 64 KiB after it,
// and TLS 1.3 clients without a certificate that send the same header once their side of the
// handshake is done. None of it is read as a frame (capnp refuses nothing: it never sees a byte),
// the agent reads at most the handshake byte limit from any of them, and the session passes with
// every one of its 16 rounds within 250 ms.
// threat-model: T-HANDSHAKE-FLOOD
// threat-model: T-PREAUTH-FRAMES
TEST_F(FaultTest, UnauthenticatedPeersNeitherGetAFrameReadNorDelayAnHonestSession) {
  StartAgent(SystemClock());
  std::atomic<bool> stop{false};
  std::atomic<int> raw_peers{0}, tls_peers{0};
  std::thread attacker([&] {
    const uint32_t header[2] = {0, uint32_t{1} << 22};
    const std::vector<char> junk(64 * 1024, 'x');
    SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
    while (!stop.load()) {
      if (int fd = ConnectTo(agent_->port()); fd >= 0) {
        send(fd, header, sizeof(header), MSG_NOSIGNAL);
        send(fd, junk.data(), junk.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        close(fd);
        ++raw_peers;
      }
      if (int fd = ConnectTo(agent_->port()); fd >= 0) {
        SSL* ssl = SSL_new(ctx);
        SSL_set_fd(ssl, fd);
        if (SSL_connect(ssl) == 1) {
          SSL_write(ssl, header, sizeof(header));
          char byte;
          SSL_read(ssl, &byte, 1);  // the agent's alert: no certificate
          ++tls_peers;
        }
        ERR_clear_error();
        SSL_free(ssl);
        close(fd);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    SSL_CTX_free(ctx);
  });
  Profile profile = FaultProfile();
  profile.rounds = 16;
  profile.round_deadline_us = 250'000;
  auto outcome = RunSession(sink_, profile);
  stop.store(true);
  attacker.join();
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_TRUE(outcome->pass) << outcome->failure.Describe();
  ASSERT_GE(outcome->rounds.size(), 16u);  // proof rounds, then holding rounds until done
  for (const RoundRecord& r : outcome->rounds) EXPECT_LE(r.elapsed_us, profile.round_deadline_us);
  EXPECT_GT(raw_peers.load(), 0);
  EXPECT_GT(tls_peers.load(), 0);
  // The server's counters, a moment later: every peer failed its handshake, none was read as frames.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_GE(agent_->handshakes_failed(), 2u);
  EXPECT_EQ(agent_->messages_refused(), 0u);
  EXPECT_LE(agent_->max_handshake_bytes_read(), kMaxHandshakeBytes);
  ExpectNothingHeld();
}

std::string TempLedgerPath() {
  char path[] = "/tmp/wp-fault-ledger-XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  std::remove(path);
  return path;
}

void RemoveLedger(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
}

// Two sessions are recorded; then the ledger's disk is nearly full (a page limit one page above its
// size: room for an order, not for a session). The challenger refuses the next session before any
// order exists: the agent sees nothing, and the
// ledger still holds both sessions whole and verifies, also after reopening with room again.
// threat-model: T-LEDGER-FULL
TEST_F(FaultTest, FullLedgerRefusesNewSessionsAndKeepsEveryRecord) {
  StartAgent(SystemClock());
  const std::string path = TempLedgerPath();
  const proto::KeyPair challenger = agent_test::ChallengerKey();
  FakeClock ledger_clock;
  uint64_t recorded = 0;
  {
    auto ledger = Ledger::Open(path, challenger, ledger_clock);
    ASSERT_TRUE(ledger.ok()) << ledger.status().ToString();
    LedgerRecordSink sink(ledger->get());
    for (int i = 0; i < 2; ++i) {
      auto outcome = RunSession(sink);
      ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
      EXPECT_TRUE(outcome->pass) << outcome->failure.Describe();
      EXPECT_TRUE(outcome->ledger.ok()) << outcome->ledger.ToString();
      // order, a fill notice per device (2), report, round log, verdict, transcript, receipt
      EXPECT_EQ(outcome->ledger_sequences.size(), 8u);
      recorded += outcome->ledger_sequences.size();
    }
  }
  ASSERT_TRUE(agent_->core().WaitUntilIdle(10'000'000));
  const AgentStatusSnapshot before = agent_->core().GetStatus();
  EXPECT_EQ(before.sessions_completed, 2u);
  // Closed, the ledger is checkpointed into its file: one page left lets the order in, but not the
  // whole session.
  const uint64_t pages = std::filesystem::file_size(path) / 4096;
  ASSERT_GT(pages, 2u);
  {
    LedgerOptions full;
    full.max_page_count = static_cast<int64_t>(pages) + 1;
    auto ledger = Ledger::Open(path, challenger, ledger_clock, full);
    ASSERT_TRUE(ledger.ok()) << ledger.status().ToString();
    LedgerRecordSink sink(ledger->get());
    auto refused = RunSession(sink);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted) << refused.status().ToString();
    EXPECT_TRUE(Contains(refused.status().message(), "ledger disk full: refusing new sessions"))
        << refused.status().ToString();
    EXPECT_TRUE(Contains(refused.status().message(), "no session was started")) << refused.status().ToString();
    auto head = (*ledger)->Verify(challenger.public_key);
    ASSERT_TRUE(head.ok()) << head.status().ToString();
    EXPECT_EQ(head->entry_count, recorded);
  }
  // No order reached the agent: nothing refused, nothing run, nothing held.
  const AgentStatusSnapshot after = agent_->core().GetStatus();
  EXPECT_EQ(after.sessions_completed, before.sessions_completed);
  EXPECT_EQ(after.last_error, before.last_error);
  EXPECT_EQ(after.phase, proto::AgentPhase::IDLE);

  // Every session on record is whole: its order, verdict and receipt.
  auto reader = Ledger::OpenReadOnly(path);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  std::map<proto::Bytes, std::vector<int64_t>> kinds_by_session;
  ASSERT_TRUE((*reader)
                  ->ForEachRow(std::nullopt,
                               [&](const LedgerRow& row) {
                                 kinds_by_session[row.session_id].push_back(row.kind);
                                 return Status::Ok();
                               })
                  .ok());
  ASSERT_EQ(kinds_by_session.size(), 2u);
  for (const auto& [session, kinds] : kinds_by_session) {
    ASSERT_EQ(kinds.size(), 8u);
    EXPECT_EQ(kinds.front(), static_cast<int64_t>(proto::LedgerRecordKind::ORDER));
    EXPECT_EQ(kinds.back(), static_cast<int64_t>(proto::LedgerRecordKind::RECEIPT));
  }
  reader->reset();

  // With room again the chain goes on where it stopped.
  {
    auto ledger = Ledger::Open(path, challenger, ledger_clock);
    ASSERT_TRUE(ledger.ok()) << ledger.status().ToString();
    LedgerRecordSink sink(ledger->get());
    auto outcome = RunSession(sink);
    ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
    EXPECT_TRUE(outcome->pass) << outcome->failure.Describe();
    ASSERT_FALSE(outcome->ledger_sequences.empty());
    EXPECT_EQ(outcome->ledger_sequences.front(), recorded);
    auto head = (*ledger)->Verify(challenger.public_key);
    ASSERT_TRUE(head.ok()) << head.status().ToString();
    EXPECT_EQ(head->entry_count, recorded + 8);
  }
  RemoveLedger(path);
}

// Frames that announce a 1 GiB segment, or a table of 65536 segments, are refused as soon as their
// header arrives: each connection is closed (the peer reads EOF after capnp's abort message) and
// counted; nothing else is read or allocated.
// threat-model: T-SLOW-LORIS
TEST(FaultFrameTest, OversizedFramesAreRefusedOnTheirHeaderAndCounted) {
  kj::AsyncIoContext io = kj::setupAsyncIo();
  FakeClock clock;
  AgentCore core(agent_test::TestConfig(), agent_test::HostBackends(), clock);
  auto server = kj::heap<AgentRpcServer>(core, *io.provider);
  const uint32_t huge_segment[2] = {0, uint32_t{1} << 27};  // one segment of 2^27 words
  const uint32_t huge_table[2] = {0xFFFF, 1};               // 65536 segments
  std::vector<kj::Own<kj::AsyncIoStream>> peers;
  for (const uint32_t* header : {huge_segment, huge_table}) {
    auto pipe = io.provider->newTwoWayPipe();
    server->Accept(kj::mv(pipe.ends[0]), agent_test::ChallengerKeyId());  // even the challenger
    pipe.ends[1]->write(header, 2 * sizeof(uint32_t)).wait(io.waitScope);
    peers.push_back(kj::mv(pipe.ends[1]));
  }
  for (auto& peer : peers) {
    char buffer[4096];
    size_t total = 0;
    for (size_t n; (n = peer->tryRead(buffer, 1, sizeof(buffer)).wait(io.waitScope)) > 0;) total += n;
    EXPECT_LT(total, sizeof(buffer));  // at most the abort message came back
  }
  EXPECT_EQ(server->messages_refused(), 2u);
  for (int i = 0; i < 1000 && server->connections() > 0; ++i) {
    io.provider->getTimer().afterDelay(1 * kj::MILLISECONDS).wait(io.waitScope);
  }
  EXPECT_EQ(server->connections(), 0u);
  EXPECT_EQ(core.GetStatus().phase, proto::AgentPhase::IDLE);
}

}  // namespace
}  // namespace wipeproof
