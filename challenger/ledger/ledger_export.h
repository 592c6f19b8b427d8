// `ledger export`: the ledger as a JSON document for auditors, carrying the signed head, and the
// checks an auditor runs on such a document with only the challenger's public key.
//
// Document (format "wipeproof-ledger-export/v1"; digests and ids lowercase hex):
//   {
//     "format", "ledger" (path), "exported_at_unix_us", "exported_at" (UTC, ISO 8601),
//     "challenger_key_id", "challenger_public_key",
//     "chain_rule": how prevEntryDigest is computed (text),
//     "schema_file": "proto/wipe.capnp", "schema_sha256": SHA-256 of the schema this build compiled
//                                  (kWipeSchemaSha256): decode the records with exactly that file,
//     "authority_key_id", "authority_public_key"   -- when the exporter gave the authority key,
//     "nodes": [{"name", "key_id", "public_key"}]  -- when it gave the inventory: its node keys,
//     "documents": [{"kind", "digest", "recorded_at_unix_us", "text"}]
//                                 -- the ledger's authority-signed documents (ledger.h
//                                    "documents": the inventory), each authenticated by its
//                                    digest, which the delegation an order carries names,
//     "verified": true            -- the exporter's statement that the ledger verified when exported
//                                    (unsigned, like "ledger" and "exported_at*": not evidence)
//     "session_filter": hex | null,
//     "wave_filter": {"sequence", "session_ids": [hex]}
//                                 -- only with LedgerExportOptions::wave: the entries listed are the
//                                    wave verdict of ledger entry "sequence" and its member sessions'
//     "head": {"entry_count", "sequence", "entry_digest", "recorded_at_unix_us", "recorded_at",
//              "envelope"}        -- envelope: the last entry's signed envelope: the signed head
//     "entries": [{"sequence", "kind", "session_id", "recorded_at_unix_us", "recorded_at",
//                  "record_bytes", "record_digest", "prev_entry_digest", "entry_digest",
//                  "summary" (ledger_records.h), "envelope" (unless include_envelopes is off)}]
//   }
// The head always covers the whole ledger, also when entries are filtered by session or wave.
// ExportDocumentJson without an ExportStamp (a certificate's evidence, challenger/audit/certificate.h)
// leaves out every field nothing signs or pins: "ledger", "exported_at_unix_us", "exported_at",
// "verified" and each document's "recorded_at_unix_us".
//
// What VerifyLedgerExport proves. An entry's fields are only as good as the signed envelope they
// are checked against: every field of an entry that carries its envelope is recomputed from it
// (record_bytes, record_digest and summary from the signed record, prev_entry_digest and
// entry_digest from the envelope) and must equal the document's. An entry without its envelope
// cannot be checked at all: entry_digest is BLAKE2b-256 of envelope bytes the document lacks, so
// nothing binds its summary, record_digest or prev_entry_digest to anything signed. Such entries
// are counted as unverified (ExportVerification), and `ledger verify --export` says so and exits 3.
// Envelopes are therefore included by default. With every envelope and no filter the document
// alone re-verifies the whole chain up to the signed head; later, `ledger verify --expect_head`
// checks that the ledger still extends the exported head.
//
// Keys. The document carries the public keys its records' signatures need (challenger, authority,
// each node), so `ledger audit` (ledger_audit.h) needs nothing else; but a key a document carries
// proves nothing by itself: the auditor pins the authority and challenger keys, and a node key is
// used only where the delegated order names its key id. VerifyLedgerExport checks only that
// each listed key id is the id of the key listed with it.
//
// Thread-safety: free functions; the Ledger's own locking applies.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "challenger/ledger/ledger.h"
#include "challenger/ledger/ledger_verify.h"
#include "common/clock.h"
#include "common/status.h"
#include "proto/crypto.h"

namespace wipeproof {

inline constexpr char kLedgerExportFormat[] = "wipeproof-ledger-export/v1";

// A node's name and key as the authority's inventory lists them.
struct NodeKey {
  std::string name;
  proto::PublicKey public_key{};
};

// A wave's entries (the evidence of a wave's certificate, challenger/audit/certificate.h): its wave
// verdict's ledger entry and every entry of its member sessions.
struct WaveEntryFilter {
  uint64_t sequence = 0;                  // the wave verdict's ledger entry
  std::vector<proto::Bytes> session_ids;  // 16 bytes each: its member sessions, in its order
};

struct LedgerExportOptions {
  std::optional<proto::Bytes> session_id;         // 16 bytes: only that session's entries; unset: all
  std::optional<WaveEntryFilter> wave;            // only that wave's entries (not with session_id)
  bool include_envelopes = true;                  // add each entry's signed envelope (hex); without it no
                                                  // entry's fields can be verified from the document
  std::optional<proto::PublicKey> authority_key;  // written as authority_key_id/_public_key
  std::vector<NodeKey> node_keys;                 // written as "nodes" (empty: no "nodes" field)
};

// The export's node keys: each listed key id checked against its key. Errors: INVALID_ARGUMENT
// (malformed), DATA_LOSS (a key id that is not its key's: the document was edited). Empty when the
// document has no "nodes".
StatusOr<std::vector<NodeKey>> ExportedNodeKeys(const nlohmann::ordered_json& document);
// The export's documents, each listed digest checked against its text. Errors: INVALID_ARGUMENT
// (malformed), DATA_LOSS (a digest that is not its text's). Empty when the document has none.
StatusOr<std::vector<LedgerDocument>> ExportedDocuments(const nlohmann::ordered_json& document);
// The export's authority key (nullopt when it has none), its key id checked the same way.
StatusOr<std::optional<proto::PublicKey>> ExportedAuthorityKey(const nlohmann::ordered_json& document);

// Verifies the whole ledger under `challenger_pub` and builds the document in the same pass (one
// read snapshot), stamped with `clock`. Errors: as Ledger::Verify (PERMISSION_DENIED wrong key,
// DATA_LOSS naming the first bad entry); INVALID_ARGUMENT for a session filter that is not 16 bytes,
// or a wave filter with such a session or given with a session filter.
StatusOr<nlohmann::ordered_json> ExportLedgerJson(const Ledger& ledger, const proto::PublicKey& challenger_pub,
                                                  const LedgerExportOptions& options, const Clock& clock);

// An entry as a document lists it: verified, and the envelope bytes it was verified from.
struct ExportedEntry {
  VerifiedEntry entry;
  proto::Bytes envelope;
};

// What an export document is made of: the signed head, the entries it lists (already filtered),
// the authority-signed documents it carries. ExportLedgerJson collects them from a ledger; a
// certificate (challenger/audit/certificate.h) from the records it verified.
struct ExportParts {
  LedgerHead head;
  std::vector<ExportedEntry> entries;
  std::vector<LedgerDocument> documents;
};

// Where and when a document was exported: written as "ledger", "exported_at_unix_us",
// "exported_at", "verified" and each document's "recorded_at_unix_us". Nothing signs them.
struct ExportStamp {
  std::string ledger_path;
  int64_t exported_at_unix_us = 0;  // Unix us
};

// The export document (format above) of `parts` under `options` (its filter, envelopes and keys;
// the filter only names itself: `parts` holds the entries already chosen), written with the stamp,
// or without any field nothing signs when there is none. Pure; never fails (text that is not
// UTF-8 is the caller's to replace when it dumps the document).
nlohmann::ordered_json ExportDocumentJson(const ExportParts& parts, const proto::PublicKey& challenger_pub,
                                          const LedgerExportOptions& options,
                                          const std::optional<ExportStamp>& stamp);

// Checks the signed head of an export document: the head envelope is a ledgerEntry signed by
// `challenger_pub` whose sequence, digest and entry count are those the document states. Returns
// it, ready for Ledger::Verify's expected_head. Also checks the document's challenger_public_key and
// head recorded_at where present. Errors: INVALID_ARGUMENT (not an export document,
// bad hex), DATA_LOSS (the head does not verify or disagrees with the document).
StatusOr<LedgerHead> VerifyExportedHead(const nlohmann::ordered_json& document, const proto::PublicKey& challenger_pub);

// The outcome of VerifyLedgerExport.
struct ExportVerification {
  LedgerHead head;                     // the signed head, verified
  uint64_t verified_entries = 0;       // entries whose every field was checked against their envelope
  uint64_t unverified_entries = 0;     // entries listed without an envelope: nothing in them is verified
  bool whole_chain = false;            // every entry of the ledger, chained from genesis to the head
  std::vector<VerifiedEntry> entries;  // the verified entries, in document order
};

// VerifyExportedHead, then every entry that carries its envelope: its signature, and that each of
// its fields (sequence, kind, session_id, recorded_at_unix_us, recorded_at, record_bytes,
// record_digest, prev_entry_digest, entry_digest, summary) equals what the signed envelope says;
// and, when the document holds every entry with its envelope, the whole chain up to the head; and
// that the key ids of the authority and node keys it lists are those keys' ids. A filtered document
// (session_filter, wave_filter) lists only entries its filter admits, in ledger order.
// Entries without an envelope are counted in unverified_entries, not failed: the caller decides
// (the CLI exits 3). Errors: as VerifyExportedHead; DATA_LOSS naming the entry and the field that
// differs; INVALID_ARGUMENT for a field that is not part of the format.
StatusOr<ExportVerification> VerifyLedgerExport(const nlohmann::ordered_json& document,
                                                const proto::PublicKey& challenger_pub);

}  // namespace wipeproof
