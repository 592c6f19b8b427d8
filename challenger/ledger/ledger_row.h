// A ledger's stored row and its head, as challenger/ledger/ledger.h describes them: the types the
// store (ledger.h), the chain check (ledger_verify.h) and the export share.
// Thread-safety: plain values.
#pragma once

#include <cstdint>

#include "proto/codec.h"
#include "proto/crypto.h"

namespace wipeproof {

// The ledger's last entry. entry_count == 0 means an empty ledger (other fields unset).
struct LedgerHead {
  uint64_t entry_count = 0;  // entries 0 .. entry_count-1
  uint64_t sequence = 0;     // sequence of the last entry (entry_count - 1)
  proto::Digest digest{};    // BLAKE2b-256 of the last entry's envelope bytes
  int64_t recorded_at_unix_us = 0;
  proto::Bytes envelope;  // the last entry's signed envelope (EncodeEnvelope bytes)
};

// One stored row as read from SQLite: nothing in it is verified (see ChainVerifier).
struct LedgerRow {
  uint64_t sequence = 0;    // column `sequence`
  int64_t kind = 0;         // column `kind` (a LedgerRecordKind value, if intact)
  proto::Bytes session_id;  // column `session_id`: 16 bytes or empty
  int64_t recorded_at_unix_us = 0;
  proto::Bytes entry_digest;  // column `entry_digest`
  proto::Bytes envelope;      // column `envelope`: the signed entry
};

}  // namespace wipeproof
