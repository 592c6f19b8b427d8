// What a ledger record must look like for its kind (wipe.capnp LedgerRecordKind), and a short,
// cheap summary of it for `ledger show` and `ledger export`.
//
//   kind        record bytes                               signature checked here
//   order       EncodeEnvelope of a wipeOrder envelope      no (authority key not known here)
//   fillReport  EncodeEnvelope of a fillReport envelope     no (node key not known here)
//   deviceFillNotice  EncodeEnvelope of a deviceFillNotice  no (node key not known here)
//   waveVerdict EncodeEnvelope of a waveVerdict envelope    yes, challenger key (no session id)
//   roundLog    canonical RoundLog                          (unsigned)
//   verdict     EncodeEnvelope of a verdict envelope        yes, challenger key
//   transcript  EncodeEnvelope of a transcriptDigest env.   no (node key not known here)
//   receipt     EncodeEnvelope of a receipt envelope        yes, challenger key
//
// Every kind's message but the wave verdict carries a sessionId; it must equal the ledger entry's
// sessionId, so a record cannot be filed under another session (a wave verdict is filed under none). Records of other
// signers are parsed (bounded, validated: proto/codec.h) but their signatures are the session code's business; the
// ledger's own signature covers the bytes as recorded.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/clock.h"  // FormatUnixMicrosUtc
#include "common/status.h"
#include "proto/crypto.h"
#include "proto/wipe.capnp.h"

namespace wipeproof {

// "order", "fillReport", "roundLog", ... as spelled in wipe.capnp; "kind(N)" for other values.
std::string LedgerRecordKindName(proto::LedgerRecordKind kind);
// Inverse of LedgerRecordKindName for the known kinds except unknown. Errors: INVALID_ARGUMENT.
StatusOr<proto::LedgerRecordKind> ParseLedgerRecordKind(const std::string& name);

// Checks `record` against the table above and that its sessionId equals `session_id`.
// `challenger` may be null to skip the challenger-signed records' signatures.
// Errors: INVALID_ARGUMENT saying what is wrong (unknown kind, wrong envelope kind, malformed
// message, session mismatch); PERMISSION_DENIED for a verdict/receipt not signed by `challenger`.
Status CheckLedgerRecord(proto::LedgerRecordKind kind, proto::ByteView record, proto::ByteView session_id,
                         const proto::PublicKey* challenger);

// A few decoded fields of `record` (node, pass, rounds, digests ...) as a JSON object. For
// envelope kinds it includes "payload_digest" (BLAKE2b-256 hex of the envelope's payload: the
// value Verdict.orderDigest, Receipt.verdictDigest etc. refer to) and "signer_key_id".
// Returns {"error": "..."} when the record does not decode. Never fails; every string in it is
// valid UTF-8 (bytes that are not become U+FFFD), so dump() cannot throw.
nlohmann::ordered_json SummarizeLedgerRecord(proto::LedgerRecordKind kind, proto::ByteView record);

// One line of "key=value" pairs from a summary, for `ledger show`.
std::string SummaryLine(const nlohmann::ordered_json& summary);

}  // namespace wipeproof
