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
#include "proto/transcript.h"
#include "proto/validate.h"

namespace wipeproof {

namespace {

using proto::FailureReason;

// How often the event loop checks whether the expected labels are ready (AwaitExpectedLabels).
constexpr uint64_t kExpectedLabelsPollUs = 2'000;

capnp::Data::Reader DataOf(const uint8_t* data, size_t size) { return capnp::Data::Reader(data, size); }

template <size_t N>
bool SameBytes(capnp::Data::Reader data, const std::array<uint8_t, N>& want) {
  return data.size() == N && std::memcmp(data.begin(), want.data(), N) == 0;
}

// Hex of bytes the agent sent (a digest that should be 32 bytes may be anything).
std::string HexOf(capnp::Data::Reader data) { return AgentHex(data.begin(), data.size()); }

// Agent text from a capnp Text field.
std::string TextOf(capnp::Text::Reader text) { return AgentText(std::string_view(text.begin(), text.size())); }

// How an RPC failure of `call` maps to a session failure (see session_runner.h). The description
// is the agent's (or its RPC stack's) text: cut to kMaxAgentTextBytes here, where it enters.
SessionFailure FailureFromException(const kj::Exception& e, FailureReason remote_reason, const std::string& call) {
  const kj::StringPtr raw = e.getDescription();
  const std::string_view description(raw.begin(), raw.size());
  if (e.getType() == kj::Exception::Type::DISCONNECTED) {
    return SessionFailure::Of(FailureReason::DISCONNECTED, call + ": connection lost: " + AgentText(description));
  }
  if (description.find(proto::kStatusExceptionPrefix) != std::string_view::npos) {
    return SessionFailure::Of(remote_reason, call + ": " + AgentText(proto::ExceptionToStatus(e).ToString()));
  }
  return SessionFailure::Of(FailureReason::PROTOCOL_ERROR, call + ": " + AgentText(description));
}

// An unexpected exception inside the runner after the order was recorded (a bug, or data from the
// agent that a check missed): recorded as an `internal` failure in a signed verdict.
SessionFailure FailureFromUnexpected(const char* where, std::string_view what) {
  return SessionFailure::Of(FailureReason::INTERNAL,
                            std::string("challenger: unexpected error ") + where + ": " + AgentText(what));
}

// Arrives at a wave's barriers exactly once each, also on early returns.
class WaveGuard {
 public:
  WaveGuard(WaveSync* sync, std::string member) : sync_(sync), member_(std::move(member)) {}
  ~WaveGuard() {
    if (sync_ == nullptr) return;
    if (!filled_) sync_->ArriveFilled(member_, false);
    if (!released_) sync_->ArriveReleasing(member_, false);
  }
  WaveGuard(const WaveGuard&) = delete;
  WaveGuard& operator=(const WaveGuard&) = delete;

  void Filled(bool ok) {
    if (sync_ == nullptr || filled_) return;
    filled_ = true;
    sync_->ArriveFilled(member_, ok);
  }
  // Returns the members that did not hold labels throughout.
  std::vector<std::string> Releasing(bool held) {
    Filled(false);  // no-op when already arrived
    if (sync_ == nullptr || released_) return {};
    released_ = true;
    return sync_->ArriveReleasing(member_, held);
  }
  bool active() const { return sync_ != nullptr; }

 private:
  WaveSync* sync_;
  std::string member_;
  bool filled_ = false;
  bool released_ = false;
};

// One run of the protocol; holds what the steps share.
class Session {
 public:
  Session(const SessionPlan& plan, const SessionKeys& keys, const SessionEnv& env)
      : plan_(plan), keys_(keys), env_(env), wave_(env.wave, plan.node_name) {
    out_.node_name = plan.node_name;
    out_.session_id = plan.session_id;
    sid_hex_ = HexEncode(plan.session_id.data(), plan.session_id.size());
  }

  StatusOr<SessionOutcome> Run(AgentConnector& connector);

 private:
  void Fail(SessionFailure failure) {
    if (!failure_.failed()) {
      LOG(WARNING) << "session " << sid_hex_ << " node " << plan_.node_name << ": " << failure.Describe();
      failure_ = std::move(failure);
    }
  }

  // Waits for `promise` at most `limit_us` of real time; nullptr when the time ran out.
  template <typename T>
  kj::Maybe<T> WaitBounded(kj::Promise<T> promise, uint64_t limit_us) {
    return promise.then([](T&& value) -> kj::Maybe<T> { return kj::mv(value); })
        .exclusiveJoin(
            env_.timer->afterDelay(limit_us * kj::MICROSECONDS).then([]() -> kj::Maybe<T> { return nullptr; }))
        .wait(*env_.wait_scope);
  }

  void RunFill(proto::ProverAgent::Client& agent);
  void CheckReport(const proto::SignedEnvelope& envelope);
  bool AwaitExpectedLabels();
  void RunRounds(proto::ProverAgent::Client& agent);
  bool CheckAnswer(uint32_t r, proto::ChallengeRound::Reader round, proto::RoundAnswer::Reader answer);
  void FinishOrAbort(proto::ProverAgent::Client* agent);
  // Signs the verdict for failure_ into out_.verdict, falling back to a minimal `internal` one.
  void SignVerdictOrMinimal();
  // Re-signs after a failure that came after a verdict was signed; a passing one is kept as
  // out_.superseded_verdict.
  void SupersedeWithFailure();
  void CheckTranscript(const proto::SignedEnvelope& envelope, const proto::SignedEnvelope& verdict);
  StatusOr<proto::SignedEnvelope> BuildVerdict(const SessionFailure& failure, VerdictSummary* summary);
  void Record();
  void Append(proto::LedgerRecordKind kind, const proto::Bytes& bytes, uint64_t* sequence = nullptr);

  const SessionPlan& plan_;
  const SessionKeys& keys_;
  const SessionEnv& env_;
  WaveGuard wave_;
  std::string sid_hex_;
  SessionOutcome out_;
  SessionFailure failure_;

  std::optional<ChallengeSet> challenges_;
  std::unique_ptr<ExpectedLabels> expected_;
  proto::TranscriptHasher transcript_;
  proto::Digest order_digest_{};
  std::optional<proto::Digest> report_digest_;
  bool have_report_ = false;  // a report that verified and matched the plan
  // Records the ledger accepts: well-formed and of this session (ledger_records.h). A report or
  // transcript that is neither is described in the failure text instead.
  bool report_recordable_ = false;
  bool transcript_recordable_ = false;
  std::vector<uint64_t> bytes_held_;
  std::vector<uint64_t> device_totals_;
  int64_t order_sent_us_ = -1;  // monotonic, when the order went out (the egress window's start)
  uint32_t rounds_passed_ = 0;
  std::vector<std::string> wave_not_held_;
};

StatusOr<SessionOutcome> Session::Run(AgentConnector& connector) {
  const uint32_t m = plan_.profile.chunk_labels;
  std::vector<ChallengeRange> ranges;
  for (const PlannedDevice& d : plan_.devices) ranges.push_back({d.first_label, d.label_count, d.labels_per_round});
  WP_ASSIGN_OR_RETURN(ChallengeSet challenges, GenerateChallenges(ranges, plan_.profile.rounds, m));
  challenges_.emplace(std::move(challenges));
  WP_ASSIGN_OR_RETURN(out_.order, SignOrder(plan_, keys_));
  order_digest_ = proto::Blake2b256(proto::AsView(out_.order.payload));
  WP_RETURN_IF_ERROR(transcript_.AddOrder(proto::AsView(out_.order.payload)));

  // A ledger without room for the whole session refuses it before any order exists: a session run
  // now could lose its verdict to a full disk.
  WP_RETURN_IF_ERROR(env_.records->CheckRoomForSession().WithContext("no session was started"));
  uint64_t order_sequence = 0;
  auto recorded = env_.records->Append(proto::LedgerRecordKind::ORDER, proto::AsView(proto::EncodeEnvelope(out_.order)),
                                       DataOf(plan_.session_id.data(), plan_.session_id.size()));
  if (!recorded.ok()) return recorded.status().WithContext("the ledger refused the order; no session was started");
  order_sequence = *recorded;
  out_.ledger_sequences.push_back(order_sequence);

  ExpectedLabelsSpec spec;
  spec.session = plan_.LabelSession();
  spec.devices = ranges;
  spec.threads = env_.threads;
  spec.test_delay_us = env_.expected_labels_test_delay_us;
  expected_ = ExpectedLabels::Start(spec, *challenges_);

  LOG(INFO) << "session " << sid_hex_ << " node " << plan_.node_name << ": order recorded (ledger #" << order_sequence
            << "), " << plan_.devices.size() << " device(s), m=" << m << ", R=" << plan_.profile.rounds;

  // From here on every failure, expected or not, ends in a signed verdict in the ledger.
  auto agent = connector.Connect();
  try {
    if (!agent.ok()) {
      Fail(SessionFailure::Of(FailureReason::DISCONNECTED, agent.status().message()));
    } else {
      RunFill(*agent);
    }
    wave_.Filled(have_report_ && !failure_.failed());
    if (!failure_.failed() && AwaitExpectedLabels()) RunRounds(*agent);
  } catch (const kj::Exception& e) {
    Fail(FailureFromUnexpected("during the fill or the rounds", e.getDescription().cStr()));
  } catch (const std::exception& e) {
    Fail(FailureFromUnexpected("during the fill or the rounds", e.what()));
  }
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

void Session::RunFill(proto::ProverAgent::Client& agent) {
  auto request = agent.startSessionRequest();
  proto::WriteEnvelope(out_.order, request.initOrder());
  const int64_t start = env_.clock->MonotonicMicros();
  order_sent_us_ = start;
  try {
    auto response = WaitBounded(request.send(), FillWaitLimitUs(plan_.fill_deadline_us));
    out_.fill_us = static_cast<uint64_t>(env_.clock->MonotonicMicros() - start);
    KJ_IF_MAYBE (r, response) {
      auto envelope = proto::DecodeEnvelope(r->getReport());
      if (!envelope.ok()) {
        Fail(SessionFailure::Of(FailureReason::PROTOCOL_ERROR,
                                "fill report: " + AgentText(envelope.status().ToString())));
        return;
      }
      out_.report = *envelope;
      CheckReport(*envelope);
    } else {
      Fail(SessionFailure::Of(FailureReason::LATE_FILL,
                              "no fill report within " + std::to_string(FillWaitLimitUs(plan_.fill_deadline_us)) +
                                  " us (deadline " + std::to_string(plan_.fill_deadline_us) + " us)"));
    }
  } catch (const kj::Exception& e) {
    out_.fill_us = static_cast<uint64_t>(env_.clock->MonotonicMicros() - start);
    Fail(FailureFromException(e, FailureReason::ORDER_REFUSED, "startSession"));
  }
  LOG(INFO) << "session " << sid_hex_ << " node " << plan_.node_name << ": fill " << out_.fill_us << " us (deadline "
            << plan_.fill_deadline_us << " us)";
}

void Session::CheckReport(const proto::SignedEnvelope& envelope) {
  if (envelope.kind == proto::MessageKind::FILL_REPORT) {
    auto readable = proto::ParseMessage<proto::FillReport>(proto::AsView(envelope.payload));
    report_recordable_ = readable.ok() && SameBytes(readable->root().getSessionId(), plan_.session_id);
  }
  Status signature = proto::VerifySignature(envelope, proto::MessageKind::FILL_REPORT, plan_.node_key);
  if (!signature.ok()) {
    Fail(SessionFailure::Of(signature.code() == StatusCode::kPermissionDenied ? FailureReason::BAD_SIGNATURE
                                                                              : FailureReason::PROTOCOL_ERROR,
                            "fill report: " + AgentText(signature.message())));
    return;
  }
  auto parsed = proto::ParseMessage<proto::FillReport>(proto::AsView(envelope.payload));
  if (!parsed.ok()) {
    Fail(SessionFailure::Of(FailureReason::PROTOCOL_ERROR, "fill report: " + AgentText(parsed.status().message())));
    return;
  }
  report_digest_ = proto::Blake2b256(proto::AsView(envelope.payload));
  proto::FillReport::Reader report = parsed->root();
  auto protocol_error = [this](const std::string& text) {
    Fail(SessionFailure::Of(FailureReason::PROTOCOL_ERROR, "fill report: " + text));
  };
  if (!SameBytes(report.getSessionId(), plan_.session_id)) return protocol_error("session id differs from the order's");
  if (!SameBytes(report.getOrderDigest(), order_digest_)) {
    return protocol_error("orderDigest " + HexOf(report.getOrderDigest()) + " is not the digest of the order sent (" +
                          HexEncode(order_digest_.data(), order_digest_.size()) + ")");
  }
  if (!SameBytes(report.getNodeKeyId(), plan_.node_key_id)) return protocol_error("nodeKeyId is not the node's key");
  auto devices = report.getDevices();
  if (devices.size() != plan_.devices.size()) {
    return protocol_error(std::to_string(devices.size()) + " devices, the order planned " +
                          std::to_string(plan_.devices.size()));
  }
  for (unsigned i = 0; i < devices.size(); ++i) {
    const PlannedDevice& want = plan_.devices[i];
    proto::DeviceFill::Reader got = devices[i];
    if (got.getSelector() != want.selector.c_str() || got.getFirstLabel() != want.first_label) {
      return protocol_error("devices[" + std::to_string(i) + "] is " + TextOf(got.getSelector()) + " at label " +
                            std::to_string(got.getFirstLabel()) + ", the order planned " + want.selector +
                            " at label " + std::to_string(want.first_label));
    }
    bytes_held_.push_back(got.getBytesHeld());
    device_totals_.push_back(got.getTotalBytes());
  }
  have_report_ = true;
  // Short of capacity minus reserve (as planned: rounded down to whole chunks), whatever the reason.
  for (unsigned i = 0; i < devices.size(); ++i) {
    const PlannedDevice& want = plan_.devices[i];
    proto::DeviceFill::Reader got = devices[i];
    if (got.getBytesHeld() < want.planned_bytes() || got.getLabelCount() < want.label_count) {
      SessionFailure f = SessionFailure::Of(
          FailureReason::SHORT_CAPACITY,
          "holds " + std::to_string(got.getBytesHeld()) + " bytes (" + std::to_string(got.getLabelCount()) +
              " labels), needs " + std::to_string(want.planned_bytes()) + " = capacity " +
              std::to_string(want.capacity_bytes) + " - allowed reserve " + std::to_string(want.allowed_reserve_bytes) +
              " rounded down to whole chunks; other processes hold " + std::to_string(got.getBytesHeldByOthers()) +
              " bytes" + (got.getNote().size() > 0 ? "; agent's note: " + TextOf(got.getNote()) : ""));
      f.device = want.selector;
      Fail(std::move(f));
      return;
    }
  }
  if (out_.fill_us > plan_.fill_deadline_us) {
    Fail(SessionFailure::Of(FailureReason::LATE_FILL, "fill took " + std::to_string(out_.fill_us) + " us, deadline " +
                                                          std::to_string(plan_.fill_deadline_us) + " us"));
    return;
  }
  Status hashed = transcript_.AddReport(proto::AsView(envelope.payload));
  if (!hashed.ok()) Fail(SessionFailure::Of(FailureReason::INTERNAL, "transcript: " + hashed.ToString()));
}

bool Session::AwaitExpectedLabels() {
  const bool ready = expected_->ready();
  const int64_t start = env_.clock->MonotonicMicros();
  // Keep the event loop turning while the worker finishes: a loop blocked in Wait() would leave
  // kj's timer at the old time, and round 0's real-time bound (deadline + 1 s, measured from that
  // stale "now") would expire at once although the agent answered in time.
  while (!expected_->ready()) env_.timer->afterDelay(kExpectedLabelsPollUs * kj::MICROSECONDS).wait(*env_.wait_scope);
  Status s = expected_->Wait();
  if (ready) {
    LOG(INFO) << "session " << sid_hex_ << ": expected labels were ready before the fill ended";
  } else {
    out_.expected_labels_wait_us = env_.clock->MonotonicMicros() - start;
    LOG(INFO) << "session " << sid_hex_ << ": the fill ended first; waited " << out_.expected_labels_wait_us
              << " us for expected labels";
  }
  if (!s.ok()) {
    Fail(SessionFailure::Of(FailureReason::INTERNAL, "expected labels: " + s.ToString()));
    return false;
  }
  return true;
}

void Session::RunRounds(proto::ProverAgent::Client& agent) {
  const ChallengeSet& challenges = *challenges_;
  const uint64_t deadline = plan_.profile.round_deadline_us;
  for (uint32_t r = 0; r < challenges.rounds(); ++r) {
    // Round r's indices are read here, just before they are sent, and nowhere earlier.
    capnp::MallocMessageBuilder message;
    auto round = message.initRoot<proto::ChallengeRound>();
    round.setSessionId(DataOf(plan_.session_id.data(), plan_.session_id.size()));
    round.setRoundIndex(r);
    auto devices = round.initDevices(static_cast<unsigned>(challenges.devices()));
    for (size_t d = 0; d < challenges.devices(); ++d) {
      const std::vector<uint64_t>& idx = challenges.Indices(r, d);
      devices[static_cast<unsigned>(d)].setDeviceIndex(static_cast<uint16_t>(d));
      auto list = devices[static_cast<unsigned>(d)].initLabelIndices(static_cast<unsigned>(idx.size()));
      for (size_t k = 0; k < idx.size(); ++k) list.set(static_cast<unsigned>(k), idx[k]);
    }
    auto request = agent.roundRequest();
    request.setRound(round.asReader());

    RoundRecord record;
    record.round = r;
    RoundExchange exchange;
    auto sent = proto::EncodeCanonical(round.asReader());
    if (sent.ok()) exchange.round = *std::move(sent);
    const int64_t start = env_.clock->MonotonicMicros();
    try {
      auto response = WaitBounded(request.send(), RoundWaitLimitUs(deadline));
      record.elapsed_us = static_cast<uint64_t>(env_.clock->MonotonicMicros() - start);
      record.deadline_met = record.elapsed_us <= deadline;
      KJ_IF_MAYBE (resp, response) {
        auto received = proto::EncodeCanonical(resp->getAnswer());
        if (received.ok()) exchange.answer = *std::move(received);
        const bool correct = CheckAnswer(r, round.asReader(), resp->getAnswer());
        record.all_correct = correct;
        record.labels_checked = correct ? static_cast<uint32_t>(challenges.LabelsPerRound()) : 0;
        if (correct && !record.deadline_met) {
          SessionFailure f =
              SessionFailure::Of(FailureReason::LATE_ROUND, "answered in " + std::to_string(record.elapsed_us) +
                                                                " us, deadline " + std::to_string(deadline) + " us");
          f.has_round = true;
          f.round = r;
          Fail(std::move(f));
        }
      } else {
        SessionFailure f = SessionFailure::Of(FailureReason::LATE_ROUND,
                                              "no answer within " + std::to_string(RoundWaitLimitUs(deadline)) +
                                                  " us (deadline " + std::to_string(deadline) + " us)");
        f.has_round = true;
        f.round = r;
        Fail(std::move(f));
      }
    } catch (const kj::Exception& e) {
      record.elapsed_us = static_cast<uint64_t>(env_.clock->MonotonicMicros() - start);
      SessionFailure f = FailureFromException(e, FailureReason::AGENT_ABORTED, "round " + std::to_string(r));
      f.has_round = true;
      f.round = r;
      Fail(std::move(f));
    }
    out_.rounds.push_back(record);
    out_.exchanges.push_back(std::move(exchange));
    VLOG(1) << "session " << sid_hex_ << " round " << r << ": " << record.elapsed_us << " us";
    if (failure_.failed()) return;
    ++rounds_passed_;
  }
}

bool Session::CheckAnswer(uint32_t r, proto::ChallengeRound::Reader round, proto::RoundAnswer::Reader answer) {
  auto protocol_error = [this, r](const std::string& text) {
    SessionFailure f = SessionFailure::Of(FailureReason::PROTOCOL_ERROR, "round answer: " + text);
    f.has_round = true;
    f.round = r;
    Fail(std::move(f));
    return false;
  };
  Status shape = proto::WalkMessage(answer);
  if (shape.ok()) shape = proto::ValidateShape(answer);
  if (!shape.ok()) return protocol_error(AgentText(shape.message()));
  if (!SameBytes(answer.getSessionId(), plan_.session_id)) return protocol_error("session id differs from the order's");
  if (answer.getRoundIndex() != r) {
    return protocol_error("answers round " + std::to_string(answer.getRoundIndex()) + ", expected " +
                          std::to_string(r));
  }
  const ChallengeSet& challenges = *challenges_;
  const size_t want_bytes = challenges.LabelsPerRound() * proto::kLabelBytes;
  capnp::Data::Reader labels = answer.getLabels();
  if (labels.size() != want_bytes) {
    return protocol_error(std::to_string(labels.size()) + " label bytes, expected " + std::to_string(want_bytes));
  }
  Status hashed = transcript_.AddRound(round, answer);
  if (!hashed.ok()) return protocol_error("transcript: " + AgentText(hashed.message()));

  const uint8_t* expected = expected_->Round(r);
  size_t at = 0;
  for (size_t d = 0; d < challenges.devices(); ++d) {
    const std::vector<uint64_t>& idx = challenges.Indices(r, d);
    for (size_t k = 0; k < idx.size(); ++k, at += proto::kLabelBytes) {
      if (std::memcmp(labels.begin() + at, expected + at, proto::kLabelBytes) == 0) continue;
      SessionFailure f = SessionFailure::Of(FailureReason::WRONG_LABEL, "label differs from the expected one");
      f.device = plan_.devices[d].selector;
      f.has_round = true;
      f.round = r;
      f.has_label = true;
      f.label_index = idx[k];
      f.expected.assign(expected + at, expected + at + proto::kLabelBytes);
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
  for (size_t d = 0; d < plan_.devices.size(); ++d) {
    facts.chunks_checked.push_back(challenges_->DistinctChunks(d, rounds_passed_, plan_.profile.chunk_labels));
  }
  facts.bytes_held = bytes_held_;
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
    const std::string first = failure_.failed() ? AgentText(failure_.Describe()) : "none (the session had passed)";
    failure_ = SessionFailure::Of(FailureReason::INTERNAL, "verdict: " + AgentText(verdict.status().ToString()) +
                                                               "; the session's first failure: " + first);
    rounds_passed_ = 0;
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
                                  "transcript: " + AgentText(envelope.status().ToString())));
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

  if (agent == nullptr || failure_.reason == FailureReason::DISCONNECTED) return;
  auto request = agent->abortRequest();
  request.setSessionId(DataOf(plan_.session_id.data(), plan_.session_id.size()));
  request.setReason("challenger: " + failure_.Describe());
  try {
    auto done = WaitBounded(request.send(), env_.abort_timeout_us);
    if (done == nullptr) LOG(WARNING) << "session " << sid_hex_ << ": abort not acknowledged in time";
  } catch (const kj::Exception& e) {
    LOG(WARNING) << "session " << sid_hex_ << ": abort failed: " << AgentText(e.getDescription().cStr());
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
                            "transcript: " + AgentText(signature.message())));
    return;
  }
  auto parsed = proto::ParseMessage<proto::TranscriptDigest>(proto::AsView(envelope.payload));
  if (!parsed.ok()) {
    Fail(SessionFailure::Of(FailureReason::PROTOCOL_ERROR, "transcript: " + AgentText(parsed.status().message())));
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

SessionRunner::SessionRunner(SessionPlan plan, SessionKeys keys, SessionEnv env)
    : plan_(std::move(plan)), keys_(std::move(keys)), env_(env) {
  CHECK(env_.clock != nullptr && env_.timer != nullptr && env_.wait_scope != nullptr && env_.records != nullptr)
      << "SessionEnv: clock, timer, wait_scope and records are required";
}

StatusOr<SessionOutcome> SessionRunner::Run(AgentConnector& connector) {
  // RPC failures are handled where they happen; anything escaping is a challenger bug, reported as
  // a Status rather than ending a wave run's thread.
  try {
    Session session(plan_, keys_, env_);
    return session.Run(connector);
  } catch (const kj::Exception& e) {
    return InternalError(std::string("session runner: ") + e.getDescription().cStr());
  } catch (const std::exception& e) {
    return InternalError(std::string("session runner: ") + e.what());
  }
}

}  // namespace wipeproof
