#include "challenger/ledger/ledger_sessions.h"

#include <capnp/schema.h>

#include <map>
#include <set>

#include "challenger/ledger/ledger_records.h"
#include "challenger/ledger/ledger_verify.h"
#include "common/hex.h"
#include "proto/codec.h"
#include "proto/signing.h"

namespace wipeproof {

namespace {

using Json = nlohmann::ordered_json;

// The payload of a record that is an envelope (order, fill report, verdict), parsed as T.
template <typename T>
StatusOr<proto::Parsed<T>> ParseEnvelopeRecord(const proto::Bytes& record) {
  WP_ASSIGN_OR_RETURN(proto::SignedEnvelope envelope, proto::DecodeEnvelope(proto::AsView(record)));
  return proto::ParseMessage<T>(proto::AsView(envelope.payload));
}

// "wrongLabel", "lateRound", ... as in wipe.capnp; "reason(N)" for values this build does not know.
std::string ReasonName(proto::FailureReason reason) {
  auto enumerants = capnp::Schema::from<proto::FailureReason>().getEnumerants();
  const auto index = static_cast<uint16_t>(reason);
  if (index < enumerants.size()) return enumerants[index].getProto().getName().cStr();
  return "reason(" + std::to_string(index) + ")";
}

// Adds one verified entry's facts to its session.
Status AddEntry(const VerifiedEntry& entry, LedgerSessionSummary* s) {
  if (s->entries == 0) {
    s->first_sequence = entry.sequence;
    s->first_recorded_at_unix_us = entry.recorded_at_unix_us;
  }
  ++s->entries;
  s->last_sequence = entry.sequence;
  s->last_recorded_at_unix_us = entry.recorded_at_unix_us;
  switch (entry.kind) {
    case proto::LedgerRecordKind::ORDER: {
      WP_ASSIGN_OR_RETURN(auto order, ParseEnvelopeRecord<proto::WipeOrder>(entry.record));
      proto::WipeOrder::Reader o = order.root();
      s->node = o.getNodeName().cStr();
      s->wave = o.getWaveName().cStr();
      s->order_issued_at_unix_us = o.getIssuedAtUnixUs();
      break;
    }
    case proto::LedgerRecordKind::FILL_REPORT: {
      WP_ASSIGN_OR_RETURN(auto report, ParseEnvelopeRecord<proto::FillReport>(entry.record));
      s->fill_report_signed_at_unix_us = report.root().getFinishedAtUnixUs();
      break;
    }
    case proto::LedgerRecordKind::VERDICT: {
      WP_ASSIGN_OR_RETURN(auto verdict, ParseEnvelopeRecord<proto::Verdict>(entry.record));
      proto::Verdict::Reader v = verdict.root();
      if (s->node.empty()) s->node = v.getNodeName().cStr();
      s->pass = v.getPass();
      s->failure_reason = ReasonName(v.getFailure().getReason());
      s->failure_text = v.getFailure().getText().cStr();
      // As challenger/fleet/outcome_report.h IsBusyRefusal: the agent's typed refusal (a failed wipe).
      const bool busy = !s->pass && v.getFailure().getReason() == proto::FailureReason::NODE_BUSY;
      s->outcome = s->pass ? "pass" : (busy ? "busy" : "fail");
      s->bound_stated = v.getBoundStated();
      s->bound_bytes = v.getTotalUnwipedBoundBytes();
      s->confidence = v.getConfidence();
      s->statement = v.getStatement().cStr();
      s->fill_us = v.getFillMicros();
      s->rounds = v.getRounds().size();
      s->verdict_issued_at_unix_us = v.getIssuedAtUnixUs();
      s->verdict_sequence = entry.sequence;
      break;
    }
    default:
      break;
  }
  return Status::Ok();
}

}  // namespace

StatusOr<LedgerSessions> ReadLedgerSessions(const Ledger& ledger, const proto::PublicKey& challenger_pub) {
  LedgerSessions out;
  WP_ASSIGN_OR_RETURN(out.head, ledger.Verify(challenger_pub));
  std::map<proto::Bytes, size_t> index;
  // Rows up to the verified head only (a row appended meanwhile is left for the next look).
  Status walked = ledger.ForEachRow(std::nullopt, [&](const LedgerRow& row) -> Status {
    if (row.sequence >= out.head.entry_count || row.session_id.empty()) return Status::Ok();
    WP_ASSIGN_OR_RETURN(VerifiedEntry entry, VerifyLedgerRow(row, challenger_pub));
    auto [it, added] = index.emplace(entry.session_id, out.sessions.size());
    if (added) {
      out.sessions.emplace_back();
      out.sessions.back().session_id = entry.session_id;
    }
    return AddEntry(entry, &out.sessions[it->second]).WithContext("ledger entry " + std::to_string(entry.sequence));
  });
  if (!walked.ok()) return walked.WithContext("reading the ledger's sessions");
  return out;
}

StatusOr<std::vector<proto::Bytes>> VerifiedSessionIds(const Ledger& ledger, const LedgerHead& head) {
  std::set<proto::Bytes> ids;
  WP_RETURN_IF_ERROR(ledger.ForEachRow(std::nullopt, [&](const LedgerRow& row) {
    if (row.sequence < head.entry_count && !row.session_id.empty()) ids.insert(row.session_id);
    return Status::Ok();
  }));
  return std::vector<proto::Bytes>(ids.begin(), ids.end());
}

std::vector<SessionInSeveralLedgers> FindSessionsInSeveralLedgers(
    const std::vector<std::pair<std::string, std::vector<proto::Bytes>>>& ledgers) {
  std::map<proto::Bytes, std::vector<size_t>> seen;  // session id -> indexes of the ledgers holding it
  for (size_t i = 0; i < ledgers.size(); ++i) {
    for (const proto::Bytes& id : ledgers[i].second) {
      std::vector<size_t>& where = seen[id];
      if (where.empty() || where.back() != i) where.push_back(i);
    }
  }
  std::vector<SessionInSeveralLedgers> out;
  for (const auto& [id, where] : seen) {
    if (where.size() < 2) continue;
    SessionInSeveralLedgers d;
    d.session_id = id;
    for (size_t i : where) d.ledgers.push_back(ledgers[i].first);
    out.push_back(std::move(d));
  }
  return out;
}

std::string DescribeSessionInSeveralLedgers(const SessionInSeveralLedgers& d) {
  std::string where;
  for (size_t i = 0; i < d.ledgers.size(); ++i) {
    where += (i == 0 ? "" : (i + 1 == d.ledgers.size() ? " and " : ", ")) + d.ledgers[i];
  }
  return "session " + HexEncode(d.session_id.data(), d.session_id.size()) + " is recorded in " + where +
         ": a session is recorded by one challenger only (copied or replayed?)";
}

Json RfcTimeOrNull(int64_t unix_us) { return unix_us == 0 ? Json() : Json(FormatUnixMicrosUtc(unix_us)); }
Json UnixMicrosOrNull(int64_t unix_us) { return unix_us == 0 ? Json() : Json(unix_us); }

Json LedgerSessionJson(const LedgerSessionSummary& s) {
  const bool verdict = s.verdict_sequence.has_value();
  Json j;
  j["session_id"] = HexEncode(s.session_id.data(), s.session_id.size());
  j["node"] = s.node;
  j["wave"] = s.wave.empty() ? Json() : Json(s.wave);
  j["outcome"] = s.outcome;
  j["pass"] = s.pass;
  j["failure"] = verdict ? Json{{"reason", s.failure_reason}, {"text", s.failure_text}} : Json();
  j["bound_stated"] = s.bound_stated;
  j["bound_bytes"] = s.bound_stated ? Json(s.bound_bytes) : Json();
  j["confidence"] = s.confidence;
  j["statement"] = s.statement;
  j["fill_us"] = s.fill_us;
  j["rounds"] = s.rounds;
  Json times;
  times["order_issued"] = RfcTimeOrNull(s.order_issued_at_unix_us);
  times["order_issued_unix_us"] = UnixMicrosOrNull(s.order_issued_at_unix_us);
  times["fill_report_signed"] = RfcTimeOrNull(s.fill_report_signed_at_unix_us);
  times["fill_report_signed_unix_us"] = UnixMicrosOrNull(s.fill_report_signed_at_unix_us);
  times["verdict_issued"] = RfcTimeOrNull(s.verdict_issued_at_unix_us);
  times["verdict_issued_unix_us"] = UnixMicrosOrNull(s.verdict_issued_at_unix_us);
  j["times"] = std::move(times);
  Json ledger;
  ledger["first_sequence"] = s.first_sequence;
  ledger["last_sequence"] = s.last_sequence;
  ledger["entries"] = s.entries;
  ledger["verdict_sequence"] = verdict ? Json(*s.verdict_sequence) : Json();
  ledger["first_recorded"] = RfcTimeOrNull(s.first_recorded_at_unix_us);
  ledger["first_recorded_unix_us"] = UnixMicrosOrNull(s.first_recorded_at_unix_us);
  ledger["last_recorded"] = RfcTimeOrNull(s.last_recorded_at_unix_us);
  ledger["last_recorded_unix_us"] = UnixMicrosOrNull(s.last_recorded_at_unix_us);
  j["ledger"] = std::move(ledger);
  return j;
}

}  // namespace wipeproof
