#include "tests/prover/agent_test_util.h"

#include <capnp/message.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <utility>

#include "adversary/fixed_keys.h"
#include "kernels/region_labeler.h"
#include "prover/backends/cpu/cpu_backend.h"

namespace wipeproof::agent_test {
namespace {

std::atomic<uint64_t> g_live_bytes{0};

// Counts the bytes of `inner` in g_live_bytes while it is held; waits for `gate` before filling.
class CountingMemory final : public DeviceMemory {
 public:
  CountingMemory(std::unique_ptr<DeviceMemory> inner, const FillGate* gate)
      : inner_(std::move(inner)), gate_(gate), counted_(inner_->bytes_held()) {
    g_live_bytes += counted_;
  }
  ~CountingMemory() override { Release(); }
  const DeviceInfo& device() const override { return inner_->device(); }
  uint64_t bytes_held() const override { return inner_->bytes_held(); }
  Status Fill(const RegionSpec& plan, const FillOptions& options) override {
    if (gate_ != nullptr && !gate_->Wait(options.cancel)) return FailedPreconditionError("cancelled");
    return inner_->Fill(plan, options);
  }
  Status Lookup(const uint64_t* indices, size_t n, uint8_t* out) const override {
    return inner_->Lookup(indices, n, out);
  }
  Status StartLookup(const uint64_t* indices, size_t n, uint8_t* out) const override {
    return inner_->StartLookup(indices, n, out);
  }
  Status FinishLookup() const override { return inner_->FinishLookup(); }
  void Release() override {
    inner_->Release();
    g_live_bytes -= counted_;
    counted_ = 0;
  }

 private:
  std::unique_ptr<DeviceMemory> inner_;
  const FillGate* gate_;
  uint64_t counted_;
};

class CountingBackend final : public Backend {
 public:
  CountingBackend(std::unique_ptr<Backend> inner, const FillGate* gate) : inner_(std::move(inner)), gate_(gate) {}
  DeviceKind kind() const override { return inner_->kind(); }
  std::vector<DeviceInfo> Devices() const override { return inner_->Devices(); }
  StatusOr<std::unique_ptr<DeviceMemory>> Acquire(const std::string& id, const AcquireOptions& options) override {
    WP_ASSIGN_OR_RETURN(std::unique_ptr<DeviceMemory> memory, inner_->Acquire(id, options));
    return std::unique_ptr<DeviceMemory>(new CountingMemory(std::move(memory), gate_));
  }

 private:
  std::unique_ptr<Backend> inner_;
  const FillGate* gate_;
};

// A fake device's memory: a heap buffer.
class HeapMemory final : public DeviceMemory {
 public:
  HeapMemory(DeviceInfo device, uint64_t bytes, const FakeDeviceOptions& options)
      : device_(std::move(device)), buffer_(bytes), options_(options) {}
  const DeviceInfo& device() const override { return device_; }
  uint64_t bytes_held() const override { return buffer_.size(); }
  Status Fill(const RegionSpec& plan, const FillOptions& options) override {
    if (options_.gate != nullptr && !options_.gate->Wait(options.cancel)) return FailedPreconditionError("cancelled");
    if (!options_.fill_error.ok()) return options_.fill_error;
    if (plan.count > label_capacity()) return InvalidArgumentError("plan exceeds capacity");
    RegionSpec region;
    region.format = plan.format;
    std::memcpy(region.seed, plan.seed, kSeedBytes);
    region.chunk_labels = plan.chunk_labels;
    region.first = plan.first;
    region.count = plan.count;
    RegionLabelOptions labeler;
    labeler.threads = 1;
    labeler.cancel = options.cancel;
    labeler.progress = options.progress;
    WP_RETURN_IF_ERROR(LabelRegion(region, buffer_.data(), labeler));
    plan_ = plan;
    filled_ = true;
    return Status::Ok();
  }
  Status Lookup(const uint64_t* indices, size_t n, uint8_t* out) const override {
    WP_RETURN_IF_ERROR(StartLookup(indices, n, out));
    return FinishLookup();
  }
  Status StartLookup(const uint64_t* indices, size_t n, uint8_t* out) const override {
    if (options_.on_lookup) options_.on_lookup("start " + device_.id);
    if (!options_.lookup_error.ok()) return options_.lookup_error;
    WP_RETURN_IF_ERROR(CopyLabels(indices, n, out));
    lookup_done_at_ = std::chrono::steady_clock::now() + std::chrono::microseconds(options_.lookup_delay_us);
    return Status::Ok();
  }
  Status FinishLookup() const override {
    std::this_thread::sleep_until(lookup_done_at_);
    if (options_.on_lookup) options_.on_lookup("finish " + device_.id);
    return Status::Ok();
  }
  Status CopyLabels(const uint64_t* indices, size_t n, uint8_t* out) const {
    if (!filled_) return FailedPreconditionError("not filled");
    for (size_t i = 0; i < n; ++i) {
      if (indices[i] < plan_.first || indices[i] >= plan_.first + plan_.count) {
        return InvalidArgumentError("index " + std::to_string(indices[i]) + " out of range");
      }
      std::memcpy(out + 32 * i, buffer_.data() + 32 * (indices[i] - plan_.first), 32);
    }
    return Status::Ok();
  }
  void Release() override {
    filled_ = false;
    std::vector<uint8_t>().swap(buffer_);
  }

 private:
  DeviceInfo device_;
  std::vector<uint8_t> buffer_;
  FakeDeviceOptions options_;
  RegionSpec plan_;
  bool filled_ = false;
  mutable std::chrono::steady_clock::time_point lookup_done_at_;
};

class FakeDeviceBackend final : public Backend {
 public:
  explicit FakeDeviceBackend(FakeDeviceOptions options) : options_(std::move(options)) {}
  DeviceKind kind() const override { return options_.kind; }
  std::vector<DeviceInfo> Devices() const override { return {Info()}; }
  StatusOr<std::unique_ptr<DeviceMemory>> Acquire(const std::string& id, const AcquireOptions& options) override {
    if (id != options_.id) return NotFoundError("no device " + id);
    if (options.bytes > options_.acquire_limit_bytes || options.bytes > options_.total_bytes) {
      return ResourceExhaustedError("out of device memory: asked " + std::to_string(options.bytes) + " bytes");
    }
    std::unique_ptr<DeviceMemory> memory(new HeapMemory(Info(), options.bytes, options_));
    return std::unique_ptr<DeviceMemory>(new CountingMemory(std::move(memory), nullptr));
  }

 private:
  DeviceInfo Info() const {
    DeviceInfo d;
    d.kind = options_.kind;
    d.id = options_.id;
    d.name = "Fake GPU";
    d.total_bytes = options_.total_bytes;
    d.available_bytes = options_.available_bytes;
    d.held_by_others_bytes = options_.total_bytes - options_.available_bytes;
    return d;
  }
  FakeDeviceOptions options_;
};

}  // namespace

proto::KeyPair AuthorityKey() { return adversary::FixedKey(0x11); }
proto::KeyPair ChallengerKey() { return adversary::FixedKey(0x22); }
proto::KeyPair NodeKey() { return adversary::FixedKey(0x33); }
proto::KeyId ChallengerKeyId() { return proto::KeyIdOf(ChallengerKey().public_key); }

proto::PinnedCertificate CertificateOf(const proto::KeyPair& key) {
  auto pem = proto::CertificatePem(key);
  if (!pem.ok()) std::abort();
  auto pinned = proto::PinCertificate(*pem, key.public_key, "test certificate");
  if (!pinned.ok()) std::abort();
  return *pinned;
}

std::shared_ptr<proto::TlsChannel> AgentTls() {
  auto tls = proto::TlsChannel::Create(proto::TlsChannel::Role::kServer, NodeKey(), CertificateOf(ChallengerKey()));
  if (!tls.ok()) std::abort();
  return std::move(tls).value();
}

std::unique_ptr<proto::TlsChannel> ClientTls(const proto::KeyPair& own) {
  auto tls = proto::TlsChannel::Create(proto::TlsChannel::Role::kClient, own, CertificateOf(NodeKey()));
  if (!tls.ok()) std::abort();
  return std::move(tls).value();
}

uint64_t LiveBytes() { return g_live_bytes.load(); }

void FillGate::Open() { open_.store(true); }

bool FillGate::Wait(const std::atomic<bool>* cancel) const {
  ++waiting_;
  while (!open_.load()) {
    if (cancel != nullptr && cancel->load()) {
      --waiting_;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  --waiting_;
  return true;
}

std::unique_ptr<Backend> MakeFakeDeviceBackend(FakeDeviceOptions options) {
  return std::make_unique<FakeDeviceBackend>(std::move(options));
}

std::unique_ptr<Backend> MakeCountingHostBackend(uint64_t available_bytes, const FillGate* gate) {
  CpuBackendConfig config;
  config.meminfo = [available_bytes]() -> StatusOr<HostMemInfo> {
    return HostMemInfo{uint64_t{1} << 30, available_bytes};
  };
  config.min_reserve_bytes = 0;
  return std::make_unique<CountingBackend>(MakeCpuBackend(config), gate);
}

BackendSet HostBackends(const FillGate* gate, uint64_t available_bytes) {
  BackendSet set;
  set.backends.push_back(MakeCountingHostBackend(available_bytes, gate));
  set.disabled.push_back("hip: disabled: not built (test)");
  return set;
}

BackendSet HostAndGpuBackends(const FakeDeviceOptions& gpu, const FillGate* host_gate) {
  BackendSet set;
  set.backends.push_back(MakeFakeDeviceBackend(gpu));
  set.backends.push_back(MakeCountingHostBackend(64 * kMiB, host_gate));
  return set;
}

AgentConfig TestConfig() {
  AgentConfig config;
  config.authority_key = AuthorityKey().public_key;
  config.challenger_key = ChallengerKey().public_key;
  config.node_key = NodeKey();
  config.node_name = kNodeName;
  config.agent_version = "wipeproof-prover test";
  config.host_reserve_bytes = 0;
  config.host_fill_threads = 2;
  return config;
}

proto::Bytes SessionIdOf(uint8_t n) {
  proto::Bytes id(proto::kSessionIdBytes, 0xA5);
  id.back() = n;
  return id;
}

const uint8_t* TestSeed() {
  static const auto* seed = [] {
    auto* s = new std::array<uint8_t, kSeedBytes>();
    for (int i = 0; i < kSeedBytes; ++i) (*s)[i] = static_cast<uint8_t>(0x5A ^ (13 * i));
    return s;
  }();
  return seed->data();
}

proto::Bytes TestDelegation() {
  capnp::MallocMessageBuilder m;
  auto d = m.initRoot<proto::Delegation>();
  d.setChallengerPublicKey(proto::AsView(ChallengerKey().public_key));
  d.setNotBeforeUnixUs(0);
  d.setNotAfterUnixUs(INT64_MAX);
  d.setName("agent tests");
  d.setAllowUnsignedProfiles(true);
  auto envelope = proto::SignMessage(d.asReader(), AuthorityKey());
  if (!envelope.ok()) std::abort();
  return proto::EncodeEnvelope(*envelope);
}

proto::SignedEnvelope SignedOrder(const OrderSpec& spec, const Clock& clock) {
  return SignedOrder(spec, clock, ChallengerKey());
}

proto::SignedEnvelope SignedOrder(const OrderSpec& spec, const Clock& clock, const proto::KeyPair& signer) {
  capnp::MallocMessageBuilder m;
  auto order = m.initRoot<proto::WipeOrder>();
  order.setProtocolVersion(proto::PROTOCOL_VERSION);
  order.setSessionId(proto::AsView(spec.session_id));
  const int64_t issued = spec.issued_at_unix_us != 0 ? spec.issued_at_unix_us : clock.UnixMicros();
  order.setIssuedAtUnixUs(issued);
  order.setExpiresAtUnixUs(issued + spec.valid_for_us);
  order.setNodeName(spec.node_name);
  proto::KeyId key_id = proto::KeyIdOf(spec.wrong_node_key ? AuthorityKey().public_key : NodeKey().public_key);
  order.setNodeKeyId(proto::AsView(key_id));
  order.setSeed(proto::ByteView(TestSeed(), kSeedBytes));
  order.setFormat(proto::LabelFormat::POSEDB_BLAKE3_C1);
  order.setChunkLabels(spec.chunk_labels);
  auto devices = order.initDevices(static_cast<unsigned>(spec.devices.size()));
  for (size_t i = 0; i < spec.devices.size(); ++i) {
    auto d = devices[static_cast<unsigned>(i)];
    d.setSelector(spec.devices[i].selector);
    d.setFirstLabel(spec.devices[i].first_label);
    d.setLabelCount(spec.devices[i].label_count);
    d.setLabelsPerRound(spec.devices[i].labels_per_round);
    d.setCapacityBytes(spec.devices[i].label_count * 32);
    d.setFillDeadlineUs(60'000'000);
  }
  order.setFillDeadlineUs(60'000'000);
  order.setChallengerKeyId(proto::AsView(proto::KeyIdOf(ChallengerKey().public_key)));
  order.setRoundDeadlineUs(1000);
  order.setSessionTimeoutUs(spec.session_timeout_us);
  order.setHostMemoryInPlan(true);
  order.setDelegation(proto::AsView(spec.delegation.empty() ? TestDelegation() : spec.delegation));
  auto signed_order = proto::SignMessage(order.asReader(), signer);
  if (!signed_order.ok()) std::abort();
  return *signed_order;
}

proto::ChallengeRound::Builder Round::Build(const proto::Bytes& session_id, uint32_t index, const RoundDevices& devices) {
  auto round = request.initRoot<proto::ChallengeRound>();
  round.setSessionId(proto::AsView(session_id));
  round.setRoundIndex(index);
  auto list = round.initDevices(static_cast<unsigned>(devices.size()));
  for (size_t i = 0; i < devices.size(); ++i) {
    list[i].setDeviceIndex(devices[i].first);
    auto indices = list[i].initLabelIndices(static_cast<unsigned>(devices[i].second.size()));
    for (size_t j = 0; j < devices[i].second.size(); ++j) indices.set(j, devices[i].second[j]);
  }
  return round;
}

std::vector<uint8_t> ExpectedLabels(uint32_t chunk_labels, uint64_t first, uint64_t count) {
  RegionSpec region;
  region.format = LabelFormat::kC1;
  std::memcpy(region.seed, TestSeed(), kSeedBytes);
  region.chunk_labels = chunk_labels;
  region.first = first;
  region.count = count;
  std::vector<uint8_t> out(count * 32);
  if (!LabelRegion(region, out.data()).ok()) std::abort();
  return out;
}

proto::SignedEnvelope SignedVerdict(const proto::SignedEnvelope& order, bool pass) {
  return SignedVerdict(order, pass, ChallengerKey());
}

proto::SignedEnvelope SignedVerdict(const proto::SignedEnvelope& order, bool pass, const proto::KeyPair& signer,
                                    const proto::Bytes& session_id) {
  auto parsed = proto::ParseMessage<proto::WipeOrder>(proto::AsView(order.payload));
  if (!parsed.ok()) std::abort();
  capnp::MallocMessageBuilder m;
  auto verdict = m.initRoot<proto::Verdict>();
  if (session_id.empty()) {
    verdict.setSessionId(parsed->root().getSessionId());
  } else {
    verdict.setSessionId(proto::AsView(session_id));
  }
  const proto::Digest order_digest = proto::Blake2b256(proto::AsView(order.payload));
  verdict.setOrderDigest(proto::AsView(order_digest));
  verdict.setNodeName(kNodeName);
  verdict.setPass(pass);
  verdict.initFailure().setReason(pass ? proto::FailureReason::NONE : proto::FailureReason::WRONG_LABEL);
  auto signed_verdict = proto::SignMessage(verdict.asReader(), signer);
  if (!signed_verdict.ok()) std::abort();
  return *signed_verdict;
}

}  // namespace wipeproof::agent_test
