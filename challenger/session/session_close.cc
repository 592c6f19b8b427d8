#include "challenger/session/session_close.h"

#include <glog/logging.h>

#include <string>
#include <utility>

#include "challenger/session/session_record.h"
#include "proto/codec.h"
#include "proto/session_rules.h"

namespace wipeproof {

using proto::FailureReason;

template <typename T>
kj::Maybe<T> SessionClose::WaitBounded(kj::Promise<T> promise, uint64_t limit_us) {
  return promise.then([](T&& value) -> kj::Maybe<T> { return kj::mv(value); })
      .exclusiveJoin(
          s_.env.timer->afterDelay(limit_us * kj::MICROSECONDS).then([]() -> kj::Maybe<T> { return nullptr; }))
      .wait(*s_.env.wait_scope);
}

void SessionClose::FinishOrAbort() {
  proto::ProverAgent::Client* agent = agent_;
  SignVerdictOrMinimal();
  if (s_.out.verdict.payload.empty()) return;
  if (!s_.failure.failed()) return Finish(*agent);
  // A refused order (startSession threw) leaves the agent holding nothing, so there is nothing to
  // abort: an abort would only make the agent log that it ignored one.
  if (agent == nullptr || s_.failure.reason == FailureReason::DISCONNECTED ||
      s_.failure.reason == FailureReason::ORDER_REFUSED || s_.failure.reason == FailureReason::NODE_BUSY) {
    return;
  }
  Abort(*agent);
}

// `finish` with the passing verdict; the transcript it returns must be the challenger's own.
void SessionClose::Finish(proto::ProverAgent::Client& agent) {
  auto request = agent.finishRequest();
  proto::WriteEnvelope(s_.out.verdict, request.initVerdict());
  try {
    auto response = WaitBounded(request.send(), s_.env.finish_timeout_us);
    KJ_IF_MAYBE (r, response) {
      auto envelope = proto::DecodeEnvelope(r->getTranscript());
      auto mine = s_.transcript.Finish();
      if (!envelope.ok()) {
        s_.Fail(SessionFailure::Of(FailureReason::PROTOCOL_ERROR, "transcript: " + PeerText(envelope.status().ToString())));
      } else if (!mine.ok()) {
        s_.Fail(SessionFailure::Of(FailureReason::INTERNAL, "transcript: " + mine.status().ToString()));
      } else {
        s_.out.transcript = *envelope;
        TranscriptCheck check = CheckTranscript(*envelope, s_.facts, *mine, static_cast<uint32_t>(s_.out.rounds.size()),
                                                proto::Blake2b256(proto::AsView(s_.out.verdict.payload)));
        s_.transcript_recordable = check.recordable;
        if (check.failure.failed()) s_.Fail(std::move(check.failure));
      }
    } else {
      s_.Fail(SessionFailure::Of(FailureReason::AGENT_ABORTED,
                              "finish: no transcript within " + std::to_string(s_.env.finish_timeout_us) + " us"));
    }
  } catch (const kj::Exception& e) {
    s_.Fail(FailureFromException(e, FailureReason::AGENT_ABORTED, "finish"));
  }
  // The pass sent in `finish` is superseded by a failing verdict; both are recorded.
  if (s_.failure.failed()) SupersedeWithFailure();
}

void SessionClose::Abort(proto::ProverAgent::Client& agent) {
  auto request = agent.abortRequest();
  request.setSessionId(proto::AsView(s_.plan.session_id.data(), s_.plan.session_id.size()));
  request.setReason("challenger: " + s_.failure.Describe());
  try {
    auto done = WaitBounded(request.send(), s_.env.abort_timeout_us);
    if (done == nullptr) LOG(WARNING) << s_.name << ": abort not acknowledged in time";
  } catch (const kj::Exception& e) {
    LOG(WARNING) << s_.name << ": abort failed: " << PeerText(e.getDescription().cStr());
  }
}

StatusOr<proto::SignedEnvelope> SessionClose::BuildVerdict(const SessionFailure& failure,
                                                            VerdictSummary* summary) const {
  VerdictFacts facts;
  facts.plan = &s_.plan;
  facts.failure = failure;
  facts.fill_us = s_.out.fill_us;
  facts.rounds = s_.out.rounds;
  facts.chunks_checked = ChunksChecked();
  for (size_t d = 0; d < s_.plan.devices.size(); ++d) {
    const std::optional<proto::DeviceFill::Reader> fill = s_.fills.FillOf(d);
    facts.bytes_held.push_back(fill ? fill->getBytesHeld() : 0);
    facts.assumptions.device_total_bytes.push_back(fill ? fill->getTotalBytes() : 0);
    facts.filled_after_us.push_back(s_.fills.noticed_after_us(d));
  }
  facts.assumptions.wave_run.synchronized = s_.wave.active();
  facts.assumptions.wave_run.nodes_not_held = s_.wave_not_held;
  facts.assumptions.have_report = s_.fills.report_verified();
  facts.assumptions.inventory_signed = s_.inventory_signed;
  if (s_.sent.monotonic_us >= 0) facts.assumptions.session_window_us = s_.SinceOrderUs();
  facts.order_digest = s_.facts.order_digest;
  facts.report_digest = s_.fills.report().digest;
  facts.issued_at_unix_us = s_.env.clock->UnixMicros();
  facts.order_sent_unix_us = s_.sent.unix_us;
  facts.occupancy = s_.occupancy;
  facts.proof_rounds_end_after_order_us = ProofRoundsEndAfterOrderUs(facts.rounds);
  *summary = SummarizeVerdict(facts);
  return SignVerdict(facts, *summary, s_.keys.challenger);
}

// N_d from the rounds as sent and answered (proto/session_rules.h: the audit applies the same rule).
std::vector<uint64_t> SessionClose::ChunksChecked() const {
  std::vector<proto::Parsed<proto::ChallengeRound>> sent;
  std::vector<proto::AnsweredRound> answered;
  for (size_t r = 0; r < s_.out.rounds.size(); ++r) {
    auto round = proto::ParseMessage<proto::ChallengeRound>(proto::AsView(s_.out.exchanges[r].round));
    if (!round.ok()) break;  // every logged round was built here
    sent.push_back(std::move(round).value());
    answered.push_back({sent.back().root(), s_.out.rounds[r].all_correct, s_.out.rounds[r].deadline_met});
  }
  return proto::ChunksChecked(s_.facts.order, answered);
}

// Signs the verdict for s_.failure into s_.out.verdict, falling back to a minimal `internal` one.
void SessionClose::SignVerdictOrMinimal() {
  auto verdict = BuildVerdict(s_.failure, &s_.out.summary);
  if (!verdict.ok()) {
    // Agent text is cut where it enters and the profile bounds the rounds, so this is not expected;
    // should it happen anyway, the session fails as `internal` in a minimal verdict (no rounds, the
    // first failure's description cut short) rather than ending the process.
    LOG(ERROR) << s_.name << ": verdict not signed: " << verdict.status().ToString()
               << "; recording a minimal failing verdict";
    const std::string first = s_.failure.failed() ? PeerText(s_.failure.Describe()) : "none (the session had passed)";
    s_.failure = SessionFailure::Of(FailureReason::INTERNAL, "verdict: " + PeerText(verdict.status().ToString()) +
                                                               "; the session's first failure: " + first);
    s_.out.rounds.clear();
    s_.out.exchanges.clear();
    verdict = BuildVerdict(s_.failure, &s_.out.summary);
  }
  if (!verdict.ok()) {
    LOG(ERROR) << s_.name << ": minimal verdict not signed either: " << verdict.status().ToString();
    return;  // s_.out.verdict stays as it was (Run reports the session as an error when it is empty)
  }
  s_.out.verdict = *std::move(verdict);
}

// Re-signs after a failure that came after a verdict was signed; a passing one is kept as
// s_.out.superseded_verdict.
void SessionClose::SupersedeWithFailure() {
  if (!s_.out.verdict.payload.empty() && !s_.out.superseded_verdict && s_.out.summary.pass) {
    s_.out.superseded_verdict = s_.out.verdict;
  }
  SignVerdictOrMinimal();
}

void SessionClose::Record() {
  SessionRecords r;
  r.session_id = s_.plan.session_id;
  r.node_name = s_.plan.node_name;
  r.node_key = s_.plan.node_key;
  r.pass = !s_.failure.failed();
  r.notices = s_.fills.Notices();
  if (s_.out.report && s_.fills.report().recordable) r.report = s_.out.report;
  r.rounds = &s_.out.rounds;
  r.exchanges = &s_.out.exchanges;
  r.verdict = s_.out.verdict;
  r.superseded = s_.out.superseded_verdict;
  if (s_.out.transcript && s_.transcript_recordable) r.transcript = s_.out.transcript;
  r.order_digest = s_.facts.order_digest;
  r.report_digest = s_.fills.report().digest;
  r.issued_at_unix_us = s_.env.clock->UnixMicros();
  RecordedSession recorded = RecordSession(r, s_.keys.challenger, s_.env.records);
  s_.out.ledger = recorded.ledger;
  s_.out.ledger_sequences.insert(s_.out.ledger_sequences.end(), recorded.sequences.begin(), recorded.sequences.end());
  s_.out.verdict_sequence = recorded.verdict_sequence;
  s_.out.receipt = recorded.receipt;
}

}  // namespace wipeproof
