// Where a session's records go: the ledger in production (ledger_record_sink.h), nowhere for runs
// whose records nobody keeps (DiscardingRecordSink: the selftest, calibration probes), a vector in
// tests. Records are the bytes wipe.capnp LedgerRecordKind names (envelope bytes of the order,
// fill report, verdict, transcript and receipt; canonical RoundLog bytes).
//
// Thread-safety: implementations shared by concurrent sessions (a wave run) must be thread-safe.
#pragma once

#include <atomic>
#include <cstdint>

#include "common/status.h"
#include "proto/crypto.h"
#include "proto/wipe.capnp.h"

namespace wipeproof {

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  // Appends one record of `session_id` (16 bytes) and returns its ledger sequence number.
  // Errors: whatever the store reports; the session carries on and reports it (SessionOutcome).
  virtual StatusOr<uint64_t> Append(proto::LedgerRecordKind kind, proto::ByteView record,
                                    proto::ByteView session_id) = 0;
  // OK when the store has room for every record of one more session. The runner asks before it
  // records an order, so a session is refused (no order reaches any agent) rather than run without
  // its records. Errors: RESOURCE_EXHAUSTED naming what is short. Default: no limit known.
  virtual Status CheckRoomForSession() { return Status::Ok(); }
};

// Keeps nothing and numbers the records 0, 1, 2, ...: for sessions whose verdicts are checked or
// thrown away by the caller itself.
class DiscardingRecordSink final : public RecordSink {
 public:
  StatusOr<uint64_t> Append(proto::LedgerRecordKind, proto::ByteView, proto::ByteView) override { return next_++; }

 private:
  std::atomic<uint64_t> next_{0};
};

}  // namespace wipeproof
