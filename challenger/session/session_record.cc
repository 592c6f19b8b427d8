#include "challenger/session/session_record.h"

#include <capnp/message.h>
#include <glog/logging.h>

#include <string>

#include "common/hex.h"
#include "proto/codec.h"

namespace wipeproof {
namespace {


class Appender {
 public:
  Appender(const SessionRecords& r, RecordSink* sink, RecordedSession* out)
      : r_(r), sink_(sink), out_(out), sid_hex_(HexEncode(r.session_id.data(), r.session_id.size())) {}

  // Appends one record; returns its sequence, none when it did not go in.
  std::optional<uint64_t> Append(proto::LedgerRecordKind kind, const proto::Bytes& bytes) {
    auto appended = sink_->Append(kind, proto::AsView(bytes), proto::AsView(r_.session_id.data(), r_.session_id.size()));
    if (!appended.ok()) {
      LOG(ERROR) << "session " << sid_hex_ << ": ledger append failed: " << appended.status().ToString();
      Keep(appended.status());
      return std::nullopt;
    }
    out_->sequences.push_back(*appended);
    return *appended;
  }
  // The first problem is the one reported.
  void Keep(const Status& status) {
    if (out_->ledger.ok()) out_->ledger = status;
  }
  const std::string& sid_hex() const { return sid_hex_; }

 private:
  const SessionRecords& r_;
  RecordSink* sink_;
  RecordedSession* out_;
  std::string sid_hex_;
};

StatusOr<proto::SignedEnvelope> SignReceipt(const SessionRecords& r, uint64_t verdict_sequence,
                                            const proto::KeyPair& challenger) {
  capnp::MallocMessageBuilder message;
  auto receipt = message.initRoot<proto::Receipt>();
  receipt.setSessionId(proto::AsView(r.session_id.data(), r.session_id.size()));
  receipt.setNodeName(r.node_name);
  receipt.setPass(r.pass);
  receipt.setOrderDigest(proto::AsView(r.order_digest.data(), r.order_digest.size()));
  if (r.report_digest) receipt.setReportDigest(proto::AsView(r.report_digest->data(), r.report_digest->size()));
  const proto::Digest verdict_digest = proto::Blake2b256(proto::AsView(r.verdict.payload));
  receipt.setVerdictDigest(proto::AsView(verdict_digest.data(), verdict_digest.size()));
  // Only a transcript that verified under the node key goes into the receipt.
  if (r.transcript &&
      proto::VerifySignature(*r.transcript, proto::MessageKind::TRANSCRIPT_DIGEST, r.node_key).ok()) {
    proto::WriteEnvelope(*r.transcript, receipt.initTranscript());
  }
  receipt.setLedgerSequence(verdict_sequence);
  receipt.setIssuedAtUnixUs(r.issued_at_unix_us);
  return proto::SignMessage(receipt.asReader(), challenger);
}

}  // namespace

RecordedSession RecordSession(const SessionRecords& r, const proto::KeyPair& challenger, RecordSink* sink) {
  RecordedSession out;
  Appender ledger(r, sink, &out);
  for (const proto::SignedEnvelope& notice : r.notices) {
    ledger.Append(proto::LedgerRecordKind::DEVICE_FILL_NOTICE, proto::EncodeEnvelope(notice));
  }
  if (r.report) ledger.Append(proto::LedgerRecordKind::FILL_REPORT, proto::EncodeEnvelope(*r.report));

  auto logs = BuildRoundLogs(r.session_id, *r.rounds, *r.exchanges);
  if (logs.ok()) {
    for (const proto::Bytes& log : *logs) ledger.Append(proto::LedgerRecordKind::ROUND_LOG, log);
  } else {
    // Every logged round was built by the runner, so not expected; the verdict still goes in.
    LOG(ERROR) << "session " << ledger.sid_hex() << ": round log not recorded: " << logs.status().ToString();
    ledger.Keep(logs.status().WithContext("round log"));
  }

  // A superseded pass first, then the transcript its `finish` brought, then the failure.
  uint64_t verdict_sequence =
      ledger.Append(proto::LedgerRecordKind::VERDICT, proto::EncodeEnvelope(r.superseded ? *r.superseded : r.verdict))
          .value_or(0);
  if (r.transcript) ledger.Append(proto::LedgerRecordKind::TRANSCRIPT, proto::EncodeEnvelope(*r.transcript));
  if (r.superseded) {
    verdict_sequence =
        ledger.Append(proto::LedgerRecordKind::VERDICT, proto::EncodeEnvelope(r.verdict)).value_or(verdict_sequence);
  }
  if (out.ledger.ok()) out.verdict_sequence = verdict_sequence;

  auto receipt = SignReceipt(r, verdict_sequence, challenger);
  if (!receipt.ok()) {
    ledger.Keep(receipt.status().WithContext("receipt"));
    return out;
  }
  out.receipt = *receipt;
  ledger.Append(proto::LedgerRecordKind::RECEIPT, proto::EncodeEnvelope(*out.receipt));
  return out;
}

}  // namespace wipeproof
