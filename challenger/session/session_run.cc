#include "challenger/session/session_run.h"

#include <capnp/message.h>
#include <glog/logging.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "challenger/session/session_record.h"
#include "common/hex.h"
#include "proto/codec.h"
#include "proto/label_wire.h"
#include "proto/session_rules.h"

namespace wipeproof {
namespace {

using proto::FailureReason;

// How often (real time) a session waiting for its wave looks at the wave's state again.
constexpr uint64_t kWavePollUs = 1'000;

capnp::Data::Reader DataOf(const uint8_t* data, size_t size) { return capnp::Data::Reader(data, size); }

}  // namespace

void SessionRun::TaskErrors::taskFailed(kj::Exception&& e) {
  if (session != nullptr) session->Fail(FailureFromUnexpected("in an RPC handler", e.getDescription().cStr()));
}

SessionRun::SessionRun(const SessionPlan& plan, const SessionKeys& keys, const SessionEnv& env,
                       const ChallengeSet& challenges, const ExpectedLabels& expected, uint64_t prepare_us)
    : plan_(plan),
      keys_(keys),
      env_(env),
      wave_(env.wave, plan.node_name),
      challenges_(challenges),
      expected_(expected),
      name_("session " + HexEncode(plan.session_id.data(), plan.session_id.size()) + " node " + plan.node_name),
      tasks_(errors_),
      facts_{&plan, proto::WipeOrder::Reader(), {}},
      fills_(facts_, &transcript_),
      devices_(plan.devices.size()) {
  out_.node_name = plan.node_name;
  out_.session_id = plan.session_id;
  out_.prepare_us = prepare_us;
  for (size_t d = 0; d < devices_.size(); ++d) devices_[d].sent.has_holding = plan.devices[d].hold_labels > 0;
}

StatusOr<SessionOutcome> SessionRun::Run(AgentConnector& connector) {
  errors_.session = this;
  WP_ASSIGN_OR_RETURN(out_.order, SignOrder(plan_, keys_));
  WP_ASSIGN_OR_RETURN(auto order, proto::ParseMessage<proto::WipeOrder>(proto::AsView(out_.order.payload)));
  order_.emplace(order);
  facts_.order = order_->root();
  facts_.order_digest = proto::Blake2b256(proto::AsView(out_.order.payload));
  WP_RETURN_IF_ERROR(transcript_.AddOrder(proto::AsView(out_.order.payload)));

  // A ledger without room for the whole session refuses it before any order exists: a session run
  // now could lose its verdict to a full disk.
  WP_RETURN_IF_ERROR(env_.records->CheckRoomForSession().WithContext("no session was started"));
  auto recorded = env_.records->Append(proto::LedgerRecordKind::ORDER, proto::AsView(proto::EncodeEnvelope(out_.order)),
                                       DataOf(plan_.session_id.data(), plan_.session_id.size()));
  if (!recorded.ok()) return recorded.status().WithContext("the ledger refused the order; no session was started");
  out_.ledger_sequences.push_back(*recorded);
  LOG(INFO) << name_ << ": order recorded (ledger #" << *recorded << "), " << plan_.devices.size()
            << " device(s), m=" << plan_.profile.chunk_labels << ", " << plan_.profile.rounds
            << " proof rounds; challenges and expected labels ready (" << out_.prepare_us << " us)";

  // Every member of a wave run sends its order at the same moment, once all are prepared.
  wave_.Ready(true);

  // From here on every failure, expected or not, ends in a signed verdict in the ledger.
  auto agent = connector.Connect();
  try {
    if (!agent.ok()) {
      Fail(SessionFailure::Of(FailureReason::DISCONNECTED, agent.status().message()));
    } else {
      Drive(*agent);
    }
  } catch (const kj::Exception& e) {
    Fail(FailureFromUnexpected("during the fill or the rounds", e.getDescription().cStr()));
  } catch (const std::exception& e) {
    Fail(FailureFromUnexpected("during the fill or the rounds", e.what()));
  }
  if (failure_.failed()) wave_.Failed();
  wave_not_held_ = wave_.Releasing(!failure_.failed());
  try {
    FinishOrAbort(agent.ok() ? &*agent : nullptr);
  } catch (const kj::Exception& e) {
    Fail(FailureFromUnexpected("in finish or abort", e.getDescription().cStr()));
    SupersedeWithFailure();
  } catch (const std::exception& e) {
    Fail(FailureFromUnexpected("in finish or abort", e.what()));
    SupersedeWithFailure();
  }
  if (out_.verdict.payload.empty()) {
    // Not even the minimal verdict could be signed (SignVerdictOrMinimal); nothing to record.
    return InternalError(name_ + ": no verdict could be signed; the order is in the ledger without one");
  }
  Record();
  out_.pass = !failure_.failed();
  out_.failure = failure_;
  LOG(INFO) << name_ << ": " << (out_.pass ? "PASS" : "FAIL") << "; " << out_.summary.statement;
  return std::move(out_);
}

// ---------------------------------------------------------------------------------------------
// The events.

void SessionRun::Drive(proto::ProverAgent::Client& agent) {
  agent_ = &agent;
  sent_.monotonic_us = env_.clock->MonotonicMicros();
  sent_.unix_us = env_.clock->UnixMicros();
  sent_.real = env_.timer->now();
  out_.order_sent_unix_us = sent_.unix_us;
  out_.order_sent_monotonic_us = sent_.monotonic_us;
  next_round_at_ = sent_.real;
  SendRequests(agent);
  for (;;) {
    CheckRealTimeLimits();
    if (failure_.failed()) break;
    MaybeSendRound();
    if (failure_.failed()) break;
    if (!in_flight_ && fills_.report_verified() && fills_.AllNoticed() && ProofDone() && wave_.WaveDone()) break;
    ReportProgress();
    WaitUntil(NextWake());
  }
  LOG(INFO) << name_ << ": " << out_.rounds.size() << " rounds (" << plan_.profile.rounds
            << " proof rounds per device)";
}

// startSession, and deviceFilled for every device at once.
void SessionRun::SendRequests(proto::ProverAgent::Client& agent) {
  auto start = agent.startSessionRequest();
  proto::WriteEnvelope(out_.order, start.initOrder());
  tasks_.add(start.send().then([this](auto&& response) { OnReport(response.getReport()); },
                               [this](kj::Exception&& e) {
                                 report_arrived_ = true;
                                 out_.fill_us = SinceOrderUs();
                                 Fail(FailureFromException(e, FailureReason::ORDER_REFUSED, "startSession"));
                               }));
  for (size_t d = 0; d < plan_.devices.size(); ++d) {
    auto request = agent.deviceFilledRequest();
    request.setSessionId(DataOf(plan_.session_id.data(), plan_.session_id.size()));
    request.setDeviceIndex(static_cast<uint16_t>(d));
    tasks_.add(request.send().then([this, d](auto&& response) { OnNotice(d, response.getNotice()); },
                                   [this, d](kj::Exception&& e) {
                                     // Usually the session ended: startSession says why. Decided there.
                                     fills_.NoticeFailed(d, FailureFromException(e, FailureReason::PROTOCOL_ERROR,
                                                                                 "deviceFilled(" +
                                                                                     plan_.devices[d].selector + ")"));
                                     if (report_arrived_ && !failure_.failed()) Fail(*fills_.notice_failure(d));
                                     Wake();
                                   }));
  }
}

// The next time the loop must look: the wave's poll, the fill's and the round's real-time limits,
// the next holding round's gap.
kj::TimePoint SessionRun::NextWake() const {
  const kj::TimePoint now = env_.timer->now();
  kj::TimePoint wake = now + kWavePollUs * kj::MICROSECONDS;
  if (!report_arrived_) wake = std::min(wake, sent_.real + FillWaitLimitUs(plan_.fill_deadline_us) * kj::MICROSECONDS);
  if (in_flight_) {
    wake = std::min(wake, in_flight_->sent_real + RoundWaitLimitUs(plan_.profile.round_deadline_us) * kj::MICROSECONDS);
  } else if (next_round_at_ > now) {
    wake = std::min(wake, next_round_at_);
  }
  return wake;
}

void SessionRun::OnNotice(size_t d, proto::Envelope::Reader wire) {
  if (failure_.failed()) return;
  const uint64_t fill_us = SinceOrderUs();
  SessionFailure refused = fills_.AcceptNotice(d, wire, fill_us);
  if (refused.failed()) return Fail(std::move(refused));
  devices_[d].sent.noticed = true;
  VLOG(1) << name_ << ": device " << plan_.devices[d].selector << " filled after " << fill_us << " us";
  if (fills_.report_verified() && fills_.AllNoticed()) wave_.Filled(true);
  // The device is challenged in this same turn of the event loop (unless a round is on the wire,
  // whose answer sends the next round at once, with this device in it).
  MaybeSendRound();
  Wake();
}

void SessionRun::OnReport(proto::Envelope::Reader wire) {
  report_arrived_ = true;
  out_.fill_us = SinceOrderUs();
  auto envelope = proto::DecodeEnvelope(wire);
  if (!envelope.ok()) {
    Fail(SessionFailure::Of(FailureReason::PROTOCOL_ERROR, "fill report: " + PeerText(envelope.status().ToString())));
    return;
  }
  out_.report = *envelope;
  SessionFailure refused = fills_.AcceptReport(*envelope, out_.fill_us);
  if (refused.failed()) Fail(std::move(refused));
  LOG(INFO) << name_ << ": fill report after " << out_.fill_us << " us (deadline " << plan_.fill_deadline_us << " us)";
  if (failure_.failed()) return;
  for (size_t d = 0; d < devices_.size(); ++d) {
    if (fills_.notice_failure(d)) return Fail(*fills_.notice_failure(d));
  }
  // Filled for the wave only once every device's notice is in too: a report alone says nothing a
  // round can check on a device whose notice is still to come.
  if (fills_.AllNoticed()) wave_.Filled(true);
  MaybeSendRound();
  Wake();
}

void SessionRun::OnAnswer(proto::RoundAnswer::Reader answer) {
  if (!in_flight_) return;
  const InFlight round = std::move(*in_flight_);
  in_flight_.reset();
  auto received = proto::EncodeCanonical(answer);
  RoundRecord& record = EndRound(round, received.ok() ? *std::move(received) : proto::Bytes());
  const uint64_t deadline = plan_.profile.round_deadline_us;
  record.deadline_met = record.elapsed_us <= deadline;
  if (!failure_.failed()) {
    const bool correct = CheckAnswer(round, answer);
    record.all_correct = correct;
    size_t labels = 0;
    for (const auto& [d, b] : round.parts) labels += challenges_.Indices(d, b).size();
    record.labels_checked = correct ? static_cast<uint32_t>(labels) : 0;
    if (correct && !record.deadline_met) {
      SessionFailure f =
          SessionFailure::Of(FailureReason::LATE_ROUND, "answered in " + std::to_string(record.elapsed_us) +
                                                            " us, deadline " + std::to_string(deadline) + " us");
      f.has_round = true;
      f.round = round.index;
      Fail(std::move(f));
    } else if (correct) {
      for (const auto& [d, b] : round.parts) devices_[d].proof_correct += b < challenges_.proof_batches();
    }
  }
  VLOG(1) << name_ << " round " << round.index << ": " << record.elapsed_us << " us";
  if (failure_.failed()) return Wake();
  if (fills_.report_verified() && fills_.AllNoticed() && ProofDone()) wave_.ProofDone(true);
  // The next round: proof rounds follow at once; holding rounds after a random gap.
  const uint64_t gap_us = plan_.hold_gap_max_us == 0 ? 0 : UniformBelow(plan_.hold_gap_max_us + 1);
  next_round_at_ = env_.timer->now() + gap_us * kj::MICROSECONDS;
  MaybeSendRound();
  Wake();
}

void SessionRun::OnRoundError(const kj::Exception& e) {
  if (!in_flight_) return;
  const InFlight round = std::move(*in_flight_);
  in_flight_.reset();
  EndRound(round, {});
  SessionFailure f = FailureFromException(e, FailureReason::AGENT_ABORTED, "round " + std::to_string(round.index));
  if (f.reason == FailureReason::DISCONNECTED) {
    // Its indices were on the wire: a node that drops the connection when a round asks for labels
    // it does not hold must not get fresh draws by being run again. This failure stands.
    f.text = PeerText(f.text +
                          " (after the round's indices were sent: the node's failed wipe; a retry is a new "
                          "session and does not replace this verdict)",
                      kMaxFailureTextBytes);
  }
  f.has_round = true;
  f.round = round.index;
  Fail(std::move(f));
}

bool SessionRun::CheckAnswer(const InFlight& round, proto::RoundAnswer::Reader answer) {
  auto protocol_error = [this, &round](const std::string& text) {
    SessionFailure f = SessionFailure::Of(FailureReason::PROTOCOL_ERROR, "round answer: " + text);
    f.has_round = true;
    f.round = round.index;
    Fail(std::move(f));
    return false;
  };
  auto sent = proto::ParseMessage<proto::ChallengeRound>(proto::AsView(round.round));
  if (!sent.ok()) return protocol_error("round not logged: " + sent.status().ToString());
  Status fits = proto::CheckAnswerFitsRound(sent->root(), answer);
  if (!fits.ok()) return protocol_error(fits.message());
  Status hashed = transcript_.AddRound(sent->root(), answer);
  if (!hashed.ok()) return protocol_error("transcript: " + PeerText(hashed.message()));
  // The expected labels in the round's order: its parts, each batch's labels in send order.
  std::vector<const uint8_t*> expected;
  for (const auto& [d, b] : round.parts) {
    const uint8_t* batch = expected_.Batch(d, b);
    for (size_t k = 0; k < challenges_.Indices(d, b).size(); ++k) expected.push_back(batch + k * proto::kLabelBytes);
  }
  SessionFailure wrong =
      CompareLabels(facts_, sent->root(), answer.getLabels().begin(), [&](size_t k) { return expected[k]; });
  if (!wrong.failed()) return true;
  Fail(std::move(wrong));
  return false;
}

void SessionRun::MaybeSendRound() {
  if (failure_.failed() || in_flight_ || agent_ == nullptr) return;
  std::vector<DeviceRounds> rounds;
  for (const DeviceRoundState& d : devices_) rounds.push_back(d.sent);
  RoundPlanInput in;
  in.devices = &rounds;
  in.proof_batches = challenges_.proof_batches();
  in.holding_batches = challenges_.batches() - in.proof_batches;
  in.closing = Closing();
  in.wave_done = wave_.WaveDone();
  in.gap_elapsed = env_.timer->now() >= next_round_at_;
  const PlannedRound planned = PlanNextRound(in);
  ApplyPlannedRound(planned, in.proof_batches, &rounds);
  for (size_t d = 0; d < devices_.size(); ++d) devices_[d].sent = rounds[d];
  if (planned.holding_used_up && !holding_used_up_logged_) {
    holding_used_up_logged_ = true;
    LOG(WARNING) << name_
                 << ": holding rounds used up while the node or its wave is still filling or proving; waiting "
                    "without probes (the bound counts only the proof rounds, which follow the last fill)";
  }
  if (!planned.parts.empty()) SendRound(planned);
}

void SessionRun::SendRound(const PlannedRound& planned) {
  InFlight round;
  round.index = out_.rounds_sent++;
  round.proof = planned.proof;
  round.parts = planned.parts;
  capnp::MallocMessageBuilder message;
  auto msg = message.initRoot<proto::ChallengeRound>();
  msg.setSessionId(DataOf(plan_.session_id.data(), plan_.session_id.size()));
  msg.setRoundIndex(round.index);
  auto devices = msg.initDevices(static_cast<unsigned>(round.parts.size()));
  for (size_t i = 0; i < round.parts.size(); ++i) {
    const auto [d, b] = round.parts[i];
    // A batch's indices are read here, just before they are sent, and nowhere earlier.
    const std::vector<uint64_t>& idx = challenges_.Indices(d, b);
    devices[static_cast<unsigned>(i)].setDeviceIndex(static_cast<uint16_t>(d));
    auto list = devices[static_cast<unsigned>(i)].initLabelIndices(static_cast<unsigned>(idx.size()));
    for (size_t k = 0; k < idx.size(); ++k) list.set(static_cast<unsigned>(k), idx[k]);
  }
  auto sent = proto::EncodeCanonical(msg.asReader());
  if (sent.ok()) round.round = *std::move(sent);
  auto request = agent_->roundRequest();
  request.setRound(msg.asReader());
  round.sent_us = env_.clock->MonotonicMicros();
  round.sent_real = env_.timer->now();
  in_flight_ = std::move(round);
  tasks_.add(request.send().then([this](auto&& response) { OnAnswer(response.getAnswer()); },
                                 [this](kj::Exception&& e) { OnRoundError(e); }));
}

void SessionRun::CheckRealTimeLimits() {
  if (failure_.failed()) return;
  const kj::TimePoint now = env_.timer->now();
  if (!report_arrived_ && now - sent_.real > FillWaitLimitUs(plan_.fill_deadline_us) * kj::MICROSECONDS) {
    out_.fill_us = SinceOrderUs();
    Fail(SessionFailure::Of(FailureReason::LATE_FILL,
                            "no fill report within " + std::to_string(FillWaitLimitUs(plan_.fill_deadline_us)) +
                                " us (deadline " + std::to_string(plan_.fill_deadline_us) + " us)"));
    return;
  }
  // Each device's notice within its own fill wait limit, report or not: a node that reports the
  // fill and withholds one notice would otherwise keep the session (and its wave) waiting.
  for (size_t d = 0; d < plan_.devices.size(); ++d) {
    if (fills_.noticed(d)) continue;
    const uint64_t limit = FillWaitLimitUs(std::max(plan_.devices[d].fill_deadline_us, plan_.fill_deadline_us));
    if (now - sent_.real > limit * kj::MICROSECONDS) {
      SessionFailure f =
          SessionFailure::Of(FailureReason::LATE_FILL, "no fill notice of device " + plan_.devices[d].selector +
                                                           " within " + std::to_string(limit) + " us");
      f.device = plan_.devices[d].selector;
      Fail(std::move(f));
      return;
    }
  }
  const uint64_t round_limit = RoundWaitLimitUs(plan_.profile.round_deadline_us);
  if (in_flight_ && now - in_flight_->sent_real > round_limit * kj::MICROSECONDS) {
    const InFlight round = std::move(*in_flight_);
    in_flight_.reset();
    EndRound(round, {});
    SessionFailure f = SessionFailure::Of(FailureReason::LATE_ROUND,
                                          "no answer within " + std::to_string(round_limit) + " us (deadline " +
                                              std::to_string(plan_.profile.round_deadline_us) + " us)");
    f.has_round = true;
    f.round = round.index;
    Fail(std::move(f));
  }
}

RoundRecord& SessionRun::EndRound(const InFlight& round, proto::Bytes answer) {
  RoundRecord record;
  record.round = round.index;
  record.sent_after_order_us = static_cast<uint64_t>(round.sent_us - sent_.monotonic_us);
  record.proof = round.proof;
  record.elapsed_us = static_cast<uint64_t>(env_.clock->MonotonicMicros() - round.sent_us);
  out_.rounds.push_back(record);
  out_.exchanges.push_back({round.round, std::move(answer)});
  return out_.rounds.back();
}

void SessionRun::Fail(SessionFailure failure) {
  if (!failure_.failed()) {
    // INFO, not WARNING: the failure is the verdict's, which wipe and serve print themselves.
    LOG(INFO) << name_ << ": " << failure.Describe();
    failure_ = std::move(failure);
    wave_.Failed();
  }
  Wake();
}

void SessionRun::Wake() {
  if (wake_) {
    wake_->fulfill();
    wake_ = nullptr;
  }
}

// Runs the event loop until `when` (real time) or until a handler calls Wake().
void SessionRun::WaitUntil(kj::TimePoint when) {
  auto paf = kj::newPromiseAndFulfiller<void>();
  wake_ = kj::mv(paf.fulfiller);
  paf.promise.exclusiveJoin(env_.timer->atTime(when)).wait(*env_.wait_scope);
  wake_ = nullptr;
}

// Waits for `promise` at most `limit_us` of real time; nullptr when the time ran out.
template <typename T>
kj::Maybe<T> SessionRun::WaitBounded(kj::Promise<T> promise, uint64_t limit_us) {
  return promise.then([](T&& value) -> kj::Maybe<T> { return kj::mv(value); })
      .exclusiveJoin(env_.timer->afterDelay(limit_us * kj::MICROSECONDS).then([]() -> kj::Maybe<T> { return nullptr; }))
      .wait(*env_.wait_scope);
}

// ---------------------------------------------------------------------------------------------
// Where the session stands.

bool SessionRun::ProofDone() const {
  return std::all_of(devices_.begin(), devices_.end(),
                     [this](const DeviceRoundState& d) { return d.proof_correct >= challenges_.proof_batches(); });
}

// Proof rounds start once this node's report and every notice verified and every member of its
// wave reported filled: the bound then speaks of one moment after the last fill.
bool SessionRun::Closing() const { return fills_.report_verified() && fills_.AllNoticed() && wave_.AllFilled(); }

uint64_t SessionRun::SinceOrderUs() const {
  return static_cast<uint64_t>(env_.clock->MonotonicMicros() - sent_.monotonic_us);
}

void SessionRun::ReportProgress() const {
  if (!env_.progress) return;
  SessionProgress p;
  p.filled = fills_.report_verified() && fills_.AllNoticed();
  p.waited_us = static_cast<uint64_t>((env_.timer->now() - sent_.real) / kj::MICROSECONDS);
  p.fill_deadline_us = plan_.fill_deadline_us;
  p.rounds_answered = static_cast<uint32_t>(out_.rounds.size());
  p.proof_rounds_total = challenges_.proof_batches();
  p.proof_rounds_done = p.proof_rounds_total;
  for (const DeviceRoundState& d : devices_) p.proof_rounds_done = std::min(p.proof_rounds_done, d.sent.proof_sent);
  if (in_flight_ && in_flight_->proof && p.proof_rounds_done > 0) --p.proof_rounds_done;  // sent, not answered
  env_.progress(p);
}

// ---------------------------------------------------------------------------------------------
// The end.

void SessionRun::FinishOrAbort(proto::ProverAgent::Client* agent) {
  SignVerdictOrMinimal();
  if (out_.verdict.payload.empty()) return;
  if (!failure_.failed()) return Finish(*agent);
  // A refused order (startSession threw) leaves the agent holding nothing, so there is nothing to
  // abort: an abort would only make the agent log that it ignored one.
  if (agent == nullptr || failure_.reason == FailureReason::DISCONNECTED ||
      failure_.reason == FailureReason::ORDER_REFUSED) {
    return;
  }
  Abort(*agent);
}

// `finish` with the passing verdict; the transcript it returns must be the challenger's own.
void SessionRun::Finish(proto::ProverAgent::Client& agent) {
  auto request = agent.finishRequest();
  proto::WriteEnvelope(out_.verdict, request.initVerdict());
  try {
    auto response = WaitBounded(request.send(), env_.finish_timeout_us);
    KJ_IF_MAYBE (r, response) {
      auto envelope = proto::DecodeEnvelope(r->getTranscript());
      auto mine = transcript_.Finish();
      if (!envelope.ok()) {
        Fail(SessionFailure::Of(FailureReason::PROTOCOL_ERROR, "transcript: " + PeerText(envelope.status().ToString())));
      } else if (!mine.ok()) {
        Fail(SessionFailure::Of(FailureReason::INTERNAL, "transcript: " + mine.status().ToString()));
      } else {
        out_.transcript = *envelope;
        TranscriptCheck check = CheckTranscript(*envelope, facts_, *mine, static_cast<uint32_t>(out_.rounds.size()),
                                                proto::Blake2b256(proto::AsView(out_.verdict.payload)));
        transcript_recordable_ = check.recordable;
        if (check.failure.failed()) Fail(std::move(check.failure));
      }
    } else {
      Fail(SessionFailure::Of(FailureReason::AGENT_ABORTED,
                              "finish: no transcript within " + std::to_string(env_.finish_timeout_us) + " us"));
    }
  } catch (const kj::Exception& e) {
    Fail(FailureFromException(e, FailureReason::AGENT_ABORTED, "finish"));
  }
  // The pass sent in `finish` is superseded by a failing verdict; both are recorded.
  if (failure_.failed()) SupersedeWithFailure();
}

void SessionRun::Abort(proto::ProverAgent::Client& agent) {
  auto request = agent.abortRequest();
  request.setSessionId(DataOf(plan_.session_id.data(), plan_.session_id.size()));
  request.setReason("challenger: " + failure_.Describe());
  try {
    auto done = WaitBounded(request.send(), env_.abort_timeout_us);
    if (done == nullptr) LOG(WARNING) << name_ << ": abort not acknowledged in time";
  } catch (const kj::Exception& e) {
    LOG(WARNING) << name_ << ": abort failed: " << PeerText(e.getDescription().cStr());
  }
}

StatusOr<proto::SignedEnvelope> SessionRun::BuildVerdict(const SessionFailure& failure, VerdictSummary* summary) {
  VerdictFacts facts;
  facts.plan = &plan_;
  facts.failure = failure;
  facts.fill_us = out_.fill_us;
  facts.rounds = out_.rounds;
  facts.chunks_checked = ChunksChecked();
  for (size_t d = 0; d < devices_.size(); ++d) {
    const std::optional<proto::DeviceFill::Reader> fill = fills_.FillOf(d);
    facts.bytes_held.push_back(fill ? fill->getBytesHeld() : 0);
    facts.assumptions.device_total_bytes.push_back(fill ? fill->getTotalBytes() : 0);
    facts.filled_after_us.push_back(fills_.noticed_after_us(d));
  }
  facts.assumptions.wave_run.synchronized = wave_.active();
  facts.assumptions.wave_run.nodes_not_held = wave_not_held_;
  facts.assumptions.have_report = fills_.report_verified();
  if (sent_.monotonic_us >= 0) facts.assumptions.session_window_us = SinceOrderUs();
  facts.order_digest = facts_.order_digest;
  facts.report_digest = fills_.report().digest;
  facts.issued_at_unix_us = env_.clock->UnixMicros();
  facts.order_sent_unix_us = sent_.unix_us;
  *summary = SummarizeVerdict(facts);
  return SignVerdict(facts, *summary, keys_.challenger);
}

// N_d from the rounds as sent and answered (proto/session_rules.h: the audit applies the same rule).
std::vector<uint64_t> SessionRun::ChunksChecked() const {
  std::vector<proto::Parsed<proto::ChallengeRound>> sent;
  std::vector<proto::AnsweredRound> answered;
  for (size_t r = 0; r < out_.rounds.size(); ++r) {
    auto round = proto::ParseMessage<proto::ChallengeRound>(proto::AsView(out_.exchanges[r].round));
    if (!round.ok()) break;  // every logged round was built here
    sent.push_back(std::move(round).value());
    answered.push_back({sent.back().root(), out_.rounds[r].all_correct, out_.rounds[r].deadline_met});
  }
  return proto::ChunksChecked(facts_.order, answered);
}

// Signs the verdict for failure_ into out_.verdict, falling back to a minimal `internal` one.
void SessionRun::SignVerdictOrMinimal() {
  auto verdict = BuildVerdict(failure_, &out_.summary);
  if (!verdict.ok()) {
    // Agent text is cut where it enters and the profile bounds the rounds, so this is not expected;
    // should it happen anyway, the session fails as `internal` in a minimal verdict (no rounds, the
    // first failure's description cut short) rather than ending the process.
    LOG(ERROR) << name_ << ": verdict not signed: " << verdict.status().ToString()
               << "; recording a minimal failing verdict";
    const std::string first = failure_.failed() ? PeerText(failure_.Describe()) : "none (the session had passed)";
    failure_ = SessionFailure::Of(FailureReason::INTERNAL, "verdict: " + PeerText(verdict.status().ToString()) +
                                                               "; the session's first failure: " + first);
    out_.rounds.clear();
    out_.exchanges.clear();
    verdict = BuildVerdict(failure_, &out_.summary);
  }
  if (!verdict.ok()) {
    LOG(ERROR) << name_ << ": minimal verdict not signed either: " << verdict.status().ToString();
    return;  // out_.verdict stays as it was (Run reports the session as an error when it is empty)
  }
  out_.verdict = *std::move(verdict);
}

// Re-signs after a failure that came after a verdict was signed; a passing one is kept as
// out_.superseded_verdict.
void SessionRun::SupersedeWithFailure() {
  if (!out_.verdict.payload.empty() && !out_.superseded_verdict && out_.summary.pass) {
    out_.superseded_verdict = out_.verdict;
  }
  SignVerdictOrMinimal();
}

void SessionRun::Record() {
  SessionRecords r;
  r.session_id = plan_.session_id;
  r.node_name = plan_.node_name;
  r.node_key = plan_.node_key;
  r.pass = !failure_.failed();
  r.notices = fills_.Notices();
  if (out_.report && fills_.report().recordable) r.report = out_.report;
  r.rounds = &out_.rounds;
  r.exchanges = &out_.exchanges;
  r.verdict = out_.verdict;
  r.superseded = out_.superseded_verdict;
  if (out_.transcript && transcript_recordable_) r.transcript = out_.transcript;
  r.order_digest = facts_.order_digest;
  r.report_digest = fills_.report().digest;
  r.issued_at_unix_us = env_.clock->UnixMicros();
  RecordedSession recorded = RecordSession(r, keys_.challenger, env_.records);
  out_.ledger = recorded.ledger;
  out_.ledger_sequences.insert(out_.ledger_sequences.end(), recorded.sequences.begin(), recorded.sequences.end());
  out_.verdict_sequence = recorded.verdict_sequence;
  out_.receipt = recorded.receipt;
}

}  // namespace wipeproof
