#include "challenger/session/session_runner.h"

#include <capnp/message.h>
#include <glog/logging.h>

#include <cstring>
#include <memory>
#include <utility>

#include "challenger/session/challenges.h"
#include "challenger/session/expected_labels.h"
#include "common/hex.h"
#include "proto/codec.h"
#include "proto/label_wire.h"
#include "proto/rpc_status.h"
#include "proto/session_rules.h"
#include "proto/transcript.h"

namespace wipeproof {

namespace {

using proto::FailureReason;

// How often (real time) a session waiting for its wave looks at the wave's state again.
constexpr uint64_t kWavePollUs = 1'000;

capnp::Data::Reader DataOf(const uint8_t* data, size_t size) { return capnp::Data::Reader(data, size); }

template <size_t N>
bool SameBytes(capnp::Data::Reader data, const std::array<uint8_t, N>& want) {
  return data.size() == N && std::memcmp(data.begin(), want.data(), N) == 0;
}

// Hex of bytes the agent sent (a digest that should be 32 bytes may be anything).
std::string HexOf(capnp::Data::Reader data) { return PeerHex(data.begin(), data.size()); }


// How an RPC failure of `call` maps to a session failure (see session_runner.h). The description
// is the agent's (or its RPC stack's) text: cut to kMaxPeerTextBytes here, where it enters.
SessionFailure FailureFromException(const kj::Exception& e, FailureReason remote_reason, const std::string& call) {
  const kj::StringPtr raw = e.getDescription();
  const std::string_view description(raw.begin(), raw.size());
  if (e.getType() == kj::Exception::Type::DISCONNECTED) {
    return SessionFailure::Of(FailureReason::DISCONNECTED, call + ": connection lost: " + PeerText(description));
  }
  if (description.find(proto::kStatusExceptionPrefix) != std::string_view::npos) {
    return SessionFailure::Of(remote_reason, call + ": " + PeerText(proto::ExceptionToStatus(e).ToString()));
  }
  return SessionFailure::Of(FailureReason::PROTOCOL_ERROR, call + ": " + PeerText(description));
}

// An unexpected exception inside the runner after the order was recorded (a bug, or data from the
// agent that a check missed): recorded as an `internal` failure in a signed verdict.
SessionFailure FailureFromUnexpected(const char* where, std::string_view what) {
  return SessionFailure::Of(FailureReason::INTERNAL,
                            std::string("challenger: unexpected error ") + where + ": " + PeerText(what));
}

// Arrives at a wave's barriers and reports to it exactly once each, also on early returns.
class WaveGuard {
 public:
  WaveGuard(WaveSync* sync, std::string member) : sync_(sync), member_(std::move(member)) {}
  ~WaveGuard() {
    if (sync_ == nullptr) return;
    Ready(false);
    Releasing(false);
  }
  WaveGuard(const WaveGuard&) = delete;
  WaveGuard& operator=(const WaveGuard&) = delete;

  bool active() const { return sync_ != nullptr; }
  void Ready(bool ok) {
    if (sync_ == nullptr || ready_) return;
    ready_ = true;
    sync_->ArriveReady(member_, ok);
  }
  void Filled(bool ok) {
    if (sync_ == nullptr || filled_) return;
    filled_ = true;
    sync_->ReportFilled(member_, ok);
  }
  void ProofDone(bool ok) {
    if (sync_ == nullptr || proof_done_) return;
    proof_done_ = true;
    sync_->ReportProofDone(member_, ok);
  }
  // Fill and proof reported as failed (once) so the others stop waiting for this member.
  void Failed() {
    Filled(false);
    ProofDone(false);
  }
  bool WaveDone() const { return sync_ == nullptr || sync_->WaveDone(); }
  bool AllFilled() const { return sync_ == nullptr || sync_->AllFilled(); }
  // Returns the members that did not hold labels throughout.
  std::vector<std::string> Releasing(bool held) {
    if (sync_ == nullptr || released_) return {};
    Ready(held);
    released_ = true;
    return sync_->ArriveReleasing(member_, held);
  }

 private:
  WaveSync* sync_;
  std::string member_;
  bool ready_ = false;
  bool filled_ = false;
  bool proof_done_ = false;
  bool released_ = false;
};

// One run of the protocol over prepared challenges; holds what the steps share. Run() drives the
// session as events on the client's kj event loop: the report and every device's fill notice are
// awaited at once, each device is challenged in the turn its notice is verified, and rounds follow
// one another (proof rounds back to back, holding rounds after random gaps) until the session and
// its wave are done.
class Session {
 public:
  Session(const SessionPlan& plan, const SessionKeys& keys, const SessionEnv& env, const ChallengeSet& challenges,
          const ExpectedLabels& expected, uint64_t prepare_us)
      : plan_(plan),
        keys_(keys),
        env_(env),
        wave_(env.wave, plan.node_name),
        challenges_(challenges),
        expected_(expected),
        tasks_(errors_) {
    out_.node_name = plan.node_name;
    out_.session_id = plan.session_id;
    out_.prepare_us = prepare_us;
    sid_hex_ = HexEncode(plan.session_id.data(), plan.session_id.size());
    const size_t n = plan.devices.size();
    notice_at_us_.assign(n, -1);
    notice_failure_.resize(n);
    next_proof_.assign(n, 0);
    next_hold_.assign(n, 0);
    probed_.assign(n, false);
    correct_batches_.resize(n);
    bytes_held_.assign(n, 0);
    device_totals_.assign(n, 0);
    notices_.resize(n);
  }

  StatusOr<SessionOutcome> Run(AgentConnector& connector);

 private:
  // Failures from tasks_ that escaped their own handlers: a challenger bug, recorded as `internal`.
  struct TaskErrors final : kj::TaskSet::ErrorHandler {
    Session* session = nullptr;
    void taskFailed(kj::Exception&& e) override {
      if (session != nullptr) session->Fail(FailureFromUnexpected("in an RPC handler", e.getDescription().cStr()));
    }
  };
  // The round on the wire: which batch of which device it carries, and when it left.
  struct InFlight {
    uint32_t index = 0;
    std::vector<std::pair<size_t, uint32_t>> parts;  // (device, batch), in the round's order
    bool proof = false;                              // proof batches (else holding ones)
    proto::Bytes round;                              // canonical, as sent
    int64_t sent_us = 0;                             // clock
    kj::TimePoint sent_real = kj::origin<kj::TimePoint>();
  };

  void Fail(SessionFailure failure) {
    if (!failure_.failed()) {
      // INFO, not WARNING: the failure is the verdict's, which wipe and serve print themselves.
      LOG(INFO) << "session " << sid_hex_ << " node " << plan_.node_name << ": " << failure.Describe();
      failure_ = std::move(failure);
      wave_.Failed();
    }
    Wake();
  }
  void Wake() {
    if (wake_) {
      wake_->fulfill();
      wake_ = nullptr;
    }
  }
  // Runs the event loop until `when` (real time) or until a handler calls Wake().
  void WaitUntil(kj::TimePoint when) {
    auto paf = kj::newPromiseAndFulfiller<void>();
    wake_ = kj::mv(paf.fulfiller);
    paf.promise.exclusiveJoin(env_.timer->atTime(when)).wait(*env_.wait_scope);
    wake_ = nullptr;
  }
  // Waits for `promise` at most `limit_us` of real time; nullptr when the time ran out.
  template <typename T>
  kj::Maybe<T> WaitBounded(kj::Promise<T> promise, uint64_t limit_us) {
    return promise.then([](T&& value) -> kj::Maybe<T> { return kj::mv(value); })
        .exclusiveJoin(
            env_.timer->afterDelay(limit_us * kj::MICROSECONDS).then([]() -> kj::Maybe<T> { return nullptr; }))
        .wait(*env_.wait_scope);
  }

  void Drive(proto::ProverAgent::Client& agent);
  void OnNotice(size_t d, proto::Envelope::Reader envelope);
  void OnReport(proto::Envelope::Reader envelope);
  void CheckReport(const proto::SignedEnvelope& envelope);
  void OnAnswer(proto::RoundAnswer::Reader answer);
  void OnRoundError(const kj::Exception& e);
  bool CheckAnswer(const InFlight& round, proto::RoundAnswer::Reader answer);
  // Sends the next round if one is due now and none is on the wire.
  void MaybeSendRound();
  bool AllNoticed() const;
  bool ProofDone() const;
  void ReportProgress() const;  // env_.progress, when set
  bool Closing() const;
  bool HoldingDone() const;
  void CheckRealTimeLimits();
  void FinishOrAbort(proto::ProverAgent::Client* agent);
  // Signs the verdict for failure_ into out_.verdict, falling back to a minimal `internal` one.
  void SignVerdictOrMinimal();
  // Re-signs after a failure that came after a verdict was signed; a passing one is kept as
  // out_.superseded_verdict.
  void SupersedeWithFailure();
  void CheckTranscript(const proto::SignedEnvelope& envelope, const proto::SignedEnvelope& verdict);
  StatusOr<proto::SignedEnvelope> BuildVerdict(const SessionFailure& failure, VerdictSummary* summary);
  proto::WipeOrder::Reader order() const { return order_->root(); }
  void Record();
  void Append(proto::LedgerRecordKind kind, const proto::Bytes& bytes, uint64_t* sequence = nullptr);

  const SessionPlan& plan_;
  const SessionKeys& keys_;
  const SessionEnv& env_;
  WaveGuard wave_;
  const ChallengeSet& challenges_;
  const ExpectedLabels& expected_;
  std::string sid_hex_;
  SessionOutcome out_;
  SessionFailure failure_;

  proto::ProverAgent::Client* agent_ = nullptr;
  TaskErrors errors_;
  kj::TaskSet tasks_;
  kj::Own<kj::PromiseFulfiller<void>> wake_;
  int64_t start_us_ = 0;       // clock, when the order was sent
  int64_t start_unix_us_ = 0;  // wall clock, at the same moment (0: never sent)
  kj::TimePoint start_real_ = kj::origin<kj::TimePoint>();
  std::vector<int64_t> notice_at_us_;                          // per device: clock time of its verified notice, -1
  std::vector<std::optional<SessionFailure>> notice_failure_;  // deviceFilled failed (decided at the report)
  std::vector<std::optional<proto::SignedEnvelope>> notices_;  // as received and verified
  std::vector<uint32_t> next_proof_;                           // per device: the next proof batch to send
  std::vector<uint32_t> next_hold_;                            // per device: holding batches sent so far
  std::vector<bool> probed_;                                   // per device: in a round since its notice
  std::vector<std::vector<uint32_t>> correct_batches_;         // per device: batches answered right
  std::optional<InFlight> in_flight_;
  uint32_t next_round_ = 0;
  kj::TimePoint next_round_at_ = kj::origin<kj::TimePoint>();  // real time: no round before
  bool report_arrived_ = false;                                // any answer to startSession (even a refusal)

  proto::TranscriptHasher transcript_;
  std::optional<proto::Held<proto::WipeOrder>> order_;  // as signed: what the session rules read
  proto::Digest order_digest_{};
  std::optional<proto::Digest> report_digest_;
  bool have_report_ = false;  // a report that verified and matched the plan
  // Records the ledger accepts: well-formed and of this session (ledger_records.h). A report or
  // transcript that is neither is described in the failure text instead.
  bool report_recordable_ = false;
  bool transcript_recordable_ = false;
  std::vector<uint64_t> bytes_held_;
  std::vector<std::pair<uint64_t, uint64_t>> report_fills_;  // per device: (labels, bytes) the report says
  std::vector<uint64_t> device_totals_;
  int64_t order_sent_us_ = -1;  // monotonic, when the order went out (the egress window's start)
  bool holding_used_up_logged_ = false;
  std::vector<std::string> wave_not_held_;
};

StatusOr<SessionOutcome> Session::Run(AgentConnector& connector) {
  errors_.session = this;
  WP_ASSIGN_OR_RETURN(out_.order, SignOrder(plan_, keys_));
  WP_ASSIGN_OR_RETURN(auto order, proto::ParseMessage<proto::WipeOrder>(proto::AsView(out_.order.payload)));
  order_.emplace(order);
  order_digest_ = proto::Blake2b256(proto::AsView(out_.order.payload));
  WP_RETURN_IF_ERROR(transcript_.AddOrder(proto::AsView(out_.order.payload)));

  // A ledger without room for the whole session refuses it before any order exists: a session run
  // now could lose its verdict to a full disk.
  WP_RETURN_IF_ERROR(env_.records->CheckRoomForSession().WithContext("no session was started"));
  auto recorded = env_.records->Append(proto::LedgerRecordKind::ORDER, proto::AsView(proto::EncodeEnvelope(out_.order)),
                                       DataOf(plan_.session_id.data(), plan_.session_id.size()));
  if (!recorded.ok()) return recorded.status().WithContext("the ledger refused the order; no session was started");
  out_.ledger_sequences.push_back(*recorded);
  LOG(INFO) << "session " << sid_hex_ << " node " << plan_.node_name << ": order recorded (ledger #" << *recorded
            << "), " << plan_.devices.size() << " device(s), m=" << plan_.profile.chunk_labels << ", "
            << plan_.profile.rounds << " proof rounds; challenges and expected labels ready (" << out_.prepare_us
            << " us)";

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
    return InternalError("session " + sid_hex_ + " node " + plan_.node_name +
                         ": no verdict could be signed; the order is in the ledger without one");
  }
  Record();
  out_.pass = !failure_.failed();
  out_.failure = failure_;
  LOG(INFO) << "session " << sid_hex_ << " node " << plan_.node_name << ": " << (out_.pass ? "PASS" : "FAIL") << "; "
            << out_.summary.statement;
  return std::move(out_);
}

void Session::Drive(proto::ProverAgent::Client& agent) {
  agent_ = &agent;
  start_us_ = env_.clock->MonotonicMicros();
  start_unix_us_ = env_.clock->UnixMicros();
  order_sent_us_ = start_us_;
  out_.order_sent_unix_us = env_.clock->UnixMicros();
  out_.order_sent_monotonic_us = start_us_;
  start_real_ = env_.timer->now();
  next_round_at_ = start_real_;

  auto start = agent.startSessionRequest();
  proto::WriteEnvelope(out_.order, start.initOrder());
  tasks_.add(start.send().then([this](auto&& response) { OnReport(response.getReport()); },
                               [this](kj::Exception&& e) {
                                 report_arrived_ = true;
                                 out_.fill_us = static_cast<uint64_t>(env_.clock->MonotonicMicros() - start_us_);
                                 Fail(FailureFromException(e, FailureReason::ORDER_REFUSED, "startSession"));
                               }));
  for (size_t d = 0; d < plan_.devices.size(); ++d) {
    auto request = agent.deviceFilledRequest();
    request.setSessionId(DataOf(plan_.session_id.data(), plan_.session_id.size()));
    request.setDeviceIndex(static_cast<uint16_t>(d));
    tasks_.add(request.send().then([this, d](auto&& response) { OnNotice(d, response.getNotice()); },
                                   [this, d](kj::Exception&& e) {
                                     // Usually the session ended: startSession says why. Decided there.
                                     notice_failure_[d] =
                                         FailureFromException(e, FailureReason::PROTOCOL_ERROR,
                                                              "deviceFilled(" + plan_.devices[d].selector + ")");
                                     if (report_arrived_ && !failure_.failed()) Fail(*notice_failure_[d]);
                                     Wake();
                                   }));
  }

  for (;;) {
    CheckRealTimeLimits();
    if (failure_.failed()) break;
    MaybeSendRound();
    if (failure_.failed()) break;
    if (!in_flight_ && have_report_ && AllNoticed() && ProofDone() && HoldingDone()) break;
    // Wake for: the next round's time, the fill's and the round's real-time limits, the wave.
    kj::TimePoint wake = env_.timer->now() + kWavePollUs * kj::MICROSECONDS;
    if (!report_arrived_)
      wake = std::min(wake, start_real_ + FillWaitLimitUs(plan_.fill_deadline_us) * kj::MICROSECONDS);
    if (in_flight_) {
      wake =
          std::min(wake, in_flight_->sent_real + RoundWaitLimitUs(plan_.profile.round_deadline_us) * kj::MICROSECONDS);
    } else if (next_round_at_ > env_.timer->now()) {
      wake = std::min(wake, next_round_at_);
    }
    ReportProgress();
    WaitUntil(wake);
  }
  out_.rounds_sent = next_round_;
  LOG(INFO) << "session " << sid_hex_ << " node " << plan_.node_name << ": " << out_.rounds.size() << " rounds ("
            << plan_.profile.rounds << " proof rounds per device)";
}

void Session::ReportProgress() const {
  if (!env_.progress) return;
  SessionProgress p;
  p.filled = have_report_ && AllNoticed();
  p.waited_us = static_cast<uint64_t>((env_.timer->now() - start_real_) / kj::MICROSECONDS);
  p.fill_deadline_us = plan_.fill_deadline_us;
  p.rounds_answered = static_cast<uint32_t>(out_.rounds.size());
  p.proof_rounds_total = challenges_.proof_batches();
  p.proof_rounds_done = p.proof_rounds_total;
  for (uint32_t next : next_proof_) p.proof_rounds_done = std::min(p.proof_rounds_done, next);
  if (in_flight_ && in_flight_->proof && p.proof_rounds_done > 0) --p.proof_rounds_done;  // sent, not answered
  env_.progress(p);
}

void Session::CheckRealTimeLimits() {
  if (failure_.failed()) return;
  const kj::TimePoint now = env_.timer->now();
  if (!report_arrived_ && now - start_real_ > FillWaitLimitUs(plan_.fill_deadline_us) * kj::MICROSECONDS) {
    out_.fill_us = static_cast<uint64_t>(env_.clock->MonotonicMicros() - start_us_);
    Fail(SessionFailure::Of(FailureReason::LATE_FILL,
                            "no fill report within " + std::to_string(FillWaitLimitUs(plan_.fill_deadline_us)) +
                                " us (deadline " + std::to_string(plan_.fill_deadline_us) + " us)"));
    return;
  }
  // Each device's notice within its own fill wait limit, report or not: a node that reports the
  // fill and withholds one notice would otherwise keep the session (and its wave) waiting.
  for (size_t d = 0; d < plan_.devices.size(); ++d) {
    if (notice_at_us_[d] >= 0) continue;
    const uint64_t limit = FillWaitLimitUs(std::max(plan_.devices[d].fill_deadline_us, plan_.fill_deadline_us));
    if (now - start_real_ > limit * kj::MICROSECONDS) {
      SessionFailure f =
          SessionFailure::Of(FailureReason::LATE_FILL, "no fill notice of device " + plan_.devices[d].selector +
                                                           " within " + std::to_string(limit) + " us");
      f.device = plan_.devices[d].selector;
      Fail(std::move(f));
      return;
    }
  }
  if (in_flight_ &&
      now - in_flight_->sent_real > RoundWaitLimitUs(plan_.profile.round_deadline_us) * kj::MICROSECONDS) {
    RoundRecord record;
    record.round = in_flight_->index;
    record.sent_after_order_us = static_cast<uint64_t>(in_flight_->sent_us - start_us_);
    record.proof = in_flight_->proof;
    record.elapsed_us = static_cast<uint64_t>(env_.clock->MonotonicMicros() - in_flight_->sent_us);
    out_.rounds.push_back(record);
    out_.exchanges.push_back({in_flight_->round, {}});
    SessionFailure f =
        SessionFailure::Of(FailureReason::LATE_ROUND,
                           "no answer within " + std::to_string(RoundWaitLimitUs(plan_.profile.round_deadline_us)) +
                               " us (deadline " + std::to_string(plan_.profile.round_deadline_us) + " us)");
    f.has_round = true;
    f.round = in_flight_->index;
    in_flight_.reset();
    Fail(std::move(f));
  }
}

bool Session::AllNoticed() const {
  for (int64_t at : notice_at_us_) {
    if (at < 0) return false;
  }
  return true;
}

bool Session::ProofDone() const {
  for (const std::vector<uint32_t>& batches : correct_batches_) {
    uint32_t proof = 0;
    for (uint32_t b : batches) proof += b < challenges_.proof_batches();
    if (proof < challenges_.proof_batches()) return false;
  }
  return true;
}

// Proof rounds start once this node's report and every notice verified and every member of its
// wave reported filled: the bound then speaks of one moment after the last fill.
bool Session::Closing() const { return have_report_ && AllNoticed() && wave_.AllFilled(); }

// Holding is over once the wave is done: every member reported its fill and its proof rounds.
bool Session::HoldingDone() const { return wave_.WaveDone(); }

void Session::MaybeSendRound() {
  if (failure_.failed() || in_flight_ || agent_ == nullptr) return;
  const uint32_t proof = challenges_.proof_batches();
  const uint32_t holding = challenges_.batches() - proof;
  bool proof_left = false, unprobed = false, any_device = false;
  for (size_t d = 0; d < plan_.devices.size(); ++d) {
    proof_left = proof_left || next_proof_[d] < proof;
    if (notice_at_us_[d] < 0) continue;
    any_device = true;
    unprobed = unprobed || !probed_[d];
  }
  if (!any_device) return;
  const bool closing = Closing();
  const bool proof_round = closing && proof_left;
  if (!proof_round) {
    if (closing && HoldingDone()) return;  // nothing left to do
    // A device is probed in the turn its notice verified; after that, holding rounds wait for
    // their random gap.
    if (!unprobed && env_.timer->now() < next_round_at_) return;
  }

  InFlight round;
  round.index = next_round_++;
  round.proof = proof_round;
  for (size_t d = 0; d < plan_.devices.size(); ++d) {
    if (notice_at_us_[d] < 0) continue;
    if (proof_round) {
      // Every device at full q_d, together: the rounds the bound counts.
      if (next_proof_[d] < proof) round.parts.emplace_back(d, next_proof_[d]);
      continue;
    }
    // A notice round carries only the devices just noticed (the others keep their pool).
    if (unprobed && probed_[d]) continue;
    if (next_hold_[d] < holding && !challenges_.Indices(d, proof + next_hold_[d]).empty()) {
      round.parts.emplace_back(d, proof + next_hold_[d]);
    }
  }
  for (size_t d = 0; d < plan_.devices.size(); ++d) {
    if (notice_at_us_[d] >= 0 && (proof_round || unprobed)) probed_[d] = true;
  }
  if (round.parts.empty()) {
    --next_round_;
    if (!unprobed && !holding_used_up_logged_) {
      holding_used_up_logged_ = true;
      LOG(WARNING) << "session " << sid_hex_ << " node " << plan_.node_name
                   << ": holding rounds used up while the node or its wave is still filling or proving; waiting "
                      "without probes (the bound counts only the proof rounds, which follow the last fill)";
    }
    return;
  }
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
    if (b < proof) {
      next_proof_[d] = b + 1;
    } else {
      next_hold_[d] = b - proof + 1;
    }
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

void Session::OnNotice(size_t d, proto::Envelope::Reader wire) {
  if (failure_.failed()) return;
  const int64_t now = env_.clock->MonotonicMicros();
  const uint64_t fill_us = static_cast<uint64_t>(now - start_us_);
  const PlannedDevice& want = plan_.devices[d];
  auto fail = [&](FailureReason reason, const std::string& text) {
    SessionFailure f = SessionFailure::Of(reason, "fill notice: " + text);
    f.device = want.selector;
    Fail(std::move(f));
  };
  auto envelope = proto::DecodeEnvelope(wire);
  if (!envelope.ok()) return fail(FailureReason::PROTOCOL_ERROR, PeerText(envelope.status().ToString()));
  Status signature = proto::VerifySignature(*envelope, proto::MessageKind::DEVICE_FILL_NOTICE, plan_.node_key);
  if (!signature.ok()) {
    return fail(signature.code() == StatusCode::kPermissionDenied ? FailureReason::BAD_SIGNATURE
                                                                  : FailureReason::PROTOCOL_ERROR,
                PeerText(signature.message()));
  }
  auto parsed = proto::ParseMessage<proto::DeviceFillNotice>(proto::AsView(envelope->payload));
  if (!parsed.ok()) return fail(FailureReason::PROTOCOL_ERROR, PeerText(parsed.status().message()));
  proto::DeviceFillNotice::Reader notice = parsed->root();
  Status fits = proto::CheckNoticeFitsOrder(order(), order_digest_, notice, static_cast<uint16_t>(d));
  if (!fits.ok()) return fail(FailureReason::PROTOCOL_ERROR, fits.message());
  proto::DeviceFill::Reader got = notice.getFill();
  // Short of capacity minus reserve (as planned: rounded down to whole chunks), whatever the reason.
  Status holds = proto::CheckFillHoldsPlan(order().getDevices()[static_cast<unsigned>(d)], got);
  if (!holds.ok()) return fail(FailureReason::SHORT_CAPACITY, holds.message());
  if (fill_us > want.fill_deadline_us) {
    return fail(FailureReason::LATE_FILL, "device filled after " + std::to_string(fill_us) + " us, deadline " +
                                              std::to_string(want.fill_deadline_us) + " us");
  }
  if (notice_at_us_[d] >= 0) return fail(FailureReason::PROTOCOL_ERROR, "a second notice for the device");
  // A notice after the report repeats what the report said of the device (one before it is
  // compared by CheckReport).
  if (report_fills_.size() == plan_.devices.size() &&
      (report_fills_[d].first != got.getLabelCount() || report_fills_[d].second != got.getBytesHeld())) {
    return fail(FailureReason::PROTOCOL_ERROR, "differs from what the fill report said of the device");
  }
  Status hashed = transcript_.AddNotice(static_cast<uint16_t>(d), proto::AsView(envelope->payload));
  if (!hashed.ok()) return fail(FailureReason::INTERNAL, "transcript: " + hashed.ToString());
  notices_[d] = *envelope;
  notice_at_us_[d] = now;
  bytes_held_[d] = got.getBytesHeld();
  device_totals_[d] = got.getTotalBytes();
  VLOG(1) << "session " << sid_hex_ << ": device " << want.selector << " filled after " << fill_us << " us";
  if (have_report_ && AllNoticed()) wave_.Filled(true);
  // The device is challenged in this same turn of the event loop (unless a round is on the wire,
  // whose answer sends the next round at once, with this device in it).
  MaybeSendRound();
  Wake();
}

void Session::OnReport(proto::Envelope::Reader wire) {
  report_arrived_ = true;
  out_.fill_us = static_cast<uint64_t>(env_.clock->MonotonicMicros() - start_us_);
  auto envelope = proto::DecodeEnvelope(wire);
  if (!envelope.ok()) {
    Fail(SessionFailure::Of(FailureReason::PROTOCOL_ERROR, "fill report: " + PeerText(envelope.status().ToString())));
    return;
  }
  out_.report = *envelope;
  CheckReport(*envelope);
  LOG(INFO) << "session " << sid_hex_ << " node " << plan_.node_name << ": fill report after " << out_.fill_us
            << " us (deadline " << plan_.fill_deadline_us << " us)";
  if (failure_.failed()) return;
  for (size_t d = 0; d < plan_.devices.size(); ++d) {
    if (notice_failure_[d]) return Fail(*notice_failure_[d]);
  }
  // Filled for the wave only once every device's notice is in too: a report alone says nothing a
  // round can check on a device whose notice is still to come.
  if (AllNoticed()) wave_.Filled(true);
  MaybeSendRound();
  Wake();
}

void Session::CheckReport(const proto::SignedEnvelope& envelope) {
  if (envelope.kind == proto::MessageKind::FILL_REPORT) {
    auto readable = proto::ParseMessage<proto::FillReport>(proto::AsView(envelope.payload));
    report_recordable_ = readable.ok() && SameBytes(readable->root().getSessionId(), plan_.session_id);
    // The receipt and verdict state the digest of every report the ledger records, verified or not.
    if (report_recordable_) report_digest_ = proto::Blake2b256(proto::AsView(envelope.payload));
  }
  Status signature = proto::VerifySignature(envelope, proto::MessageKind::FILL_REPORT, plan_.node_key);
  if (!signature.ok()) {
    Fail(SessionFailure::Of(signature.code() == StatusCode::kPermissionDenied ? FailureReason::BAD_SIGNATURE
                                                                              : FailureReason::PROTOCOL_ERROR,
                            "fill report: " + PeerText(signature.message())));
    return;
  }
  auto parsed = proto::ParseMessage<proto::FillReport>(proto::AsView(envelope.payload));
  if (!parsed.ok()) {
    Fail(SessionFailure::Of(FailureReason::PROTOCOL_ERROR, "fill report: " + PeerText(parsed.status().message())));
    return;
  }
  report_digest_ = proto::Blake2b256(proto::AsView(envelope.payload));
  proto::FillReport::Reader report = parsed->root();
  auto protocol_error = [this](const std::string& text) {
    Fail(SessionFailure::Of(FailureReason::PROTOCOL_ERROR, "fill report: " + text));
  };
  Status fits = proto::CheckReportFitsOrder(order(), order_digest_, report);
  if (!fits.ok()) return protocol_error(fits.message());
  auto devices = report.getDevices();
  for (unsigned i = 0; i < devices.size(); ++i) {
    proto::DeviceFill::Reader got = devices[i];
    if (bytes_held_[i] == 0) {
      bytes_held_[i] = got.getBytesHeld();
      device_totals_[i] = got.getTotalBytes();
    }
  }
  // Short of capacity minus reserve (as planned: rounded down to whole chunks), whatever the reason.
  for (unsigned i = 0; i < devices.size(); ++i) {
    Status holds = proto::CheckFillHoldsPlan(order().getDevices()[i], devices[i]);
    if (!holds.ok()) {
      SessionFailure f = SessionFailure::Of(FailureReason::SHORT_CAPACITY, holds.message());
      f.device = plan_.devices[i].selector;
      Fail(std::move(f));
      return;
    }
  }
  // The report repeats what each device's notice said (notices still to come are compared on arrival).
  for (unsigned i = 0; i < devices.size(); ++i)
    report_fills_.emplace_back(devices[i].getLabelCount(), devices[i].getBytesHeld());
  for (unsigned i = 0; i < devices.size(); ++i) {
    if (!notices_[i]) continue;  // its notice may still be on the wire; checked by AllNoticed
    auto notice = proto::ParseMessage<proto::DeviceFillNotice>(proto::AsView(notices_[i]->payload));
    if (!notice.ok() || notice->root().getFill().getLabelCount() != devices[i].getLabelCount() ||
        notice->root().getFill().getBytesHeld() != devices[i].getBytesHeld()) {
      return protocol_error("devices[" + std::to_string(i) + "] differs from that device's fill notice");
    }
  }
  have_report_ = true;
  if (out_.fill_us > plan_.fill_deadline_us) {
    Fail(SessionFailure::Of(FailureReason::LATE_FILL, "fill took " + std::to_string(out_.fill_us) + " us, deadline " +
                                                          std::to_string(plan_.fill_deadline_us) + " us"));
    return;
  }
  Status hashed = transcript_.AddReport(proto::AsView(envelope.payload));
  if (!hashed.ok()) Fail(SessionFailure::Of(FailureReason::INTERNAL, "transcript: " + hashed.ToString()));
}

void Session::OnAnswer(proto::RoundAnswer::Reader answer) {
  if (!in_flight_) return;
  InFlight round = std::move(*in_flight_);
  in_flight_.reset();
  const uint64_t deadline = plan_.profile.round_deadline_us;
  RoundRecord record;
  record.round = round.index;
  record.sent_after_order_us = static_cast<uint64_t>(round.sent_us - start_us_);
  record.proof = round.proof;
  record.elapsed_us = static_cast<uint64_t>(env_.clock->MonotonicMicros() - round.sent_us);
  record.deadline_met = record.elapsed_us <= deadline;
  RoundExchange exchange;
  exchange.round = round.round;
  auto received = proto::EncodeCanonical(answer);
  if (received.ok()) exchange.answer = *std::move(received);
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
      for (const auto& [d, b] : round.parts) correct_batches_[d].push_back(b);
    }
  }
  out_.rounds.push_back(record);
  out_.exchanges.push_back(std::move(exchange));
  VLOG(1) << "session " << sid_hex_ << " round " << round.index << ": " << record.elapsed_us << " us";
  if (failure_.failed()) return Wake();
  if (have_report_ && AllNoticed() && ProofDone()) wave_.ProofDone(true);
  // The next round: proof rounds follow at once; holding rounds after a random gap.
  const uint64_t gap_us = plan_.hold_gap_max_us == 0 ? 0 : UniformBelow(plan_.hold_gap_max_us + 1);
  next_round_at_ = env_.timer->now() + gap_us * kj::MICROSECONDS;
  MaybeSendRound();
  Wake();
}

void Session::OnRoundError(const kj::Exception& e) {
  if (!in_flight_) return;
  RoundRecord record;
  record.round = in_flight_->index;
  record.sent_after_order_us = static_cast<uint64_t>(in_flight_->sent_us - start_us_);
  record.proof = in_flight_->proof;
  record.elapsed_us = static_cast<uint64_t>(env_.clock->MonotonicMicros() - in_flight_->sent_us);
  out_.rounds.push_back(record);
  out_.exchanges.push_back({in_flight_->round, {}});
  const std::string call = "round " + std::to_string(in_flight_->index);
  SessionFailure f = FailureFromException(e, FailureReason::AGENT_ABORTED, call);
  if (f.reason == FailureReason::DISCONNECTED) {
    // Its indices were on the wire: a node that drops the connection when a round asks for labels
    // it does not hold must not get fresh draws by being run again. This failure stands.
    f.text = PeerText(f.text +
                           " (after the round's indices were sent: the node's failed wipe; a retry is a new "
                           "session and does not replace this verdict)",
                       kMaxFailureTextBytes);
  }
  f.has_round = true;
  f.round = in_flight_->index;
  in_flight_.reset();
  Fail(std::move(f));
}

bool Session::CheckAnswer(const InFlight& round, proto::RoundAnswer::Reader answer) {
  const uint32_t r = round.index;
  auto protocol_error = [this, r](const std::string& text) {
    SessionFailure f = SessionFailure::Of(FailureReason::PROTOCOL_ERROR, "round answer: " + text);
    f.has_round = true;
    f.round = r;
    Fail(std::move(f));
    return false;
  };
  auto sent = proto::ParseMessage<proto::ChallengeRound>(proto::AsView(round.round));
  if (!sent.ok()) return protocol_error("round not logged: " + sent.status().ToString());
  Status fits = proto::CheckAnswerFitsRound(sent->root(), answer);
  if (!fits.ok()) return protocol_error(fits.message());
  capnp::Data::Reader labels = answer.getLabels();
  Status hashed = transcript_.AddRound(sent->root(), answer);
  if (!hashed.ok()) return protocol_error("transcript: " + PeerText(hashed.message()));

  size_t at = 0;
  for (const auto& [d, b] : round.parts) {
    const std::vector<uint64_t>& idx = challenges_.Indices(d, b);
    const uint8_t* expected = expected_.Batch(d, b);
    for (size_t k = 0; k < idx.size(); ++k, at += proto::kLabelBytes) {
      if (std::memcmp(labels.begin() + at, expected + k * proto::kLabelBytes, proto::kLabelBytes) == 0) continue;
      SessionFailure f = SessionFailure::Of(FailureReason::WRONG_LABEL, "label differs from the expected one");
      f.device = plan_.devices[d].selector;
      f.has_round = true;
      f.round = r;
      f.has_label = true;
      f.label_index = idx[k];
      f.expected.assign(expected + k * proto::kLabelBytes, expected + (k + 1) * proto::kLabelBytes);
      f.received.assign(labels.begin() + at, labels.begin() + at + proto::kLabelBytes);
      Fail(std::move(f));
      return false;
    }
  }
  return true;
}

StatusOr<proto::SignedEnvelope> Session::BuildVerdict(const SessionFailure& failure, VerdictSummary* summary) {
  VerdictFacts facts;
  facts.plan = &plan_;
  facts.failure = failure;
  facts.fill_us = out_.fill_us;
  facts.rounds = out_.rounds;
  // Proof rounds only: the bound speaks of the moment after the last fill, which only they follow.
  std::vector<proto::Parsed<proto::ChallengeRound>> sent;
  std::vector<proto::AnsweredRound> answered;
  for (size_t r = 0; r < out_.rounds.size(); ++r) {
    auto round = proto::ParseMessage<proto::ChallengeRound>(proto::AsView(out_.exchanges[r].round));
    if (!round.ok()) break;  // every logged round was built here
    sent.push_back(std::move(round).value());
    answered.push_back({sent.back().root(), out_.rounds[r].all_correct, out_.rounds[r].deadline_met});
  }
  facts.chunks_checked = proto::ChunksChecked(order(), answered);
  facts.bytes_held = bytes_held_;
  for (int64_t at : notice_at_us_) facts.filled_after_us.push_back(at < 0 ? 0 : static_cast<uint64_t>(at - start_us_));
  facts.assumptions.wave_run.synchronized = wave_.active();
  facts.assumptions.wave_run.nodes_not_held = wave_not_held_;
  facts.assumptions.have_report = have_report_;
  facts.assumptions.device_total_bytes = device_totals_;
  if (order_sent_us_ >= 0) {
    facts.assumptions.session_window_us = static_cast<uint64_t>(env_.clock->MonotonicMicros() - order_sent_us_);
  }
  facts.order_digest = order_digest_;
  facts.report_digest = report_digest_;
  facts.issued_at_unix_us = env_.clock->UnixMicros();
  facts.order_sent_unix_us = start_unix_us_;
  *summary = SummarizeVerdict(facts);
  return SignVerdict(facts, *summary, keys_.challenger);
}

void Session::SignVerdictOrMinimal() {
  auto verdict = BuildVerdict(failure_, &out_.summary);
  if (!verdict.ok()) {
    // Agent text is cut where it enters and the profile bounds the rounds, so this is not expected;
    // should it happen anyway, the session fails as `internal` in a minimal verdict (no rounds, the
    // first failure's description cut short) rather than ending the process.
    LOG(ERROR) << "session " << sid_hex_ << ": verdict not signed: " << verdict.status().ToString()
               << "; recording a minimal failing verdict";
    const std::string first = failure_.failed() ? PeerText(failure_.Describe()) : "none (the session had passed)";
    failure_ = SessionFailure::Of(FailureReason::INTERNAL, "verdict: " + PeerText(verdict.status().ToString()) +
                                                               "; the session's first failure: " + first);
    for (auto& batches : correct_batches_) batches.clear();
    out_.rounds.clear();
    out_.exchanges.clear();
    verdict = BuildVerdict(failure_, &out_.summary);
  }
  if (!verdict.ok()) {
    LOG(ERROR) << "session " << sid_hex_ << ": minimal verdict not signed either: " << verdict.status().ToString();
    return;  // out_.verdict stays as it was (Run reports the session as an error when it is empty)
  }
  out_.verdict = *std::move(verdict);
}

void Session::SupersedeWithFailure() {
  // A verdict already signed (and perhaps sent in `finish`) that says pass is superseded.
  if (!out_.verdict.payload.empty() && !out_.superseded_verdict && out_.summary.pass) {
    out_.superseded_verdict = out_.verdict;
  }
  SignVerdictOrMinimal();
}

void Session::FinishOrAbort(proto::ProverAgent::Client* agent) {
  SignVerdictOrMinimal();
  if (out_.verdict.payload.empty()) return;

  if (!failure_.failed()) {
    auto request = agent->finishRequest();
    proto::WriteEnvelope(out_.verdict, request.initVerdict());
    try {
      auto response = WaitBounded(request.send(), env_.finish_timeout_us);
      KJ_IF_MAYBE (r, response) {
        auto envelope = proto::DecodeEnvelope(r->getTranscript());
        if (envelope.ok()) {
          out_.transcript = *envelope;
          CheckTranscript(*envelope, out_.verdict);
        } else {
          Fail(SessionFailure::Of(FailureReason::PROTOCOL_ERROR,
                                  "transcript: " + PeerText(envelope.status().ToString())));
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
    return;
  }

  // A refused order (startSession threw) leaves the agent holding nothing, so there is nothing to
  // abort: an abort would only make the agent log that it ignored one.
  if (agent == nullptr || failure_.reason == FailureReason::DISCONNECTED ||
      failure_.reason == FailureReason::ORDER_REFUSED) {
    return;
  }
  auto request = agent->abortRequest();
  request.setSessionId(DataOf(plan_.session_id.data(), plan_.session_id.size()));
  request.setReason("challenger: " + failure_.Describe());
  try {
    auto done = WaitBounded(request.send(), env_.abort_timeout_us);
    if (done == nullptr) LOG(WARNING) << "session " << sid_hex_ << ": abort not acknowledged in time";
  } catch (const kj::Exception& e) {
    LOG(WARNING) << "session " << sid_hex_ << ": abort failed: " << PeerText(e.getDescription().cStr());
  }
}

void Session::CheckTranscript(const proto::SignedEnvelope& envelope, const proto::SignedEnvelope& verdict) {
  if (envelope.kind == proto::MessageKind::TRANSCRIPT_DIGEST) {
    auto readable = proto::ParseMessage<proto::TranscriptDigest>(proto::AsView(envelope.payload));
    transcript_recordable_ = readable.ok() && SameBytes(readable->root().getSessionId(), plan_.session_id);
  }
  Status signature = proto::VerifySignature(envelope, proto::MessageKind::TRANSCRIPT_DIGEST, plan_.node_key);
  if (!signature.ok()) {
    Fail(SessionFailure::Of(signature.code() == StatusCode::kPermissionDenied ? FailureReason::BAD_SIGNATURE
                                                                              : FailureReason::PROTOCOL_ERROR,
                            "transcript: " + PeerText(signature.message())));
    return;
  }
  auto parsed = proto::ParseMessage<proto::TranscriptDigest>(proto::AsView(envelope.payload));
  if (!parsed.ok()) {
    Fail(SessionFailure::Of(FailureReason::PROTOCOL_ERROR, "transcript: " + PeerText(parsed.status().message())));
    return;
  }
  proto::TranscriptDigest::Reader t = parsed->root();
  auto mine = transcript_.Finish();
  if (!mine.ok()) {
    Fail(SessionFailure::Of(FailureReason::INTERNAL, "transcript: " + mine.status().ToString()));
    return;
  }
  const proto::Digest verdict_digest = proto::Blake2b256(proto::AsView(verdict.payload));
  auto protocol_error = [this](const std::string& text) {
    Fail(SessionFailure::Of(FailureReason::PROTOCOL_ERROR, "transcript: " + text));
  };
  if (!SameBytes(t.getSessionId(), plan_.session_id)) return protocol_error("session id differs from the order's");
  if (!SameBytes(t.getNodeKeyId(), plan_.node_key_id)) return protocol_error("nodeKeyId is not the node's key");
  if (t.getRoundCount() != out_.rounds.size()) {
    return protocol_error("agent counted " + std::to_string(t.getRoundCount()) + " rounds, challenger " +
                          std::to_string(out_.rounds.size()));
  }
  if (!SameBytes(t.getDigest(), *mine)) {
    return protocol_error("digest mismatch: agent " + HexOf(t.getDigest()) + ", challenger " +
                          HexEncode(mine->data(), mine->size()));
  }
  if (!SameBytes(t.getVerdictDigest(), verdict_digest)) {
    return protocol_error("verdictDigest " + HexOf(t.getVerdictDigest()) + " is not the verdict sent");
  }
}

void Session::Append(proto::LedgerRecordKind kind, const proto::Bytes& bytes, uint64_t* sequence) {
  auto appended =
      env_.records->Append(kind, proto::AsView(bytes), DataOf(plan_.session_id.data(), plan_.session_id.size()));
  if (!appended.ok()) {
    LOG(ERROR) << "session " << sid_hex_ << ": ledger append failed: " << appended.status().ToString();
    if (out_.ledger.ok()) out_.ledger = appended.status();
    return;
  }
  out_.ledger_sequences.push_back(*appended);
  if (sequence != nullptr) *sequence = *appended;
}

void Session::Record() {
  for (const auto& notice : notices_) {
    if (notice) Append(proto::LedgerRecordKind::DEVICE_FILL_NOTICE, proto::EncodeEnvelope(*notice));
  }
  if (out_.report && report_recordable_) {
    Append(proto::LedgerRecordKind::FILL_REPORT, proto::EncodeEnvelope(*out_.report));
  }

  auto logs = BuildRoundLogs(plan_.session_id, out_.rounds, out_.exchanges);
  if (logs.ok()) {
    for (const proto::Bytes& log : *logs) Append(proto::LedgerRecordKind::ROUND_LOG, log);
  } else {
    // Every logged round was built here, so not expected; the verdict still goes in.
    LOG(ERROR) << "session " << sid_hex_ << ": round log not recorded: " << logs.status().ToString();
    if (out_.ledger.ok()) out_.ledger = logs.status().WithContext("round log");
  }

  uint64_t verdict_sequence = 0;
  const bool superseded = out_.superseded_verdict.has_value();
  Append(proto::LedgerRecordKind::VERDICT, proto::EncodeEnvelope(superseded ? *out_.superseded_verdict : out_.verdict),
         &verdict_sequence);
  if (out_.transcript && transcript_recordable_) {
    Append(proto::LedgerRecordKind::TRANSCRIPT, proto::EncodeEnvelope(*out_.transcript));
  }
  if (superseded) Append(proto::LedgerRecordKind::VERDICT, proto::EncodeEnvelope(out_.verdict), &verdict_sequence);
  if (out_.ledger.ok()) out_.verdict_sequence = verdict_sequence;

  capnp::MallocMessageBuilder receipt_message;
  auto receipt = receipt_message.initRoot<proto::Receipt>();
  receipt.setSessionId(DataOf(plan_.session_id.data(), plan_.session_id.size()));
  receipt.setNodeName(plan_.node_name);
  receipt.setPass(!failure_.failed());
  receipt.setOrderDigest(DataOf(order_digest_.data(), order_digest_.size()));
  if (report_digest_) receipt.setReportDigest(DataOf(report_digest_->data(), report_digest_->size()));
  const proto::Digest verdict_digest = proto::Blake2b256(proto::AsView(out_.verdict.payload));
  receipt.setVerdictDigest(DataOf(verdict_digest.data(), verdict_digest.size()));
  // Only a transcript that verified under the node key goes into the receipt.
  if (out_.transcript &&
      proto::VerifySignature(*out_.transcript, proto::MessageKind::TRANSCRIPT_DIGEST, plan_.node_key).ok()) {
    proto::WriteEnvelope(*out_.transcript, receipt.initTranscript());
  }
  receipt.setLedgerSequence(verdict_sequence);
  receipt.setIssuedAtUnixUs(env_.clock->UnixMicros());
  auto signed_receipt = proto::SignMessage(receipt.asReader(), keys_.challenger);
  if (!signed_receipt.ok()) {
    if (out_.ledger.ok()) out_.ledger = signed_receipt.status().WithContext("receipt");
    return;
  }
  out_.receipt = *signed_receipt;
  Append(proto::LedgerRecordKind::RECEIPT, proto::EncodeEnvelope(*out_.receipt));
}

}  // namespace

PreparedSession::PreparedSession() = default;
PreparedSession::~PreparedSession() = default;
PreparedSession::PreparedSession(PreparedSession&&) noexcept = default;
PreparedSession& PreparedSession::operator=(PreparedSession&&) noexcept = default;

uint64_t PreparedSession::ExpectedLabelBytes() const {
  if (!challenges) return 0;
  uint64_t labels = 0;
  for (size_t d = 0; d < challenges->devices(); ++d) {
    for (uint32_t b = 0; b < challenges->batches(); ++b) labels += challenges->Indices(d, b).size();
  }
  return labels * proto::kLabelBytes;
}

PreparedSession PrepareSession(SessionPlan plan, const Clock& clock, int threads, uint64_t test_delay_us,
                               std::function<void(uint64_t done_labels, uint64_t total_labels)> progress) {
  PreparedSession out;
  out.plan = std::move(plan);
  const SessionPlan& p = out.plan;
  const int64_t start = clock.MonotonicMicros();
  std::vector<ChallengeRange> ranges;
  for (const PlannedDevice& d : p.devices)
    ranges.push_back({d.first_label, d.label_count, d.labels_per_round, d.hold_labels});
  auto challenges = GenerateChallenges(ranges, p.profile.rounds, p.holding_batches, p.profile.chunk_labels);
  if (!challenges.ok()) {
    out.status = challenges.status();
    return out;
  }
  out.challenges = std::make_unique<ChallengeSet>(*std::move(challenges));
  ExpectedLabelsSpec spec;
  spec.session = p.LabelSession();
  spec.devices = ranges;
  spec.threads = threads;
  spec.test_delay_us = test_delay_us;
  spec.progress = std::move(progress);
  out.expected = ExpectedLabels::Start(spec, *out.challenges);
  out.status = out.expected->Wait().WithContext("expected labels");
  out.prepare_us = static_cast<uint64_t>(clock.MonotonicMicros() - start);
  return out;
}

SessionRunner::SessionRunner(SessionPlan plan, SessionKeys keys, SessionEnv env)
    : plan_(std::move(plan)), keys_(std::move(keys)), env_(env) {
  CHECK(env_.clock != nullptr && env_.timer != nullptr && env_.wait_scope != nullptr && env_.records != nullptr)
      << "SessionEnv: clock, timer, wait_scope and records are required";
}

SessionRunner::SessionRunner(PreparedSession prepared, SessionKeys keys, SessionEnv env)
    : SessionRunner(prepared.plan, std::move(keys), env) {
  prepared_.emplace(std::move(prepared));
}

SessionRunner::~SessionRunner() = default;

Status SessionRunner::Prepare() {
  if (!prepared_)
    prepared_.emplace(PrepareSession(plan_, *env_.clock, env_.threads, env_.expected_labels_test_delay_us,
                                     env_.expected_labels_progress));
  return prepared_->status;
}

StatusOr<SessionOutcome> SessionRunner::Run(AgentConnector& connector) {
  // RPC failures are handled where they happen; anything escaping is a challenger bug, reported as
  // a Status rather than ending a wave run's thread.
  try {
    Status prepared = Prepare();
    if (!prepared.ok()) {
      // No order exists yet; a wave's other members must not wait for this one.
      if (env_.wave != nullptr) env_.wave->Leave(plan_.node_name);
      return prepared;
    }
    // The order's validity starts when it is signed, after the preparation (which may take tens of
    // seconds at the strongest adversary classes), not when the plan was built.
    plan_.issued_at_unix_us = env_.clock->UnixMicros();
    plan_.expires_at_unix_us = plan_.issued_at_unix_us + static_cast<int64_t>(plan_.profile.order_ttl_us);
    Session session(plan_, keys_, env_, *prepared_->challenges, *prepared_->expected, prepared_->prepare_us);
    return session.Run(connector);
  } catch (const kj::Exception& e) {
    return InternalError(std::string("session runner: ") + e.getDescription().cStr());
  } catch (const std::exception& e) {
    return InternalError(std::string("session runner: ") + e.what());
  }
}

SessionEnv SessionEnvOn(kj::AsyncIoContext& io, const Clock& clock, RecordSink& records, int threads,
                        WaveSync* wave) {
  SessionEnv env;
  env.clock = &clock;
  env.timer = &io.provider->getTimer();
  env.wait_scope = &io.waitScope;
  env.records = &records;
  env.wave = wave;
  env.threads = threads;
  return env;
}

}  // namespace wipeproof
