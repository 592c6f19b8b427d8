// The production RecordSink (record_sink.h): a session's records go to the ledger.
//
// Thread-safety: as Ledger (thread-safe), so one sink may be shared by the sessions of a wave.
#pragma once

#include "challenger/ledger/ledger.h"
#include "challenger/ledger/record_sink.h"

namespace wipeproof {

class LedgerRecordSink : public RecordSink {
 public:
  // `ledger` must be open for appending and outlive the sink.
  explicit LedgerRecordSink(Ledger* ledger) : ledger_(ledger) {}

  // Ledger::Append: durable when it returns; RESOURCE_EXHAUSTED "ledger disk full: refusing new
  // sessions" when the disk is full (nothing appended).
  StatusOr<uint64_t> Append(proto::LedgerRecordKind kind, proto::ByteView record, proto::ByteView session_id) override {
    return ledger_->Append(kind, record, session_id);
  }
  // Ledger::CheckRoomForSession: room for a session's worst case (kSessionLedgerBytes).
  Status CheckRoomForSession() override { return ledger_->CheckRoomForSession(); }

 private:
  Ledger* const ledger_;
};

}  // namespace wipeproof
