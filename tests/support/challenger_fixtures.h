// Fixtures of the challenger's tests: the cheating agent (adversary/cheating_agent.h) with the
// tests' keys and no simulated time unless a test gives a clock, deviations with the tests'
// parameters, a RecordSink that keeps records in a vector, and a small inventory and profile.
//
// Thread-safety: an agent lives on the thread whose kj event loop serves it; MemoryRecordSink is
// thread-safe.
#pragma once

#include <kj/async-io.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "adversary/agent_server.h"
#include "adversary/cheating_agent.h"
#include "adversary/fixed_keys.h"
#include "challenger/fleet/inventory.h"
#include "challenger/fleet/wave_run.h"
#include "challenger/ledger/record_sink.h"
#include "challenger/parameters/parameter_profile.h"
#include "challenger/session/pipe_agent_connector.h"
#include "common/clock.h"
#include "proto/crypto.h"
#include "proto/wipe.capnp.h"

namespace wipeproof::testing {

using adversary::AgentLog;
using adversary::Deviation;
using adversary::DeviationKind;
using adversary::HugeAgentText;

// Keys from fixed seeds (authority 0x11, challenger 0x22, node 0x33, other node 0x44).
inline proto::KeyPair TestKey(uint8_t fill) { return adversary::FixedKey(fill); }
inline proto::PublicKey TestKeyPublic(uint8_t fill) { return TestKey(fill).public_key; }
// The TLS certificate of TestKey(fill), pinned (proto/tls_certificate.h).
proto::PinnedCertificate TestCertificate(uint8_t fill);

// A deviation of `kind` with the tests' parameters: kLateRound in round 2, huge texts of 5 MiB.
Deviation Cheat(DeviationKind kind);
// Every 10th chunk of every device never written (zeros): ~10% of the memory kept for itself.
Deviation BlankChunks();
// One chunk fewer on the last device, reported as held by other processes with `note`.
Deviation ShortCapacity(std::string note = "the driver holds some memory");

// The cheating agent with `deviation`, trusting `authority` and `challenger`, signing as `node`;
// honest and instant (no simulated time) unless told otherwise. `clock` (may be null) is where
// kLateFill / kLateRound move time; `log` (may be null) records what the agent saw.
kj::Own<adversary::CheatingAgent> TestAgent(Deviation deviation = {}, AgentLog* log = nullptr,
                                            FakeClock* clock = nullptr, proto::KeyPair node = TestKey(0x33),
                                            proto::PublicKey authority = TestKeyPublic(0x11),
                                            proto::PublicKey challenger = TestKeyPublic(0x22));

// Serves a fresh TestAgent(deviation, log, no clock, node, authority, challenger's key) to every
// TLS connection on 127.0.0.1 authenticated with `challenger` (the certificate of the challenger
// key), until destroyed; the server presents `node`'s certificate.
std::unique_ptr<adversary::LoopbackAgentServer> ServeTestAgent(
    proto::KeyPair node, Deviation deviation = {}, proto::PublicKey authority = TestKeyPublic(0x11),
    proto::PinnedCertificate challenger = TestCertificate(0x22), AgentLog* log = nullptr);

// Both ends of an in-memory pipe with the real RPC system (challenger/session/pipe_agent_connector.h).
using PipeConnector = PipeAgentConnector;

struct StoredRecord {
  proto::LedgerRecordKind kind;
  proto::Bytes bytes;
  proto::Bytes session_id;
};

class MemoryRecordSink final : public RecordSink {
 public:
  StatusOr<uint64_t> Append(proto::LedgerRecordKind kind, proto::ByteView record, proto::ByteView session_id) override;
  std::vector<StoredRecord> records() const;
  Status fail_with;  // when not OK, Append returns it

 private:
  mutable std::mutex mu_;
  std::vector<StoredRecord> records_;
};

// m = 64 labels per chunk. Node "node-a" (key 0x33, its certificate pinned): "host" (model host-dram,
// 64 chunks) and "GPU-test-0" (model test-gpu, 96 chunks + 1000 bytes of allowed reserve). Node
// "node-b" (key 0x44, pinned): host only, 64 chunks. Wave "wave-1" = both nodes, complete.
inline constexpr uint32_t kTestChunkLabels = 64;
Inventory TestInventory();
// TestInventory() with node-a and node-b served by `a` and `b`.
Inventory TestInventoryAt(const adversary::LoopbackAgentServer& a, const adversary::LoopbackAgentServer& b);
// Sessions over TCP in tests: the system clock, one expected-label thread.
TcpSessionOptions TcpTestOptions();

// m = 64, c1, R = 16, q = 32, round deadline 1000 us, fill deadline 60 s, uncalibrated, unsigned.
Profile TestProfile();
// The tests' adversary-class file, signed by `authority`: `classes_json`, by default class test-cpu,
// t_min 40000 ps, safety 1.5.
std::string SignedTestClasses(const proto::KeyPair& authority = TestKey(0x11), const std::string& classes_json = "");
// `profile` as wipe loads a profile the authority signed (challenger/parameters/authority_documents.h):
// written as JSON, signed by `authority`, loaded with SignedTestClasses(authority, classes_json). A
// profile changed afterwards loses the endorsement; endorse the changed one again.
Profile Endorsed(const Profile& profile, const proto::KeyPair& authority = TestKey(0x11),
                 const std::string& classes_json = "");
// The same as TestProfile, calibrated, class test-cpu (40 ns, safety 1.5), round deadline 2 us:
// meets the rule (floor 2.56 us) and the honest margin (honest p99.9 1 us); Endorsed.
Profile CalibratedTestProfile();

}  // namespace wipeproof::testing
