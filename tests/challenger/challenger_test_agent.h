// Test doubles for challenger tests: a ProverAgent that really stores the session's labels (a
// std::vector filled by LabelRegion) and can be told to cheat in one way at a time, an in-memory
// pipe connector (style.md 10), a RecordSink that keeps records in a vector, and a small inventory
// and profile.
//
// Thread-safety: a TestAgent and its PipeConnector live on the thread whose kj event loop they
// were made on; MemoryRecordSink is thread-safe.
#pragma once

#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "challenger/session/agent_connector.h"
#include "challenger/fleet/inventory.h"
#include "challenger/session/pipe_agent_connector.h"
#include "challenger/parameters/parameter_profile.h"
#include "challenger/ledger/record_sink.h"
#include "common/clock.h"
#include "proto/crypto.h"
#include "proto/transcript.h"
#include "proto/wipe.capnp.h"

namespace wipeproof::testing {

// One way of cheating (or failing) at a time.
enum class Cheat {
  kNone,
  kBlankChunks,         // zeroes `blank_every`-th chunk of every device (10% at 10)
  kLateRound,           // advances the fake clock past the round deadline inside round `late_round`
  kLateFill,            // advances the fake clock past the fill deadline inside startSession
  kShortCapacity,       // reports one chunk fewer bytes held on the last device
  kTamperedReport,      // flips a payload byte of the signed fill report
  kTranscriptMismatch,  // signs a transcript digest with one bit flipped
  kDisconnectMidFill,   // drops the connection during startSession
  kRefuseOrder,         // refuses every order (FAILED_PRECONDITION "busy: test refusal")
  kWrongRoundIndex,     // answers round r as round r+1
  // Huge texts (TestAgentOptions::huge_text_bytes, with control characters and invalid UTF-8 up
  // front; HugeAgentText()):
  kHugeRefusal,      // startSession fails with a wipeproof Status carrying the huge text
  kHugeException,    // startSession fails with a plain (non-Status) exception of the huge text
  kHugeDisconnect,   // startSession fails with a DISCONNECTED exception of the huge text
  kHugeRoundError,   // round `late_round` fails with a huge Status; so does the abort that follows
  kHugeFinishError,  // finish fails with a huge Status
  kHugeNote,         // kShortCapacity, with the huge text (at most 512 KiB of it) as the note
};

// The huge text of the kHuge* cheats: "agent text\n\x01\xff" then 'x' up to `bytes`.
std::string HugeAgentText(size_t bytes);

struct TestAgentOptions {
  Cheat cheat = Cheat::kNone;
  uint32_t blank_every = 10;
  uint32_t late_round = 2;
  FakeClock* clock = nullptr;                // required for kLateRound / kLateFill
  int64_t advance_us = 0;                    // how far those cheats move the clock
  std::function<void()> disconnect;          // kDisconnectMidFill: cuts the connection (PipeConnector::Cut)
  size_t huge_text_bytes = size_t{5} << 20;  // kHuge*: 5 MiB
};

// Keys from fixed seeds (authority 0x11, challenger 0x22, node 0x33, other node 0x44).
proto::KeyPair TestKey(uint8_t fill);
inline proto::PublicKey TestKeyPublic(uint8_t fill) { return TestKey(fill).public_key; }

// What the agent saw, for assertions.
struct TestAgentLog {
  int orders = 0;
  int rounds = 0;
  int finishes = 0;
  int aborts = 0;
  std::string abort_reason;
  bool holds_memory = false;
};

class TestAgent final : public proto::ProverAgent::Server {
 public:
  TestAgent(proto::PublicKey authority, proto::PublicKey challenger, proto::KeyPair node, TestAgentOptions options,
            TestAgentLog* log);

 protected:
  kj::Promise<void> startSession(StartSessionContext context) override;
  kj::Promise<void> round(RoundContext context) override;
  kj::Promise<void> finish(FinishContext context) override;
  kj::Promise<void> abort(AbortContext context) override;
  kj::Promise<void> status(StatusContext context) override;

 private:
  struct Device {
    uint64_t first = 0;
    uint64_t count = 0;
    std::vector<uint8_t> labels;
  };
  void Release();

  proto::PublicKey authority_, challenger_;
  proto::KeyPair node_;
  TestAgentOptions options_;
  TestAgentLog* log_;
  std::optional<proto::TranscriptHasher> hasher_;
  std::vector<Device> devices_;
  proto::Bytes session_id_;
};

// Both ends of an in-memory pipe with the real RPC system (challenger/session/pipe_agent_connector.h).
using PipeConnector = PipeAgentConnector;

// Serves one TestAgent to one TCP connection on 127.0.0.1 (a free port), on its own thread and event
// loop, until that connection closes. The destructor joins the thread; a server nobody connects to
// gives up after 60 s.
class TcpTestAgent {
 public:
  explicit TcpTestAgent(proto::KeyPair node_key, Cheat cheat = Cheat::kNone,
                        proto::PublicKey authority = TestKeyPublic(0x11),
                        proto::PublicKey challenger = TestKeyPublic(0x22));
  ~TcpTestAgent();
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  const TestAgentLog& log() const { return log_; }

 private:
  TestAgentLog log_;
  uint16_t port_ = 0;
  std::thread thread_;
};

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

// m = 64 labels per chunk. Node "node-a": "host" (model host-dram, 64 chunks) and "GPU-test-0"
// (model test-gpu, 96 chunks + 1000 bytes of allowed reserve). Node "node-b": host only, 64
// chunks. Wave "wave-1" = both nodes, complete.
inline constexpr uint32_t kTestChunkLabels = 64;
Inventory TestInventory();

// m = 64, c1, R = 16, q = 32, round deadline 1000 us, fill deadline 60 s, uncalibrated.
Profile TestProfile();
// The same, calibrated, safety factor 1, round deadline 3 us: meets the rule (floor 3.84 us for
// 40 ns) and the honest margin (honest p99.9 2 us).
Profile CalibratedTestProfile();

}  // namespace wipeproof::testing
