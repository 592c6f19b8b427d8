// Shared pieces of the prover agent tests: fixed keys, small fake devices that count the memory
// they hold (so every test can assert that nothing stays held), a gate that holds a fill until the
// test lets it go, signed orders and verdicts, and the labels a challenger expects.
#pragma once

#include <capnp/message.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "proto/signing.h"
#include "proto/tls_certificate.h"
#include "proto/tls_channel.h"
#include "prover/agent/agent_config.h"
#include "prover/backends/backend.h"
#include "prover/backends/backend_factory.h"
#include "common/numbers.h"

namespace wipeproof::agent_test {

inline constexpr char kNodeName[] = "node-a";
inline constexpr char kGpuId[] = "GPU-00000000-fake-0000-0000-000000000001";

proto::KeyPair AuthorityKey();
proto::KeyPair ChallengerKey();
proto::KeyPair NodeKey();
// The key id every test order names as its challenger: what a test connection is authenticated as.
proto::KeyId ChallengerKeyId();

// The certificate of `key`, pinned (proto/tls_certificate.h).
proto::PinnedCertificate CertificateOf(const proto::KeyPair& key);
// The agent's TLS: NodeKey()'s certificate, accepting only ChallengerKey()'s.
std::shared_ptr<proto::TlsChannel> AgentTls();
// A client's TLS presenting `own`'s certificate and pinning NodeKey()'s (the challenger's, by default).
std::unique_ptr<proto::TlsChannel> ClientTls(const proto::KeyPair& own = ChallengerKey());

// Bytes held by every fake device memory alive now (all tests' backends).
uint64_t LiveBytes();

// Holds fills of the devices built with it until Open() (or until the fill is cancelled).
class FillGate {
 public:
  void Open();
  // Blocks until opened or *cancel; true if opened.
  bool Wait(const std::atomic<bool>* cancel) const;
  // Fills that are waiting now.
  int waiting() const { return waiting_.load(); }

 private:
  std::atomic<bool> open_{false};
  mutable std::atomic<int> waiting_{0};
};

struct FakeDeviceOptions {
  DeviceKind kind = DeviceKind::kCuda;
  std::string id = kGpuId;
  uint64_t total_bytes = 64 * kMiB;
  uint64_t available_bytes = 64 * kMiB;       // what Devices() reports
  uint64_t acquire_limit_bytes = UINT64_MAX;  // Acquire() refuses more than this (a racing process)
  Status fill_error;                          // returned by Fill() when not OK
  const FillGate* gate = nullptr;             // when set, Fill() waits for it first
  // > 0: StartLookup copies the labels at once and FinishLookup returns this many microseconds
  // after the start (a GPU's lookup kernel running on its own); Lookup takes as long.
  uint64_t lookup_delay_us = 0;
  Status lookup_error;  // returned by StartLookup (and Lookup) when not OK: a device that fails
  // Called with "start <id>" and "finish <id>" as StartLookup and FinishLookup run.
  std::function<void(const std::string&)> on_lookup;
};

// A device whose memory is a heap buffer, filled with the region labeler (same bytes as the host).
std::unique_ptr<Backend> MakeFakeDeviceBackend(FakeDeviceOptions options);

// The real CPU backend on a faked machine with `available_bytes` MemAvailable; its memory is
// counted in LiveBytes() and its fills wait for `gate` when one is given.
std::unique_ptr<Backend> MakeCountingHostBackend(uint64_t available_bytes, const FillGate* gate = nullptr);

// A host-only BackendSet (64 MiB available) plus, with `gpu`, one fake GPU.
BackendSet HostBackends(const FillGate* gate = nullptr, uint64_t available_bytes = 64 * kMiB);
BackendSet HostAndGpuBackends(const FakeDeviceOptions& gpu, const FillGate* host_gate = nullptr);

// Agent config with the keys above, node kNodeName, no host reserve, 2 fill threads.
AgentConfig TestConfig();

// A session id whose last byte is `n`.
proto::Bytes SessionIdOf(uint8_t n);

struct PlannedDeviceSpec {
  std::string selector;
  uint64_t first_label = 0;
  uint64_t label_count = 0;
  uint32_t labels_per_round = 8;
};

// Everything an order says, with defaults for a small host session valid around `now`.
struct OrderSpec {
  proto::Bytes session_id = SessionIdOf(1);
  int64_t issued_at_unix_us = 0;  // 0: the clock's now
  int64_t valid_for_us = 60'000'000;
  std::string node_name = kNodeName;
  bool wrong_node_key = false;
  uint32_t chunk_labels = 256;
  uint64_t session_timeout_us = 0;
  std::vector<PlannedDeviceSpec> devices = {{"host", 0, 65536, 8}};  // 2 MiB of labels
  // The delegation the order carries: empty = TestDelegation(); set to test others.
  proto::Bytes delegation;
};

// The authority's delegation to ChallengerKey() that test orders carry: in force for all time
// ([0, INT64_MAX)), unsigned profiles allowed (test orders name no signed profile).
proto::Bytes TestDelegation();

// The order's canonical bytes, carrying spec.delegation (TestDelegation() when empty), signed by
// `signer` (the challenger unless told otherwise).
proto::SignedEnvelope SignedOrder(const OrderSpec& spec, const Clock& clock);
proto::SignedEnvelope SignedOrder(const OrderSpec& spec, const Clock& clock, const proto::KeyPair& signer);

// Label indices per device of a round: (device index in the order, label indices).
using RoundDevices = std::vector<std::pair<uint16_t, std::vector<uint64_t>>>;

// A round over `devices` and the agent's answer to it (AgentCore::AnswerRound's two messages).
struct Round {
  capnp::MallocMessageBuilder request;
  capnp::MallocMessageBuilder response;
  proto::ChallengeRound::Builder Build(const proto::Bytes& session_id, uint32_t index, const RoundDevices& devices);
  proto::RoundAnswer::Builder answer() { return response.getRoot<proto::RoundAnswer>(); }
};

// The session seed every test order carries.
const uint8_t* TestSeed();

// Labels [first, first + count) of a test order (c1, TestSeed(), m), via the reference labeler.
std::vector<uint8_t> ExpectedLabels(uint32_t chunk_labels, uint64_t first, uint64_t count);

// A verdict on `order` (its session id and digest), signed by `signer` (the challenger unless told
// otherwise); `session_id` overrides the order's when not empty.
proto::SignedEnvelope SignedVerdict(const proto::SignedEnvelope& order, bool pass);
proto::SignedEnvelope SignedVerdict(const proto::SignedEnvelope& order, bool pass, const proto::KeyPair& signer,
                                    const proto::Bytes& session_id = {});

}  // namespace wipeproof::agent_test
