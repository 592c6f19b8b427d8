#include "prover/bench/round_bench.h"

#include <capnp/message.h>
#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sodium.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <utility>

#include "common/numbers.h"
#include "kernels/region_labeler.h"
#include "proto/codec.h"
#include "proto/crypto.h"
#include "proto/round_channel_client.h"
#include "proto/signing.h"
#include "proto/tls_certificate.h"
#include "proto/tls_channel.h"
#include "prover/agent/agent_core.h"
#include "prover/agent/agent_rpc_server.h"
#include "prover/agent/round_polling.h"
#include "prover/bench/instruction_counter.h"
#include "prover/bench/round_floor.h"
#include "prover/bench/round_floor_blocking.h"

namespace wipeproof {
namespace {

constexpr char kNodeName[] = "bench-node";

// The keys of the run, made for it: the authority delegates to the challenger, which signs the order.
struct BenchKeys {
  proto::KeyPair authority = proto::GenerateKeyPair();
  proto::KeyPair challenger = proto::GenerateKeyPair();
  proto::KeyPair node = proto::GenerateKeyPair();
  uint8_t seed[kSeedBytes];
  BenchKeys() { randombytes_buf(seed, sizeof seed); }
};

StatusOr<proto::Bytes> Delegation(const BenchKeys& keys) {
  capnp::MallocMessageBuilder m;
  auto d = m.initRoot<proto::Delegation>();
  d.setChallengerPublicKey(proto::AsView(keys.challenger.public_key));
  d.setNotBeforeUnixUs(0);
  d.setNotAfterUnixUs(INT64_MAX);
  d.setName("bench --what=rounds");
  d.setAllowUnsignedProfiles(true);
  WP_ASSIGN_OR_RETURN(proto::SignedEnvelope envelope, proto::SignMessage(d.asReader(), keys.authority));
  return proto::EncodeEnvelope(envelope);
}

StatusOr<proto::SignedEnvelope> Order(const BenchKeys& keys, const RoundBenchOptions& options,
                                      const proto::Bytes& session_id) {
  WP_ASSIGN_OR_RETURN(proto::Bytes delegation, Delegation(keys));
  capnp::MallocMessageBuilder m;
  auto order = m.initRoot<proto::WipeOrder>();
  order.setProtocolVersion(proto::PROTOCOL_VERSION);
  order.setSessionId(proto::AsView(session_id));
  const int64_t now = SystemClock().UnixMicros();
  order.setIssuedAtUnixUs(now);
  order.setExpiresAtUnixUs(now + 600'000'000);
  order.setNodeName(kNodeName);
  order.setNodeKeyId(proto::AsView(proto::KeyIdOf(keys.node.public_key)));
  order.setSeed(proto::ByteView(keys.seed, kSeedBytes));
  order.setFormat(proto::LabelFormat::POSEDB_BLAKE3_C1);
  order.setChunkLabels(options.chunk_labels);
  auto device = order.initDevices(1)[0];
  device.setSelector("host");
  device.setFirstLabel(0);
  device.setLabelCount(options.session_labels);
  device.setLabelsPerRound(options.labels_per_round);
  device.setCapacityBytes(options.session_labels * 32);
  device.setFillDeadlineUs(600'000'000);
  order.setFillDeadlineUs(600'000'000);
  order.setChallengerKeyId(proto::AsView(proto::KeyIdOf(keys.challenger.public_key)));
  order.setRoundDeadlineUs(1'000'000);
  order.setHostMemoryInPlan(true);
  order.setDelegation(proto::AsView(delegation));
  return proto::SignMessage(order.asReader(), keys.challenger);
}

// A passing verdict on `order`, signed by the run's challenger key (the bench's session ends with
// its finish, as a real one does).
StatusOr<proto::SignedEnvelope> Verdict(const BenchKeys& keys, const proto::SignedEnvelope& order,
                                        const proto::Bytes& session_id) {
  capnp::MallocMessageBuilder m;
  auto verdict = m.initRoot<proto::Verdict>();
  verdict.setSessionId(proto::AsView(session_id));
  const proto::Digest order_digest = proto::Blake2b256(proto::AsView(order.payload));
  verdict.setOrderDigest(proto::AsView(order_digest));
  verdict.setNodeName(kNodeName);
  verdict.setPass(true);
  verdict.initFailure().setReason(proto::FailureReason::NONE);
  return proto::SignMessage(verdict.asReader(), keys.challenger);
}

// A challenger-side RPC client over `stream`.
struct RpcClient {
  explicit RpcClient(kj::AsyncIoStream& stream)
      : network(stream, capnp::rpc::twoparty::Side::CLIENT, proto::RpcReaderOptions()),
        rpc(capnp::makeRpcClient(network)) {
    capnp::MallocMessageBuilder vat;
    vat.initRoot<capnp::rpc::twoparty::VatId>().setSide(capnp::rpc::twoparty::Side::SERVER);
    agent = rpc.bootstrap(vat.getRoot<capnp::rpc::twoparty::VatId>()).castAs<proto::ProverAgent>();
  }
  capnp::TwoPartyVatNetwork network;
  capnp::RpcSystem<capnp::rpc::twoparty::VatId> rpc;
  proto::ProverAgent::Client agent = nullptr;
};

// Everything one run shares: keys, the agent core, the expected labels, the stages the core reports.
class RoundBench {
 public:
  explicit RoundBench(const RoundBenchOptions& options) : options_(options) {}

  Status Start() {
    AgentConfig config;
    config.authority_key = keys_.authority.public_key;
    config.challenger_key = keys_.challenger.public_key;
    config.node_key = keys_.node;
    config.node_name = kNodeName;
    config.fill_progress = ProgressMode::kNever;
    config.transcript_thread = options_.transcript_thread;
    config.round_stages = [this](const RoundStages& s) {
      std::lock_guard<std::mutex> lock(stages_mu_);
      stages_.push_back(s);
    };
    BackendConfig backends;
    backends.EnableOnly(DeviceKind::kHost);
    core_ = std::make_unique<AgentCore>(std::move(config), CreateBackends(backends), SystemClock());
    // The reference labels, once for every path.
    RegionSpec region;
    region.format = LabelFormat::kC1;
    std::memcpy(region.seed, keys_.seed, kSeedBytes);
    region.chunk_labels = options_.chunk_labels;
    region.first = 0;
    region.count = options_.session_labels;
    expected_.resize(options_.session_labels * 32);
    return LabelRegion(region, expected_.data());
  }

  AgentCore& core() { return *core_; }
  const BenchKeys& keys() const { return keys_; }

  // One path's rounds through `agent` (an RPC client on `io`'s event loop), or, when
  // `channel_stream` is given, through a round channel on it (the session started, and the channel's
  // token asked, through `agent`). `agent_counter` counts the agent thread's instructions (null: the
  // agent runs on this thread).
  StatusOr<RoundPathResult> Measure(kj::AsyncIoContext& io, proto::ProverAgent::Client& agent, const std::string& path,
                                    InstructionCounter* agent_counter, const clockid_t* agent_cpu_clock,
                                    kj::AsyncIoStream* channel_stream = nullptr) {
    proto::Bytes session_id(proto::kSessionIdBytes);
    randombytes_buf(session_id.data(), session_id.size());
    WP_ASSIGN_OR_RETURN(proto::SignedEnvelope order, Order(keys_, options_, session_id));
    auto start = agent.startSessionRequest();
    proto::WriteEnvelope(order, start.initOrder());
    std::unique_ptr<proto::RoundChannelClient> channel;
    try {
      start.send().wait(io.waitScope);
      if (channel_stream != nullptr) {
        auto open = agent.openRoundChannelRequest();
        open.setSessionId(proto::AsView(session_id));
        auto token = open.send().wait(io.waitScope);
        channel = std::make_unique<proto::RoundChannelClient>(*channel_stream);
        channel->Open(proto::AsView(session_id), token.getToken()).wait(io.waitScope);
      }
    } catch (const kj::Exception& e) {
      return UnavailableError(std::string("starting the session: ") + e.getDescription().cStr());
    }
    {
      std::lock_guard<std::mutex> lock(stages_mu_);
      stages_.clear();
    }
    InstructionCounter client_counter;
    const uint64_t chunks = options_.session_labels / options_.chunk_labels;
    const uint32_t q = options_.labels_per_round;
    std::vector<int64_t> round_ns, build_ns, check_ns;
    // Every round's indices, drawn before the timing starts (as the challenger does before the
    // rounds: challenger/session/challenges.h): q distinct chunks each, one label in each.
    std::vector<uint64_t> all_indices(size_t{options_.rounds} * q);
    // A benchmark's draws need no secrecy: a fast generator seeded from the CSPRNG.
    std::mt19937_64 random(randombytes_random());
    std::uniform_int_distribution<uint64_t> chunk_of(0, chunks - 1), offset_of(0, options_.chunk_labels - 1);
    std::set<uint64_t> drawn;
    for (uint32_t r = 0; r < options_.rounds; ++r) {
      drawn.clear();
      while (drawn.size() < q) drawn.insert(chunk_of(random));
      size_t k = size_t{r} * q;
      for (uint64_t c : drawn) all_indices[k++] = c * options_.chunk_labels + offset_of(random);
    }
    const uint64_t client_before = client_counter.Read();
    const uint64_t agent_before = agent_counter != nullptr ? agent_counter->Read() : 0;
    const int64_t client_cpu_before = CpuClockNs(CLOCK_THREAD_CPUTIME_ID);
    const int64_t agent_cpu_before = agent_cpu_clock != nullptr ? CpuClockNs(*agent_cpu_clock) : 0;
    Status failed;
    for (uint32_t r = 0; r < options_.rounds && failed.ok(); ++r) {
      const int64_t t0 = MonotonicNs();
      const uint64_t* indices = all_indices.data() + size_t{r} * q;
      auto fill = [&](proto::ChallengeRound::Builder round) {
        round.setSessionId(proto::AsView(session_id));
        round.setRoundIndex(r);
        auto device = round.initDevices(1)[0];
        device.setDeviceIndex(0);
        auto list = device.initLabelIndices(q);
        for (uint32_t i = 0; i < q; ++i) list.set(i, indices[i]);
      };
      int64_t t1 = 0;
      try {
        std::optional<capnp::Response<proto::ProverAgent::RoundResults>> response;  // owns `labels`
        capnp::Data::Reader labels;
        if (channel != nullptr) {  // the round built in the channel's next request
          capnp::MallocMessageBuilder request(q + 32);
          fill(proto::RoundChannelClient::InitRound(request));
          t1 = MonotonicNs();
          channel->Send(request).wait(io.waitScope);
          labels = channel->answer().getLabels();
        } else {  // ... or in the RPC request
          auto request = agent.roundRequest();
          fill(request.initRound());
          t1 = MonotonicNs();
          response.emplace(request.send().wait(io.waitScope));
          labels = response->getAnswer().getLabels();
        }
        const int64_t t2 = MonotonicNs();
        if (labels.size() != size_t{q} * 32) {
          failed =
              InternalError("round " + std::to_string(r) + ": " + std::to_string(labels.size()) + " bytes answered");
          break;
        }
        for (uint32_t i = 0; i < q; ++i) {
          if (std::memcmp(labels.begin() + 32 * i, expected_.data() + 32 * indices[i], 32) != 0) {
            failed =
                InternalError("round " + std::to_string(r) + ": wrong label at index " + std::to_string(indices[i]));
            break;
          }
        }
        const int64_t t3 = MonotonicNs();
        build_ns.push_back(t1 - t0);
        round_ns.push_back(t2 - t1);
        check_ns.push_back(t3 - t2);
      } catch (const kj::Exception& e) {
        failed = UnavailableError("round " + std::to_string(r) + ": " + e.getDescription().cStr());
      }
    }
    const uint64_t client_after = client_counter.Read();
    const uint64_t agent_after = agent_counter != nullptr ? agent_counter->Read() : 0;
    const int64_t client_cpu_ns = CpuClockNs(CLOCK_THREAD_CPUTIME_ID) - client_cpu_before;
    const int64_t agent_cpu_ns = agent_cpu_clock != nullptr ? CpuClockNs(*agent_cpu_clock) - agent_cpu_before : -1000;
    // A measured session ends as any session does: a signed verdict, then the agent's transcript.
    // After a failed measurement it is aborted (the connection's end would end it too).
    try {
      if (failed.ok()) {
        WP_ASSIGN_OR_RETURN(proto::SignedEnvelope verdict, Verdict(keys_, order, session_id));
        auto finish = agent.finishRequest();
        proto::WriteEnvelope(verdict, finish.initVerdict());
        finish.send().wait(io.waitScope);
      } else {
        auto abort = agent.abortRequest();
        abort.setSessionId(proto::AsView(session_id));
        abort.setReason("round benchmark failed");
        abort.send().wait(io.waitScope);
      }
    } catch (const kj::Exception& e) {
      if (failed.ok()) failed = UnavailableError(std::string("finishing the session: ") + e.getDescription().cStr());
    }
    WP_RETURN_IF_ERROR(failed);

    RoundPathResult out;
    out.path = path;
    out.rounds = options_.rounds;
    out.labels_per_round = q;
    out.round = PercentilesOf(round_ns);
    out.client_build = PercentilesOf(build_ns);
    out.client_check = PercentilesOf(check_ns);
    std::vector<int64_t> checks, lookups, answer, transcript, transport;
    {
      std::lock_guard<std::mutex> lock(stages_mu_);
      for (const RoundStages& s : stages_) {
        checks.push_back(s.checks_ns);
        lookups.push_back(s.lookups_ns);
        answer.push_back(s.answer_ns);
        transcript.push_back(s.transcript_ns);
        if (s.round_index < round_ns.size()) transport.push_back(round_ns[s.round_index] - s.answer_ns);
      }
    }
    out.agent_checks = PercentilesOf(checks);
    out.agent_lookups = PercentilesOf(lookups);
    out.agent_answer = PercentilesOf(answer);
    out.agent_transcript = PercentilesOf(transcript);
    out.transport = PercentilesOf(transport);
    out.client_cpu_us = static_cast<double>(client_cpu_ns) / 1000.0 / options_.rounds;
    out.agent_cpu_us = agent_cpu_ns < 0 ? -1 : static_cast<double>(agent_cpu_ns) / 1000.0 / options_.rounds;
    if (client_counter.available()) {
      out.client_instructions = static_cast<double>(client_after - client_before) / options_.rounds;
    } else {
      out.instructions_unavailable = client_counter.unavailable_reason();
    }
    if (agent_counter != nullptr && agent_counter->available()) {
      out.agent_instructions = static_cast<double>(agent_after - agent_before) / options_.rounds;
    }
    return out;
  }

 private:
  const RoundBenchOptions options_;
  BenchKeys keys_;
  std::unique_ptr<AgentCore> core_;
  std::vector<uint8_t> expected_;
  std::mutex stages_mu_;
  std::vector<RoundStages> stages_;
};

std::shared_ptr<proto::TlsChannel> AgentTls(const BenchKeys& keys) {
  auto pem = proto::CertificatePem(keys.challenger);
  if (!pem.ok()) return nullptr;
  auto pinned = proto::PinCertificate(*pem, keys.challenger.public_key, "the bench's challenger certificate");
  if (!pinned.ok()) return nullptr;
  auto tls = proto::TlsChannel::Create(proto::TlsChannel::Role::kServer, keys.node, *pinned);
  if (!tls.ok()) return nullptr;
  return std::move(tls).value();
}

StatusOr<std::unique_ptr<proto::TlsChannel>> ClientTls(const BenchKeys& keys) {
  WP_ASSIGN_OR_RETURN(std::string pem, proto::CertificatePem(keys.node));
  WP_ASSIGN_OR_RETURN(proto::PinnedCertificate pinned,
                      proto::PinCertificate(pem, keys.node.public_key, "the bench's node certificate"));
  return proto::TlsChannel::Create(proto::TlsChannel::Role::kClient, keys.challenger, pinned);
}

// In process: the RPC path, or with `channel` its rounds on a round channel over a second pipe.
StatusOr<RoundPathResult> MeasureInProcess(RoundBench& bench, bool channel) {
  kj::AsyncIoContext io = kj::setupAsyncIo();
  auto server = kj::heap<AgentRpcServer>(bench.core(), *io.provider);
  const proto::KeyId challenger = proto::KeyIdOf(bench.keys().challenger.public_key);
  auto pipe = io.provider->newTwoWayPipe();
  server->Accept(kj::mv(pipe.ends[0]), challenger);
  auto channel_pipe = io.provider->newTwoWayPipe();
  if (channel) server->Accept(kj::mv(channel_pipe.ends[0]), challenger);
  StatusOr<RoundPathResult> result = InternalError("not run");
  {
    RpcClient client(*pipe.ends[1]);
    result = bench.Measure(io, client.agent, channel ? "channel-in-process" : "in-process", nullptr, nullptr,
                           channel ? channel_pipe.ends[1].get() : nullptr);
  }
  server = nullptr;
  return result;
}

// The agent on its own thread and event loop, listening on 127.0.0.1 with TLS and on a plaintext
// port whose connections it takes as the challenger's; stops when destroyed.
class LoopbackAgent {
 public:
  LoopbackAgent(RoundBench& bench, const RoundPollingOptions& polling) : bench_(bench), polling_(polling) {}
  ~LoopbackAgent() {
    if (!thread_.joinable()) return;
    stop_.store(true);
    thread_.join();
  }

  // Starts the thread; returns once both ports listen. Errors: UNAVAILABLE.
  Status Start() {
    std::future<Status> ready = bound_.get_future();
    thread_ = std::thread([this]() {
      counter_.OpenForThisThread();
      bool reported = false;
      try {
        kj::AsyncIoContext io = kj::setupAsyncIo();
        AgentRpcServerOptions options;
        options.tls = AgentTls(bench_.keys());
        if (options.tls == nullptr) {
          bound_.set_value(InternalError("cannot make the agent's TLS context"));
          return;
        }
        AgentRpcServer server(bench_.core(), *io.provider, options);
        tls_port_ = server.Listen("127.0.0.1:0").wait(io.waitScope);
        auto plain = io.provider->getNetwork().parseAddress("127.0.0.1", 0).wait(io.waitScope)->listen();
        plain_port_ = plain->getPort();
        const proto::KeyId challenger = proto::KeyIdOf(bench_.keys().challenger.public_key);
        kj::Promise<void> accepting = AcceptPlain(*plain, server, challenger).eagerlyEvaluate(nullptr);
        reported = true;
        bound_.set_value(Status::Ok());
        // The loop `serve` runs (round_polling.h), until the destructor asks it to stop.
        RunAgentEventLoop(StopWhenAsked(io.provider->getTimer()), io.waitScope, io.provider->getTimer(), bench_.core(),
                          polling_);
      } catch (const kj::Exception& e) {
        if (!reported)
          bound_.set_value(UnavailableError(std::string("agent event loop: ") + e.getDescription().cStr()));
      }
    });
    return ready.get();
  }

  unsigned tls_port() const { return tls_port_; }
  unsigned plain_port() const { return plain_port_; }
  // The agent thread's instruction counter (opened on that thread).
  InstructionCounter& counter() { return counter_; }
  // The agent thread's CPU clock; false if the system gives none.
  bool CpuClock(clockid_t* clock) { return pthread_getcpuclockid(thread_.native_handle(), clock) == 0; }

 private:
  kj::Promise<void> StopWhenAsked(kj::Timer& timer) {
    if (stop_.load()) return kj::READY_NOW;
    return timer.afterDelay(10 * kj::MILLISECONDS).then([this, &timer]() { return StopWhenAsked(timer); });
  }

  kj::Promise<void> AcceptPlain(kj::ConnectionReceiver& listener, AgentRpcServer& server, proto::KeyId challenger) {
    return listener.accept().then([this, &listener, &server, challenger](kj::Own<kj::AsyncIoStream> stream) {
      int one = 1;
      stream->setsockopt(IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      server.Accept(kj::mv(stream), challenger);
      return AcceptPlain(listener, server, challenger);
    });
  }

  RoundBench& bench_;
  std::thread thread_;
  const RoundPollingOptions polling_;
  std::atomic<bool> stop_{false};
  std::promise<Status> bound_;  // set once by the thread: listening, or why not
  unsigned tls_port_ = 0, plain_port_ = 0;
  InstructionCounter counter_{InstructionCounter::kDeferred};
};

// Over loopback TCP (TLS or the plaintext port): the RPC path, or with `channel` its rounds on a
// round channel over a second connection.
StatusOr<RoundPathResult> MeasureLoopback(RoundBench& bench, LoopbackAgent& agent, bool tls, bool channel) {
  kj::AsyncIoContext io = kj::setupAsyncIo();
  try {
    auto address = io.provider->getNetwork()
                       .parseAddress("127.0.0.1", tls ? agent.tls_port() : agent.plain_port())
                       .wait(io.waitScope);
    double handshake_p50_us = -1;
    if (tls) {
      // What a connection costs: TCP connect to a completed mutual TLS 1.3 handshake, both ends'
      // work on this machine, 20 times.
      std::vector<int64_t> handshake_ns;
      for (int i = 0; i < 20; ++i) {
        WP_ASSIGN_OR_RETURN(auto channel, ClientTls(bench.keys()));
        const int64_t t0 = MonotonicNs();
        auto stream = channel->Connect(address->connect().wait(io.waitScope)).wait(io.waitScope);
        handshake_ns.push_back(MonotonicNs() - t0);
      }
      handshake_p50_us = PercentilesOf(handshake_ns).p50_us;
    }
    std::vector<std::unique_ptr<proto::TlsChannel>> tls_channels;  // outlive their streams
    auto connect = [&]() -> StatusOr<kj::Own<kj::AsyncIoStream>> {
      auto tcp = address->connect().wait(io.waitScope);
      int one = 1;
      tcp->setsockopt(IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      if (!tls) return kj::mv(tcp);
      WP_ASSIGN_OR_RETURN(auto tls_channel, ClientTls(bench.keys()));
      tls_channels.push_back(std::move(tls_channel));
      return tls_channels.back()->Connect(kj::mv(tcp)).wait(io.waitScope);
    };
    WP_ASSIGN_OR_RETURN(kj::Own<kj::AsyncIoStream> stream, connect());
    kj::Own<kj::AsyncIoStream> channel_stream;
    if (channel) {
      WP_ASSIGN_OR_RETURN(channel_stream, connect());
    }
    RpcClient client(*stream);
    clockid_t agent_cpu;
    const bool has_cpu_clock = agent.CpuClock(&agent_cpu);
    const std::string path =
        std::string(channel ? "channel-" : "") + (tls ? "tcp-loopback-tls13" : "tcp-loopback-plaintext");
    auto result = bench.Measure(io, client.agent, path, &agent.counter(), has_cpu_clock ? &agent_cpu : nullptr,
                                channel_stream.get());
    if (result.ok()) result->tls_handshake_p50_us = handshake_p50_us;
    return result;
  } catch (const kj::Exception& e) {
    return UnavailableError(std::string("loopback: ") + e.getDescription().cStr());
  }
}

}  // namespace

bool IsRoundBenchPath(const std::string& path) {
  return path == "in-process" || path == "tcp-loopback-plaintext" || path == "tcp-loopback-tls13" ||
         path == "channel-in-process" || path == "channel-tcp-loopback-plaintext" ||
         path == "channel-tcp-loopback-tls13" || IsRoundFloorPath(path) || IsBlockingFloorPath(path);
}

int64_t MonotonicNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t CpuClockNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

Percentiles PercentilesOf(std::vector<int64_t> ns) {
  Percentiles p;
  if (ns.empty()) return p;
  std::sort(ns.begin(), ns.end());
  auto at = [&ns](double q) { return static_cast<double>(NearestRankPercentile(ns, q)) / 1000.0; };
  p.p50_us = at(0.5);
  p.p99_us = at(0.99);
  p.p999_us = at(0.999);
  p.max_us = at(1.0);
  return p;
}

StatusOr<std::vector<RoundPathResult>> RunRoundBench(const RoundBenchOptions& options) {
  if (options.rounds < 1 || options.rounds > 1'000'000) return InvalidArgumentError("rounds must be in [1, 1000000]");
  const uint32_t m = options.chunk_labels;
  if (m < 2 || m > (1u << 20) || (m & (m - 1)) != 0) {
    return InvalidArgumentError("chunk_labels must be a power of two in [2, 2^20]");
  }
  if (options.session_labels < m || options.session_labels % m != 0 || options.session_labels > (uint64_t{1} << 32)) {
    return InvalidArgumentError("session_labels must be a multiple of chunk_labels, at most 2^32");
  }
  if (options.labels_per_round < 1 || options.labels_per_round > 4096 ||
      options.labels_per_round > options.session_labels / m) {
    return InvalidArgumentError("labels_per_round must be in [1, 4096] and at most the session's chunks (" +
                                std::to_string(options.session_labels / m) + ")");
  }
  for (const std::string& path : options.paths) {
    if (!IsRoundBenchPath(path)) {
      return InvalidArgumentError("unknown path '" + path + "' (known: " + kRoundBenchPaths + ")");
    }
  }
  RoundBench bench(options);
  WP_RETURN_IF_ERROR(bench.Start());
  std::unique_ptr<LoopbackAgent> loopback;
  std::vector<RoundPathResult> out;
  for (const std::string& path : options.paths) {
    std::array<double, 3> load{-1, -1, -1};
    if (getloadavg(load.data(), 3) != 3) load = {-1, -1, -1};
    StatusOr<RoundPathResult> result = InternalError("not run");
    if (IsBlockingFloorPath(path)) {
      result = MeasureBlockingFloor(options, path, bench.keys().node, bench.keys().challenger);
    } else if (IsRoundFloorPath(path)) {
      auto client_tls = ClientTls(bench.keys());
      if (!client_tls.ok()) return client_tls.status().WithContext(path);
      result = MeasureRoundFloor(options, path, AgentTls(bench.keys()), std::move(client_tls).value());
    } else if (path == "in-process" || path == "channel-in-process") {
      result = MeasureInProcess(bench, path == "channel-in-process");
    } else {
      if (loopback == nullptr) {
        loopback = std::make_unique<LoopbackAgent>(bench, options.polling);
        WP_RETURN_IF_ERROR(loopback->Start());
      }
      result =
          MeasureLoopback(bench, *loopback, path.find("tls13") != std::string::npos, path.rfind("channel-", 0) == 0);
    }
    if (!result.ok()) return result.status().WithContext(path);
    result->load_average = load;
    out.push_back(std::move(result).value());
  }
  return out;
}

}  // namespace wipeproof
