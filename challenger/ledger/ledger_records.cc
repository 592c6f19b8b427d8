#include "challenger/ledger/ledger_records.h"

#include <capnp/schema.h>

#include <cstdio>
#include <ctime>

#include "common/hex.h"
#include "proto/codec.h"
#include "proto/signing.h"

namespace wipeproof {
namespace {

using proto::ByteView;
using proto::LedgerRecordKind;
using proto::MessageKind;

template <typename E>
std::string EnumName(E value, const char* fallback) {
  auto enumerants = capnp::Schema::from<E>().getEnumerants();
  const auto index = static_cast<uint16_t>(value);
  if (index < enumerants.size()) return enumerants[index].getProto().getName().cStr();
  return std::string(fallback) + "(" + std::to_string(index) + ")";
}


// The envelope kind a record of `kind` must carry; UNKNOWN for roundLog (a bare message).
MessageKind EnvelopeKindOf(LedgerRecordKind kind) {
  switch (kind) {
    case LedgerRecordKind::ORDER:
      return MessageKind::WIPE_ORDER;
    case LedgerRecordKind::FILL_REPORT:
      return MessageKind::FILL_REPORT;
    case LedgerRecordKind::VERDICT:
      return MessageKind::VERDICT;
    case LedgerRecordKind::TRANSCRIPT:
      return MessageKind::TRANSCRIPT_DIGEST;
    case LedgerRecordKind::RECEIPT:
      return MessageKind::RECEIPT;
    default:
      return MessageKind::UNKNOWN;
  }
}

// A record of an envelope kind, decoded: the envelope and its parsed (not verified) payload.
template <typename T>
struct EnvelopeRecord {
  proto::SignedEnvelope envelope;
  proto::Parsed<T> message;
};

template <typename T>
StatusOr<EnvelopeRecord<T>> DecodeEnvelopeRecord(ByteView record) {
  WP_ASSIGN_OR_RETURN(proto::SignedEnvelope envelope, proto::DecodeEnvelope(record));
  constexpr MessageKind kWant = proto::MessageTraits<T>::kKind;
  if (envelope.kind != kWant) {
    return InvalidArgumentError("record is a " + proto::MessageKindName(envelope.kind) + " envelope, want " +
                                proto::MessageKindName(kWant));
  }
  WP_ASSIGN_OR_RETURN(proto::Parsed<T> message, proto::ParseMessage<T>(proto::AsView(envelope.payload)));
  return EnvelopeRecord<T>{std::move(envelope), std::move(message)};
}

Status CheckSession(ByteView record_session, ByteView entry_session) {
  if (record_session.size() == entry_session.size() &&
      std::equal(record_session.begin(), record_session.end(), entry_session.begin())) {
    return Status::Ok();
  }
  return InvalidArgumentError("record belongs to session " + Hex(record_session) + ", the entry names session '" +
                              Hex(entry_session) + "'");
}

template <typename T>
Status CheckEnvelopeRecord(ByteView record, ByteView session_id, const proto::PublicKey* challenger) {
  WP_ASSIGN_OR_RETURN(EnvelopeRecord<T> decoded, DecodeEnvelopeRecord<T>(record));
  WP_RETURN_IF_ERROR(CheckSession(decoded.message.root().getSessionId(), session_id));
  if (challenger != nullptr) {
    WP_RETURN_IF_ERROR(proto::VerifySignature(decoded.envelope, proto::MessageTraits<T>::kKind, *challenger));
  }
  return Status::Ok();
}

nlohmann::ordered_json EnvelopeFields(const proto::SignedEnvelope& envelope) {
  return {{"payload_digest", Hex(proto::Blake2b256(proto::AsView(envelope.payload)))},
          {"signer_key_id", proto::KeyIdHex(envelope.signer_key_id)}};
}

nlohmann::ordered_json Summarize(proto::WipeOrder::Reader order) {
  return {{"node", order.getNodeName().cStr()},
          {"format", EnumName(order.getFormat(), "format")},
          {"chunk_labels", order.getChunkLabels()},
          {"devices", order.getDevices().size()},
          {"round_deadline_us", order.getRoundDeadlineUs()},
          {"fill_deadline_us", order.getFillDeadlineUs()},
          {"profile", order.getProfile().getName().cStr()},
          {"wave", order.getWaveName().cStr()}};
}

nlohmann::ordered_json Summarize(proto::FillReport::Reader report) {
  uint64_t bytes_held = 0;
  for (auto device : report.getDevices()) bytes_held += device.getBytesHeld();
  return {{"devices", report.getDevices().size()}, {"bytes_held", bytes_held}, {"fill_micros", report.getFillMicros()}};
}

nlohmann::ordered_json Summarize(proto::RoundLog::Reader log) {
  uint64_t max_elapsed_us = 0;
  bool deadlines_met = true, all_correct = true;
  for (auto round : log.getRounds()) {
    max_elapsed_us = std::max(max_elapsed_us, round.getElapsedUs());
    deadlines_met = deadlines_met && round.getDeadlineMet();
    all_correct = all_correct && round.getAllCorrect();
  }
  return {{"rounds", log.getRounds().size()},
          {"max_elapsed_us", max_elapsed_us},
          {"deadlines_met", deadlines_met},
          {"all_correct", all_correct}};
}

nlohmann::ordered_json Summarize(proto::Verdict::Reader verdict) {
  return {{"node", verdict.getNodeName().cStr()},
          {"pass", verdict.getPass()},
          {"failure", EnumName(verdict.getFailure().getReason(), "reason")},
          {"bound_stated", verdict.getBoundStated()},
          {"statement", verdict.getStatement().cStr()}};
}

nlohmann::ordered_json Summarize(proto::DeviceFillNotice::Reader notice) {
  return {{"device_index", notice.getDeviceIndex()},
          {"selector", notice.getFill().getSelector().cStr()},
          {"bytes_held", notice.getFill().getBytesHeld()},
          {"fill_micros", notice.getFill().getFillMicros()}};
}

nlohmann::ordered_json Summarize(proto::WaveVerdict::Reader verdict) {
  return {{"wave", verdict.getWaveName().cStr()},
          {"members", verdict.getSessionIds().size()},
          {"pass", verdict.getPass()},
          {"complete", verdict.getComplete()},
          {"bound_stated", verdict.getBoundStated()},
          {"statement", verdict.getStatement().cStr()}};
}

nlohmann::ordered_json Summarize(proto::TranscriptDigest::Reader transcript) {
  return {{"round_count", transcript.getRoundCount()}, {"digest", Hex(transcript.getDigest())}};
}

nlohmann::ordered_json Summarize(proto::Receipt::Reader receipt) {
  return {{"node", receipt.getNodeName().cStr()},
          {"pass", receipt.getPass()},
          {"ledger_sequence", receipt.getLedgerSequence()},
          {"verdict_digest", Hex(receipt.getVerdictDigest())}};
}

template <typename T>
nlohmann::ordered_json SummarizeEnvelopeRecord(ByteView record) {
  auto decoded = DecodeEnvelopeRecord<T>(record);
  if (!decoded.ok()) return {{"error", decoded.status().message()}};
  nlohmann::ordered_json summary = Summarize(decoded->message.root());
  summary.update(EnvelopeFields(decoded->envelope));
  return summary;
}

}  // namespace

std::string LedgerRecordKindName(LedgerRecordKind kind) { return EnumName(kind, "kind"); }

StatusOr<LedgerRecordKind> ParseLedgerRecordKind(const std::string& name) {
  for (auto kind : {LedgerRecordKind::ORDER, LedgerRecordKind::FILL_REPORT, LedgerRecordKind::ROUND_LOG,
                    LedgerRecordKind::VERDICT, LedgerRecordKind::TRANSCRIPT, LedgerRecordKind::RECEIPT,
                    LedgerRecordKind::DEVICE_FILL_NOTICE, LedgerRecordKind::WAVE_VERDICT}) {
    if (LedgerRecordKindName(kind) == name) return kind;
  }
  return InvalidArgumentError("unknown ledger record kind '" + name + "'");
}

Status CheckLedgerRecord(LedgerRecordKind kind, ByteView record, ByteView session_id,
                         const proto::PublicKey* challenger) {
  Status status;
  switch (kind) {
    case LedgerRecordKind::ORDER:
      status = CheckEnvelopeRecord<proto::WipeOrder>(record, session_id, nullptr);
      break;
    case LedgerRecordKind::FILL_REPORT:
      status = CheckEnvelopeRecord<proto::FillReport>(record, session_id, nullptr);
      break;
    case LedgerRecordKind::DEVICE_FILL_NOTICE:
      status = CheckEnvelopeRecord<proto::DeviceFillNotice>(record, session_id, nullptr);
      break;
    case LedgerRecordKind::WAVE_VERDICT: {
      // A wave's statement belongs to no one session: its entry has no session id.
      if (session_id.size() != 0) {
        status = InvalidArgumentError("a wave verdict is filed under no session");
        break;
      }
      auto decoded = DecodeEnvelopeRecord<proto::WaveVerdict>(record);
      status = decoded.ok() ? Status::Ok() : decoded.status();
      if (status.ok() && challenger != nullptr) {
        status = proto::VerifySignature(decoded->envelope, proto::MessageKind::WAVE_VERDICT, *challenger);
      }
      break;
    }
    case LedgerRecordKind::TRANSCRIPT:
      status = CheckEnvelopeRecord<proto::TranscriptDigest>(record, session_id, nullptr);
      break;
    case LedgerRecordKind::VERDICT:
      status = CheckEnvelopeRecord<proto::Verdict>(record, session_id, challenger);
      break;
    case LedgerRecordKind::RECEIPT:
      status = CheckEnvelopeRecord<proto::Receipt>(record, session_id, challenger);
      break;
    case LedgerRecordKind::ROUND_LOG: {
      auto log = proto::ParseMessage<proto::RoundLog>(record);
      status = log.ok() ? CheckSession(log->root().getSessionId(), session_id) : log.status();
      break;
    }
    default:
      return InvalidArgumentError("ledger record kind " + LedgerRecordKindName(kind) + " is not recordable");
  }
  return status.WithContext(LedgerRecordKindName(kind) + " record");
}

namespace {

nlohmann::ordered_json SummarizeRecord(LedgerRecordKind kind, ByteView record) {
  switch (kind) {
    case LedgerRecordKind::ORDER:
      return SummarizeEnvelopeRecord<proto::WipeOrder>(record);
    case LedgerRecordKind::FILL_REPORT:
      return SummarizeEnvelopeRecord<proto::FillReport>(record);
    case LedgerRecordKind::DEVICE_FILL_NOTICE:
      return SummarizeEnvelopeRecord<proto::DeviceFillNotice>(record);
    case LedgerRecordKind::WAVE_VERDICT:
      return SummarizeEnvelopeRecord<proto::WaveVerdict>(record);
    case LedgerRecordKind::TRANSCRIPT:
      return SummarizeEnvelopeRecord<proto::TranscriptDigest>(record);
    case LedgerRecordKind::VERDICT:
      return SummarizeEnvelopeRecord<proto::Verdict>(record);
    case LedgerRecordKind::RECEIPT:
      return SummarizeEnvelopeRecord<proto::Receipt>(record);
    case LedgerRecordKind::ROUND_LOG: {
      auto log = proto::ParseMessage<proto::RoundLog>(record);
      if (!log.ok()) return {{"error", log.status().message()}};
      return Summarize(log->root());
    }
    default:
      return {{"error", "unknown record kind " + LedgerRecordKindName(kind)}};
  }
}

// Text fields may hold any bytes (capnp does not check Text for UTF-8) and so may error messages
// (capnp quotes the offending byte of a malformed message); nlohmann's dump() throws on invalid
// UTF-8, which made `ledger show` (SummaryLine) and `ledger export` abort on such a record (found by
// tests/fuzz/fuzz_ledger_record). Invalid bytes become U+FFFD here, once, for every caller.
nlohmann::ordered_json ValidUtf8(const nlohmann::ordered_json& summary) {
  return nlohmann::ordered_json::parse(summary.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

}  // namespace

nlohmann::ordered_json SummarizeLedgerRecord(LedgerRecordKind kind, ByteView record) {
  return ValidUtf8(SummarizeRecord(kind, record));
}

std::string SummaryLine(const nlohmann::ordered_json& summary) {
  std::string line;
  for (const auto& [key, value] : summary.items()) {
    if (key == "payload_digest" || key == "signer_key_id") continue;  // long; in the JSON export
    if (!line.empty()) line += ' ';
    // Strings with spaces are quoted (JSON style) so the line still splits on spaces.
    const bool bare = value.is_string() && value.get<std::string>().find(' ') == std::string::npos;
    line += key + '=' +
            (bare ? value.get<std::string>()
                  : value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
  }
  return line;
}


}  // namespace wipeproof
