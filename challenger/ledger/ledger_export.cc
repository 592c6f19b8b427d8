#include "challenger/ledger/ledger_export.h"

#include <string>

#include "challenger/ledger/ledger_records.h"
#include "challenger/ledger/ledger_verify.h"
#include "challenger/ledger/wipe_schema.h"
#include "common/hex.h"
#include "proto/codec.h"
#include "proto/signing.h"

namespace wipeproof {
namespace {

using Json = nlohmann::ordered_json;

constexpr char kChainRule[] =
    "entry n is an Envelope of kind ledgerEntry signed by the challenger key; its LedgerEntry.prevEntryDigest is "
    "BLAKE2b-256 of entry n-1's Envelope bytes (canonical Cap'n Proto), 32 zero bytes for entry 0";


Json HeadJson(const LedgerHead& head) {
  Json out = {{"entry_count", head.entry_count}};
  if (head.entry_count == 0) return out;
  out["sequence"] = head.sequence;
  out["entry_digest"] = Hex(head.digest);
  out["recorded_at_unix_us"] = head.recorded_at_unix_us;
  out["recorded_at"] = FormatUnixMicrosUtc(head.recorded_at_unix_us);
  out["envelope"] = Hex(proto::AsView(head.envelope));
  return out;
}

Json EntryJson(const VerifiedEntry& entry, const proto::Bytes& envelope, bool include_envelope) {
  Json out = {{"sequence", entry.sequence},
              {"kind", LedgerRecordKindName(entry.kind)},
              {"session_id", Hex(proto::AsView(entry.session_id))},
              {"recorded_at_unix_us", entry.recorded_at_unix_us},
              {"recorded_at", FormatUnixMicrosUtc(entry.recorded_at_unix_us)},
              {"record_bytes", entry.record.size()},
              {"record_digest", Hex(proto::Blake2b256(proto::AsView(entry.record)))},
              {"prev_entry_digest", Hex(entry.prev_entry_digest)},
              {"entry_digest", Hex(entry.entry_digest)},
              {"summary", SummarizeLedgerRecord(entry.kind, proto::AsView(entry.record))}};
  if (include_envelope) out["envelope"] = Hex(proto::AsView(envelope));
  return out;
}

// Typed access to a document field; INVALID_ARGUMENT naming the field when absent or mistyped.
template <typename T>
StatusOr<T> Field(const Json& object, const char* name, const std::string& where) {
  if (!object.is_object() || !object.contains(name)) return InvalidArgumentError(where + ": no field '" + name + "'");
  try {
    return object.at(name).get<T>();
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(where + ": field '" + name + "': " + e.what());
  }
}

StatusOr<proto::Bytes> HexField(const Json& object, const char* name, const std::string& where) {
  WP_ASSIGN_OR_RETURN(std::string hex, Field<std::string>(object, name, where));
  auto bytes = HexDecode(hex);
  if (!bytes.ok()) return bytes.status().WithContext(where + ": field '" + name + "'");
  return std::move(bytes).value();
}

StatusOr<proto::PublicKey> KeyField(const Json& object, const char* name, const std::string& where) {
  WP_ASSIGN_OR_RETURN(std::string hex, Field<std::string>(object, name, where));
  proto::PublicKey key{};
  WP_RETURN_IF_ERROR(HexDecodeExact(hex, key.size(), key.data(), (where + ": field '" + name + "'").c_str()));
  return key;
}

// `key`'s listed key id must be its id: a reader trusting the id must get that key.
Status CheckKeyId(const Json& object, const char* id_field, const proto::PublicKey& key, const std::string& where) {
  WP_ASSIGN_OR_RETURN(std::string key_id, Field<std::string>(object, id_field, where));
  const std::string want = proto::KeyIdHex(proto::KeyIdOf(key));
  if (key_id != want) {
    return DataLossError(where + ": field '" + id_field + "' is " + key_id + ", the key listed with it has id " + want +
                         " (the document was edited)");
  }
  return Status::Ok();
}

// Rebuilds the stored row an exported entry describes, so ChainVerifier checks the document's
// fields against the signed envelope exactly as it checks SQLite's columns.
StatusOr<LedgerRow> RowFromEntryJson(const Json& entry, size_t index) {
  const std::string where = "export entries[" + std::to_string(index) + "]";
  LedgerRow row;
  WP_ASSIGN_OR_RETURN(row.sequence, Field<uint64_t>(entry, "sequence", where));
  WP_ASSIGN_OR_RETURN(std::string kind_name, Field<std::string>(entry, "kind", where));
  auto kind = ParseLedgerRecordKind(kind_name);
  row.kind = kind.ok() ? static_cast<int64_t>(*kind) : -1;  // an unknown name fails the column check
  WP_ASSIGN_OR_RETURN(row.session_id, HexField(entry, "session_id", where));
  WP_ASSIGN_OR_RETURN(row.recorded_at_unix_us, Field<int64_t>(entry, "recorded_at_unix_us", where));
  WP_ASSIGN_OR_RETURN(row.entry_digest, HexField(entry, "entry_digest", where));
  WP_ASSIGN_OR_RETURN(row.envelope, HexField(entry, "envelope", where));
  return row;
}

// The fields an exported entry may have; anything else is refused rather than shown unverified.
constexpr const char* kEntryFields[] = {"sequence",     "kind",         "session_id",    "recorded_at_unix_us",
                                        "recorded_at",  "record_bytes", "record_digest", "prev_entry_digest",
                                        "entry_digest", "summary",      "envelope"};

Status CheckEntryFieldNames(const Json& entry, size_t index) {
  const std::string where = "export entries[" + std::to_string(index) + "]";
  if (!entry.is_object()) return InvalidArgumentError(where + ": not an object");
  for (const auto& item : entry.items()) {
    bool known = false;
    for (const char* name : kEntryFields) known = known || item.key() == name;
    if (!known)
      return InvalidArgumentError(where + ": field '" + item.key() + "' is not part of " + kLedgerExportFormat);
  }
  return Status::Ok();
}

// "" when `exported` equals `signed_summary` key by key; else the first difference, for the error.
std::string SummaryDifference(const Json& exported, const Json& signed_summary) {
  if (!exported.is_object()) return "is not an object";
  for (const auto& item : signed_summary.items()) {
    if (!exported.contains(item.key())) return "summary." + item.key() + " is missing";
    if (exported.at(item.key()) != item.value()) {
      return "summary." + item.key() + " is " + exported.at(item.key()).dump() + ", the signed record says " +
             item.value().dump();
    }
  }
  for (const auto& item : exported.items()) {
    if (!signed_summary.contains(item.key())) return "summary." + item.key() + " is not in the signed record";
  }
  return "";
}

// Every field of an exported entry that VerifyLedgerRow does not already compare, recomputed from
// the signed entry. Errors: DATA_LOSS naming the entry and the field.
Status CheckEntryAgainstSigned(const Json& entry, const VerifiedEntry& signed_entry, size_t index) {
  const std::string where =
      "export entries[" + std::to_string(index) + "] (ledger entry " + std::to_string(signed_entry.sequence) + ")";
  auto differs = [&](const char* field, const std::string& what) {
    return DataLossError(where + ": field '" + field + "' " + what + " (the document was edited)");
  };
  WP_ASSIGN_OR_RETURN(std::string recorded_at, Field<std::string>(entry, "recorded_at", where));
  if (recorded_at != FormatUnixMicrosUtc(signed_entry.recorded_at_unix_us)) {
    return differs("recorded_at", "is '" + recorded_at + "', the signed entry says '" +
                                      FormatUnixMicrosUtc(signed_entry.recorded_at_unix_us) + "'");
  }
  WP_ASSIGN_OR_RETURN(uint64_t record_bytes, Field<uint64_t>(entry, "record_bytes", where));
  if (record_bytes != signed_entry.record.size()) {
    return differs("record_bytes", "is " + std::to_string(record_bytes) + ", the signed record has " +
                                       std::to_string(signed_entry.record.size()));
  }
  WP_ASSIGN_OR_RETURN(std::string record_digest, Field<std::string>(entry, "record_digest", where));
  const std::string want_record_digest = Hex(proto::Blake2b256(proto::AsView(signed_entry.record)));
  if (record_digest != want_record_digest) {
    return differs("record_digest", "is " + record_digest + ", the signed record's is " + want_record_digest);
  }
  WP_ASSIGN_OR_RETURN(std::string prev, Field<std::string>(entry, "prev_entry_digest", where));
  if (prev != Hex(signed_entry.prev_entry_digest)) {
    return differs("prev_entry_digest",
                   "is " + prev + ", the signed entry says " + Hex(signed_entry.prev_entry_digest));
  }
  if (!entry.contains("summary")) return InvalidArgumentError(where + ": no field 'summary'");
  const std::string difference = SummaryDifference(
      entry.at("summary"), SummarizeLedgerRecord(signed_entry.kind, proto::AsView(signed_entry.record)));
  if (!difference.empty()) return differs("summary", "differs from the signed record: " + difference);
  return Status::Ok();
}

Status CheckDocumentKey(const Json& document, const proto::PublicKey& challenger_pub) {
  WP_ASSIGN_OR_RETURN(std::string format, Field<std::string>(document, "format", "export"));
  if (format != kLedgerExportFormat) {
    return InvalidArgumentError("export: format '" + format + "', want " + kLedgerExportFormat +
                                (format == "wipeproof-certificate/v1"
                                     ? " (a certificate: check it with ledger audit --certificate)"
                                     : ""));
  }
  WP_ASSIGN_OR_RETURN(std::string key_id, Field<std::string>(document, "challenger_key_id", "export"));
  const std::string given = proto::KeyIdHex(proto::KeyIdOf(challenger_pub));
  if (key_id != given) {
    return PermissionDeniedError("export was made for challenger key " + key_id + ", not key " + given +
                                 " (wrong key given?)");
  }
  // The document's copy of the key is for readers; it must be the key that verifies it.
  if (document.contains("challenger_public_key")) {
    WP_ASSIGN_OR_RETURN(std::string key_hex, Field<std::string>(document, "challenger_public_key", "export"));
    if (key_hex != Hex(challenger_pub)) {
      return DataLossError("export: field 'challenger_public_key' is not the key " + given +
                           " (the document was edited)");
    }
  }
  return Status::Ok();
}

// The document's "wave_filter": {"sequence", "session_ids": [hex]}. Errors: INVALID_ARGUMENT.
StatusOr<WaveEntryFilter> WaveFilterField(const Json& document) {
  const Json& json = document.at("wave_filter");
  const std::string where = "export wave_filter";
  WaveEntryFilter wave;
  WP_ASSIGN_OR_RETURN(wave.sequence, Field<uint64_t>(json, "sequence", where));
  if (!json.contains("session_ids") || !json.at("session_ids").is_array()) {
    return InvalidArgumentError(where + ": no 'session_ids' array");
  }
  for (const Json& id : json.at("session_ids")) {
    if (!id.is_string()) return InvalidArgumentError(where + ": a session id that is not a string");
    proto::Bytes bytes(proto::kSessionIdBytes);
    WP_RETURN_IF_ERROR(HexDecodeExact(id.get<std::string>(), bytes.size(), bytes.data(), "export wave_filter session"));
    wave.session_ids.push_back(std::move(bytes));
  }
  return wave;
}

// The entries `options` admits: a session's, a wave's (its wave verdict and member sessions), or all.
bool Admitted(const VerifiedEntry& entry, const LedgerExportOptions& options) {
  if (options.session_id.has_value()) return entry.session_id == *options.session_id;
  if (!options.wave.has_value()) return true;
  if (entry.session_id.empty()) {
    return entry.sequence == options.wave->sequence && entry.kind == proto::LedgerRecordKind::WAVE_VERDICT;
  }
  for (const proto::Bytes& id : options.wave->session_ids) {
    if (entry.session_id == id) return true;
  }
  return false;
}

Status CheckFilters(const LedgerExportOptions& options) {
  if (options.session_id.has_value() && options.session_id->size() != proto::kSessionIdBytes) {
    return InvalidArgumentError("export: session filter of " + std::to_string(options.session_id->size()) +
                                " bytes, want 16");
  }
  if (!options.wave.has_value()) return Status::Ok();
  if (options.session_id.has_value()) return InvalidArgumentError("export: a session filter and a wave filter");
  for (const proto::Bytes& id : options.wave->session_ids) {
    if (id.size() != proto::kSessionIdBytes) {
      return InvalidArgumentError("export: wave filter with a session of " + std::to_string(id.size()) +
                                  " bytes, want 16");
    }
  }
  return Status::Ok();
}

}  // namespace

Json ExportDocumentJson(const ExportParts& parts, const proto::PublicKey& challenger_pub,
                        const LedgerExportOptions& options, const std::optional<ExportStamp>& stamp) {
  Json document;
  document["format"] = kLedgerExportFormat;
  if (stamp.has_value()) {
    document["ledger"] = stamp->ledger_path;
    document["exported_at_unix_us"] = stamp->exported_at_unix_us;
    document["exported_at"] = FormatUnixMicrosUtc(stamp->exported_at_unix_us);
  }
  document["challenger_key_id"] = proto::KeyIdHex(proto::KeyIdOf(challenger_pub));
  document["challenger_public_key"] = Hex(challenger_pub);
  document["chain_rule"] = kChainRule;
  document["schema_file"] = kWipeSchemaFile;
  document["schema_sha256"] = kWipeSchemaSha256;
  if (options.authority_key.has_value()) {
    document["authority_key_id"] = proto::KeyIdHex(proto::KeyIdOf(*options.authority_key));
    document["authority_public_key"] = Hex(*options.authority_key);
  }
  if (!options.node_keys.empty()) {
    Json nodes = Json::array();
    for (const NodeKey& node : options.node_keys) {
      nodes.push_back({{"name", node.name},
                       {"key_id", proto::KeyIdHex(proto::KeyIdOf(node.public_key))},
                       {"public_key", Hex(node.public_key)}});
    }
    document["nodes"] = std::move(nodes);
  }
  if (!parts.documents.empty()) {
    Json listed = Json::array();
    for (const LedgerDocument& d : parts.documents) {
      Json item = {{"kind", d.kind}, {"digest", Hex(proto::AsView(d.digest))}};
      if (stamp.has_value()) item["recorded_at_unix_us"] = d.recorded_at_unix_us;
      item["text"] = d.body;
      listed.push_back(std::move(item));
    }
    document["documents"] = std::move(listed);
  }
  if (stamp.has_value()) document["verified"] = true;
  document["session_filter"] =
      options.session_id.has_value() ? Json(Hex(proto::AsView(*options.session_id))) : Json(nullptr);
  if (options.wave.has_value()) {
    Json ids = Json::array();
    for (const proto::Bytes& id : options.wave->session_ids) ids.push_back(Hex(proto::AsView(id)));
    document["wave_filter"] = {{"sequence", options.wave->sequence}, {"session_ids", std::move(ids)}};
  }
  document["head"] = HeadJson(parts.head);
  Json entries = Json::array();
  for (const ExportedEntry& e : parts.entries) {
    entries.push_back(EntryJson(e.entry, e.envelope, options.include_envelopes));
  }
  document["entries"] = std::move(entries);
  return document;
}

StatusOr<Json> ExportLedgerJson(const Ledger& ledger, const proto::PublicKey& challenger_pub,
                                const LedgerExportOptions& options, const Clock& clock) {
  WP_RETURN_IF_ERROR(CheckFilters(options));
  WP_ASSIGN_OR_RETURN(proto::KeyId recorded, ledger.RecordedKeyId());
  const proto::KeyId given = proto::KeyIdOf(challenger_pub);
  if (recorded != given) {
    return PermissionDeniedError("ledger " + ledger.path() + " was written by challenger key " +
                                 proto::KeyIdHex(recorded) + ", not key " + proto::KeyIdHex(given) +
                                 " (wrong key given?)");
  }
  ChainVerifier verifier(challenger_pub);
  ExportParts parts;
  // Every row is verified (the chain needs all of them); only the filtered ones are listed.
  WP_RETURN_IF_ERROR(ledger.ForEachRow(std::nullopt, [&](const LedgerRow& row) -> Status {
    WP_ASSIGN_OR_RETURN(VerifiedEntry entry, verifier.Next(row));
    if (Admitted(entry, options)) {
      parts.entries.push_back({std::move(entry), options.include_envelopes ? row.envelope : proto::Bytes()});
    }
    return Status::Ok();
  }));
  WP_RETURN_IF_ERROR(verifier.Finish());
  parts.head = verifier.head();
  WP_ASSIGN_OR_RETURN(parts.documents, ledger.Documents());
  return ExportDocumentJson(parts, challenger_pub, options, ExportStamp{ledger.path(), clock.UnixMicros()});
}

StatusOr<std::vector<NodeKey>> ExportedNodeKeys(const Json& document) {
  std::vector<NodeKey> keys;
  if (!document.is_object() || !document.contains("nodes")) return keys;
  const Json& nodes = document.at("nodes");
  if (!nodes.is_array()) return InvalidArgumentError("export: field 'nodes' is not an array");
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string where = "export nodes[" + std::to_string(i) + "]";
    NodeKey key;
    WP_ASSIGN_OR_RETURN(key.name, Field<std::string>(nodes[i], "name", where));
    WP_ASSIGN_OR_RETURN(key.public_key, KeyField(nodes[i], "public_key", where));
    WP_RETURN_IF_ERROR(CheckKeyId(nodes[i], "key_id", key.public_key, where));
    keys.push_back(std::move(key));
  }
  return keys;
}

StatusOr<std::vector<LedgerDocument>> ExportedDocuments(const Json& document) {
  std::vector<LedgerDocument> out;
  if (!document.is_object() || !document.contains("documents")) return out;
  const Json& documents = document.at("documents");
  if (!documents.is_array()) return InvalidArgumentError("export: field 'documents' is not an array");
  for (size_t i = 0; i < documents.size(); ++i) {
    const std::string where = "export documents[" + std::to_string(i) + "]";
    LedgerDocument d;
    WP_ASSIGN_OR_RETURN(d.kind, Field<std::string>(documents[i], "kind", where));
    WP_ASSIGN_OR_RETURN(d.body, Field<std::string>(documents[i], "text", where));
    WP_ASSIGN_OR_RETURN(std::string digest, Field<std::string>(documents[i], "digest", where));
    d.digest = proto::Blake2b256(proto::ByteView(reinterpret_cast<const uint8_t*>(d.body.data()), d.body.size()));
    if (digest != Hex(proto::AsView(d.digest))) {
      return DataLossError(where + ": digest " + digest + " is not its text's (" + Hex(proto::AsView(d.digest)) + ")");
    }
    out.push_back(std::move(d));
  }
  return out;
}

StatusOr<std::optional<proto::PublicKey>> ExportedAuthorityKey(const Json& document) {
  if (!document.is_object() || !document.contains("authority_public_key")) return std::optional<proto::PublicKey>();
  WP_ASSIGN_OR_RETURN(proto::PublicKey key, KeyField(document, "authority_public_key", "export"));
  WP_RETURN_IF_ERROR(CheckKeyId(document, "authority_key_id", key, "export"));
  return std::optional<proto::PublicKey>(key);
}

StatusOr<LedgerHead> VerifyExportedHead(const Json& document, const proto::PublicKey& challenger_pub) {
  WP_RETURN_IF_ERROR(CheckDocumentKey(document, challenger_pub));
  if (!document.contains("head")) return InvalidArgumentError("export: no field 'head'");
  const Json& head_json = document.at("head");
  LedgerHead head;
  WP_ASSIGN_OR_RETURN(head.entry_count, Field<uint64_t>(head_json, "entry_count", "export head"));
  if (head.entry_count == 0) return head;  // an empty ledger: nothing is signed
  WP_ASSIGN_OR_RETURN(head.sequence, Field<uint64_t>(head_json, "sequence", "export head"));
  WP_ASSIGN_OR_RETURN(head.recorded_at_unix_us, Field<int64_t>(head_json, "recorded_at_unix_us", "export head"));
  WP_ASSIGN_OR_RETURN(proto::Bytes digest, HexField(head_json, "entry_digest", "export head"));
  WP_ASSIGN_OR_RETURN(head.envelope, HexField(head_json, "envelope", "export head"));
  if (head.entry_count != head.sequence + 1) {
    return DataLossError("export head: entry_count " + std::to_string(head.entry_count) + " but sequence " +
                         std::to_string(head.sequence));
  }
  LedgerRow row;
  row.sequence = head.sequence;
  row.envelope = head.envelope;
  row.entry_digest = digest;
  row.recorded_at_unix_us = head.recorded_at_unix_us;
  // Kind and session come from the signed entry itself; copy them so only the stated fields are compared.
  auto envelope = proto::DecodeEnvelope(proto::AsView(head.envelope));
  if (envelope.ok()) {
    auto entry = proto::ParseMessage<proto::LedgerEntry>(proto::AsView(envelope->payload));
    if (entry.ok()) {
      row.kind = static_cast<int64_t>(entry->root().getKind());
      row.session_id.assign(entry->root().getSessionId().begin(), entry->root().getSessionId().end());
    }
  }
  auto verified = VerifyLedgerRow(row, challenger_pub);
  if (!verified.ok()) return DataLossError("export head does not verify: " + verified.status().message());
  head.digest = verified->entry_digest;
  if (head_json.contains("recorded_at")) {
    WP_ASSIGN_OR_RETURN(std::string recorded_at, Field<std::string>(head_json, "recorded_at", "export head"));
    if (recorded_at != FormatUnixMicrosUtc(head.recorded_at_unix_us)) {
      return DataLossError("export head: field 'recorded_at' is '" + recorded_at + "', the signed entry says '" +
                           FormatUnixMicrosUtc(head.recorded_at_unix_us) + "' (the document was edited)");
    }
  }
  return head;
}

StatusOr<ExportVerification> VerifyLedgerExport(const Json& document, const proto::PublicKey& challenger_pub) {
  ExportVerification result;
  WP_ASSIGN_OR_RETURN(result.head, VerifyExportedHead(document, challenger_pub));
  WP_RETURN_IF_ERROR(ExportedAuthorityKey(document).status());
  WP_RETURN_IF_ERROR(ExportedNodeKeys(document).status());
  WP_RETURN_IF_ERROR(ExportedDocuments(document).status());
  const LedgerHead& head = result.head;
  if (!document.contains("entries") || !document.at("entries").is_array()) {
    return InvalidArgumentError("export: no 'entries' array");
  }
  const Json& entries = document.at("entries");
  LedgerExportOptions filter;
  if (document.contains("session_filter") && !document.at("session_filter").is_null()) {
    WP_ASSIGN_OR_RETURN(filter.session_id, HexField(document, "session_filter", "export"));
  }
  if (document.contains("wave_filter")) {
    WP_ASSIGN_OR_RETURN(filter.wave, WaveFilterField(document));
    if (filter.session_id.has_value()) return InvalidArgumentError("export: both a session_filter and a wave_filter");
  }
  const bool filtered = filter.session_id.has_value() || filter.wave.has_value();
  // Unfiltered, the document must list every entry the signed head counts.
  if (!filtered && entries.size() != head.entry_count) {
    return DataLossError("export lists " + std::to_string(entries.size()) + " entries but its signed head counts " +
                         std::to_string(head.entry_count) + " and there is no session filter: entries were removed");
  }
  bool all_envelopes = true;
  for (size_t i = 0; i < entries.size(); ++i) {
    WP_RETURN_IF_ERROR(CheckEntryFieldNames(entries[i], i));
    all_envelopes = all_envelopes && entries[i].contains("envelope");
  }
  if (!filtered && all_envelopes) {
    ChainVerifier verifier(challenger_pub);
    verifier.ExpectHead(head);
    for (size_t i = 0; i < entries.size(); ++i) {
      WP_ASSIGN_OR_RETURN(LedgerRow row, RowFromEntryJson(entries[i], i));
      auto verified = verifier.Next(row);
      if (!verified.ok()) return verified.status().WithContext("export entries[" + std::to_string(i) + "]");
      WP_RETURN_IF_ERROR(CheckEntryAgainstSigned(entries[i], *verified, i));
      result.entries.push_back(std::move(verified).value());
    }
    WP_RETURN_IF_ERROR(verifier.Finish());
    result.verified_entries = entries.size();
    result.whole_chain = true;
    return result;
  }
  // Filtered or without envelopes: every entry that carries its envelope, on its own; the others
  // are counted, since nothing signed binds their fields.
  std::optional<uint64_t> previous;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (!entries[i].contains("envelope")) {
      ++result.unverified_entries;
      continue;
    }
    WP_ASSIGN_OR_RETURN(LedgerRow row, RowFromEntryJson(entries[i], i));
    const std::string where = "export entries[" + std::to_string(i) + "]";
    auto verified = VerifyLedgerRow(row, challenger_pub);
    if (!verified.ok()) return verified.status().WithContext(where);
    if (row.sequence > head.sequence || (previous.has_value() && row.sequence <= *previous)) {
      return DataLossError(where + ": sequence " + std::to_string(row.sequence) +
                           " is out of order or beyond the head " + std::to_string(head.sequence));
    }
    if (filtered && !Admitted(*verified, filter)) {
      return DataLossError(where + ": entry " + std::to_string(row.sequence) + " is not of the filtered " +
                           (filter.session_id.has_value() ? "session" : "wave"));
    }
    // The head entry is signed twice over: the head's envelope and the entry's must be the same.
    if (row.sequence == head.sequence && verified->entry_digest != head.digest) {
      return DataLossError(where + ": entry " + std::to_string(row.sequence) + " is not the signed head's entry");
    }
    WP_RETURN_IF_ERROR(CheckEntryAgainstSigned(entries[i], *verified, i));
    ++result.verified_entries;
    previous = row.sequence;
    result.entries.push_back(std::move(verified).value());
  }
  return result;
}

}  // namespace wipeproof
