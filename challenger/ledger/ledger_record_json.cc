#include "challenger/ledger/ledger_record_json.h"

#include <capnp/compat/json.h>

#include <string>

#include "challenger/ledger/ledger_records.h"
#include "common/hex.h"
#include "proto/codec.h"
#include "proto/signing.h"

namespace wipeproof {
namespace {

using Json = nlohmann::ordered_json;
using proto::ByteView;
using proto::LedgerRecordKind;
using proto::MessageKind;


// Data as lowercase hex. Decoding is not offered (the codec only writes here).
class HexData final : public capnp::JsonCodec::Handler<capnp::Data> {
 public:
  void encode(const capnp::JsonCodec&, capnp::Data::Reader input, capnp::JsonValue::Builder output) const override {
    output.setString(HexEncode(input.begin(), input.size()));
  }
  capnp::Orphan<capnp::Data> decode(const capnp::JsonCodec&, capnp::JsonValue::Reader,
                                    capnp::Orphanage) const override {
    KJ_FAIL_REQUIRE("hex Data is written, never read, here");
  }
};

// Text with invalid UTF-8 replaced by U+FFFD (capnp does not check Text; JSON must be UTF-8).
class Utf8Text final : public capnp::JsonCodec::Handler<capnp::Text> {
 public:
  void encode(const capnp::JsonCodec&, capnp::Text::Reader input, capnp::JsonValue::Builder output) const override {
    const std::string quoted =
        Json(std::string(input.begin(), input.size())).dump(-1, ' ', false, Json::error_handler_t::replace);
    output.setString(Json::parse(quoted).get<std::string>());
  }
  capnp::Orphan<capnp::Text> decode(const capnp::JsonCodec&, capnp::JsonValue::Reader,
                                    capnp::Orphanage) const override {
    KJ_FAIL_REQUIRE("Text is written, never read, here");
  }
};

template <typename T>
StatusOr<Json> MessageToJson(ByteView bytes) {
  WP_ASSIGN_OR_RETURN(proto::Parsed<T> message, proto::ParseMessage<T>(bytes));
  try {
    HexData hex;
    Utf8Text text;
    capnp::JsonCodec codec;
    codec.addTypeHandler(hex);
    codec.addTypeHandler(text);
    kj::String encoded = codec.encode(message.root());
    return Json::parse(encoded.cStr());
  } catch (const kj::Exception& e) {
    return InvalidArgumentError(std::string(proto::MessageTraits<T>::kName) + ": " + e.getDescription().cStr());
  } catch (const std::exception& e) {
    return InvalidArgumentError(std::string(proto::MessageTraits<T>::kName) + ": " + e.what());
  }
}

// {"kind", "signerKeyId", "signature", "payloadDigest", "payloadHex", "payload": {T}}.
template <typename T>
StatusOr<Json> EnvelopeToJson(ByteView bytes) {
  WP_ASSIGN_OR_RETURN(proto::SignedEnvelope envelope, proto::DecodeEnvelope(bytes));
  if (envelope.kind != proto::MessageTraits<T>::kKind) {
    return InvalidArgumentError("a " + proto::MessageKindName(envelope.kind) + " envelope, want " +
                                proto::MessageKindName(proto::MessageTraits<T>::kKind));
  }
  WP_ASSIGN_OR_RETURN(Json payload, MessageToJson<T>(proto::AsView(envelope.payload)));
  Json out;
  out["kind"] = proto::MessageKindName(envelope.kind);
  out["signerKeyId"] = proto::KeyIdHex(envelope.signer_key_id);
  out["signature"] = HexEncode(envelope.signature.data(), envelope.signature.size());
  out["payloadDigest"] = HexEncode(proto::Blake2b256(proto::AsView(envelope.payload)).data(), proto::kDigestBytes);
  out["payloadHex"] = Hex(proto::AsView(envelope.payload));
  out["payload"] = std::move(payload);
  return out;
}

}  // namespace

StatusOr<Json> LedgerRecordToJson(LedgerRecordKind kind, ByteView record) {
  StatusOr<Json> out = InvalidArgumentError("");
  switch (kind) {
    case LedgerRecordKind::ORDER:
      out = EnvelopeToJson<proto::WipeOrder>(record);
      break;
    case LedgerRecordKind::FILL_REPORT:
      out = EnvelopeToJson<proto::FillReport>(record);
      break;
    case LedgerRecordKind::DEVICE_FILL_NOTICE:
      out = EnvelopeToJson<proto::DeviceFillNotice>(record);
      break;
    case LedgerRecordKind::ROUND_LOG:
      out = MessageToJson<proto::RoundLog>(record);
      break;
    case LedgerRecordKind::VERDICT:
      out = EnvelopeToJson<proto::Verdict>(record);
      break;
    case LedgerRecordKind::WAVE_VERDICT:
      out = EnvelopeToJson<proto::WaveVerdict>(record);
      break;
    case LedgerRecordKind::TRANSCRIPT:
      out = EnvelopeToJson<proto::TranscriptDigest>(record);
      break;
    case LedgerRecordKind::RECEIPT:
      out = EnvelopeToJson<proto::Receipt>(record);
      break;
    default:
      return InvalidArgumentError("ledger record kind " + LedgerRecordKindName(kind) + " has no format");
  }
  if (!out.ok()) return out.status().WithContext(LedgerRecordKindName(kind) + " record");
  return out;
}

StatusOr<Json> LedgerEntryToJson(ByteView envelope_bytes) {
  WP_ASSIGN_OR_RETURN(Json entry, EnvelopeToJson<proto::LedgerEntry>(envelope_bytes));
  // Decode the record the entry holds, in place; its bytes stay beside it.
  WP_ASSIGN_OR_RETURN(proto::SignedEnvelope envelope, proto::DecodeEnvelope(envelope_bytes));
  WP_ASSIGN_OR_RETURN(auto parsed, proto::ParseMessage<proto::LedgerEntry>(proto::AsView(envelope.payload)));
  const auto record = parsed.root().getRecord();
  WP_ASSIGN_OR_RETURN(Json decoded,
                      LedgerRecordToJson(parsed.root().getKind(), ByteView(record.begin(), record.size())));
  Json& payload = entry["payload"];
  Json rebuilt;
  for (auto& [key, value] : payload.items()) {
    if (key == "record") {
      rebuilt["recordHex"] = value;
      rebuilt["record"] = decoded;
    } else {
      rebuilt[key] = value;
    }
  }
  payload = std::move(rebuilt);
  entry["entryDigest"] = HexEncode(proto::Blake2b256(envelope_bytes).data(), proto::kDigestBytes);
  return entry;
}

}  // namespace wipeproof
