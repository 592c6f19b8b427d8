// Ledger records as plain JSON (`ledger decode --json`), written by Cap'n Proto's own JSON codec
// (libcapnp-json) from the schema, so field names and shapes are wipe.capnp's and what `capnp
// convert flat:json` prints, with three differences an auditor reads more easily:
//   - Data fields are lowercase hex strings (capnp prints arrays of byte values);
//   - an envelope's payload and a ledger entry's record are decoded in place as the message they
//     hold ("payload": {...}), with the hex of the signed bytes beside them ("payloadHex",
//     "recordHex") and the BLAKE2b-256 digest the other records refer to ("payloadDigest");
//   - Text that is not valid UTF-8 has its bad bytes replaced by U+FFFD.
// As in capnp's JSON, 64-bit integers are strings ("12345") and enums their names ("verdict").
//
//   envelope record:  {"kind": "verdict", "signerKeyId": "...", "signature": "...",
//                      "payloadDigest": "...", "payloadHex": "...", "payload": {Verdict}}
//   roundLog record:  {RoundLog}
//   ledger entry:     the envelope form above, payload {LedgerEntry} with "record" decoded and
//                     "recordHex" beside it, plus "entryDigest" (BLAKE2b-256 of the envelope bytes)
// Decoding checks nothing a signature vouches for: verify with `ledger verify` / `ledger audit`.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "proto/crypto.h"
#include "proto/wipe.capnp.h"

namespace wipeproof {

// The record of a ledger entry of `kind` (ledger_records.h table). Errors: INVALID_ARGUMENT when
// the bytes are not a record of that kind (malformed, wrong envelope kind, over a size limit).
StatusOr<nlohmann::ordered_json> LedgerRecordToJson(proto::LedgerRecordKind kind, proto::ByteView record);

// A whole ledger entry from its envelope bytes (the `envelope` column, an export's "envelope").
// Errors: INVALID_ARGUMENT as above, for the entry or its record.
StatusOr<nlohmann::ordered_json> LedgerEntryToJson(proto::ByteView envelope_bytes);

}  // namespace wipeproof
