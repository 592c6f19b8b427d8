#include "challenger/session/session_run.h"

#include <capnp/message.h>
#include <glog/logging.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "challenger/session/session_close.h"
#include "common/hex.h"
#include "proto/codec.h"
#include "proto/label_wire.h"
#include "proto/round_channel_client.h"
#include "proto/session_rules.h"
#include "proto/validate.h"

namespace wipeproof {
namespace {

using proto::FailureReason;

// The longest (real time) the loop sleeps with nothing due: the wave's changes wake it (WaveSync
// listeners, LoopWake), answers and notices are events, and the fill's, the round's and the next
// holding round's times are waited for as such; this only paces the progress callback. (A 1 ms poll
// of the wave here cost a 200-member wave about half the challenger's CPU: docs/benchmarks.md.)
constexpr uint64_t kIdleWakeUs = 100'000;
constexpr uint64_t kOccupancyNotReadyRetryUs = 1'000;
constexpr uint64_t kRoundChannelHelloUs = 10'000'000;  // from the channel's connection to `ready`
constexpr size_t kRoundChannelTokenBytes = 32;          // wipe.capnp openRoundChannel
constexpr uint64_t kAnswerSlackWords = 64;              // an answer's root, session id and pointers


}  // namespace

void SessionRun::TaskErrors::taskFailed(kj::Exception&& e) {
  if (session != nullptr) session->Fail(FailureFromUnexpected("in an RPC handler", e.getDescription().cStr()));
}

SessionRun::SessionRun(const SessionPlan& plan, const SessionKeys& keys, const SessionEnv& env,
                       const ChallengeSet& challenges, ExpectedLabels& expected, uint64_t prepare_us)
    : s_(plan, keys, env, prepare_us),
      challenges_(challenges),
      expected_(expected),
      tasks_(errors_),
      devices_(plan.devices.size()),
      measure_cpu_(env.round_costs != nullptr) {
  for (size_t d = 0; d < devices_.size(); ++d) devices_[d].sent.has_holding = plan.devices[d].hold_labels > 0;
}

StatusOr<SessionOutcome> SessionRun::Run(AgentConnector& connector) {
  errors_.session = this;
  WP_RETURN_IF_ERROR(RecordOrder());
  // Every member of a wave run sends its order at the same moment, once all are prepared.
  s_.wave.Ready(true);

  // From here on every failure, expected or not, ends in a signed verdict in the ledger.
  auto agent = connector.Connect();
  try {
    if (!agent.ok()) {
      Fail(SessionFailure::Of(FailureReason::DISCONNECTED, agent.status().message()));
    } else {
      Drive(*agent, connector);
    }
  } catch (const kj::Exception& e) {
    Fail(FailureFromUnexpected("during the fill or the rounds", e.getDescription().cStr()));
  } catch (const std::exception& e) {
    Fail(FailureFromUnexpected("during the fill or the rounds", e.what()));
  }
  HashPendingRounds();  // the transcript holds every round before the close reads it
  if (s_.failure.failed()) s_.wave.Failed();
  s_.wave_not_held = s_.wave.Releasing(!s_.failure.failed());
  SessionClose close(s_, agent.ok() ? &*agent : nullptr);
  try {
    close.FinishOrAbort();
  } catch (const kj::Exception& e) {
    s_.Fail(FailureFromUnexpected("in finish or abort", e.getDescription().cStr()));
    close.SupersedeWithFailure();
  } catch (const std::exception& e) {
    s_.Fail(FailureFromUnexpected("in finish or abort", e.what()));
    close.SupersedeWithFailure();
  }
  if (s_.env.round_costs != nullptr) s_.env.round_costs->Add(s_.out.costs);
  if (s_.out.verdict.payload.empty()) {
    // Not even the minimal verdict could be signed (SessionClose); nothing to record.
    return InternalError(s_.name + ": no verdict could be signed; the order is in the ledger without one");
  }
  close.Record();
  s_.out.pass = !s_.failure.failed();
  s_.out.failure = s_.failure;
  LOG(INFO) << s_.name << ": " << (s_.out.pass ? "PASS" : "FAIL") << "; " << s_.out.summary.statement;
  return std::move(s_.out);
}

// Signs the order, parses it back for the session rules, notes whether its delegation signs the
// plan's inventory, starts the transcript with it and records
// it. Errors (no session was started): a plan whose order fails its shape check, a ledger without
// room for the session or refusing the order.
Status SessionRun::RecordOrder() {
  WP_ASSIGN_OR_RETURN(s_.out.order, SignOrder(s_.plan, s_.keys));
  WP_ASSIGN_OR_RETURN(auto order, proto::ParseMessage<proto::WipeOrder>(proto::AsView(s_.out.order.payload)));
  s_.order.emplace(order);
  s_.facts.order = s_.order->root();
  WP_ASSIGN_OR_RETURN(s_.inventory_signed,
                      DelegationSignsInventory(s_.facts.order, s_.keys.authority.public_key, s_.plan.inventory_digest));
  s_.facts.order_digest = proto::Blake2b256(proto::AsView(s_.out.order.payload));
  WP_RETURN_IF_ERROR(s_.transcript.AddOrder(proto::AsView(s_.out.order.payload)));
  // A ledger without room for the whole session refuses it before any order exists: a session run
  // now could lose its verdict to a full disk.
  WP_RETURN_IF_ERROR(s_.env.records->CheckRoomForSession().WithContext("no session was started"));
  auto recorded =
      s_.env.records->Append(proto::LedgerRecordKind::ORDER, proto::AsView(proto::EncodeEnvelope(s_.out.order)),
                             proto::AsView(s_.plan.session_id.data(), s_.plan.session_id.size()));
  if (!recorded.ok()) return recorded.status().WithContext("the ledger refused the order; no session was started");
  s_.out.ledger_sequences.push_back(*recorded);
  LOG(INFO) << s_.name << ": order recorded (ledger #" << *recorded << "), " << s_.plan.devices.size()
            << " device(s), m=" << s_.plan.profile.chunk_labels << ", " << s_.plan.profile.rounds
            << " proof rounds; challenges and expected labels ready (" << s_.out.prepare_us << " us)";
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// The events.

namespace {

// Grows `v`'s capacity to `n` and writes the memory of its first `written` elements once, leaving
// its contents as they were: a later push_back within them writes no fresh page.
template <typename T>
void ReserveWritten(std::vector<T>& v, size_t n, size_t written) {
  const size_t had = v.size();
  if (n <= had) return;
  v.reserve(n);
  v.resize(std::max(had, std::min(n, written)));
  v.resize(had);
}

// Words of a round's message with `parts` parts of `indices` indices in all: the root, the session
// id, one entry and one list per part, with room to spare (SendRound's first segment; an upper
// bound of the round's canonical size).
size_t RoundWordsBound(size_t parts, size_t indices) { return 16 + 4 * parts + indices + 2 * parts; }
// Bytes of an answer's canonical form with `labels` labels: the root, the session id, the round
// index and the time, 32 bytes per label, with room to spare.
size_t AnswerBytesBound(size_t labels) { return 128 + labels * proto::kLabelBytes; }
// The rounds' buffers are reserved within the first kLogBytesBudget bytes of a session's pool, the
// answers' within twice that (128 MiB in all); past it, rounds allocate their copies as they come.
// A session that runs every batch keeps as many bytes in its log anyway.
constexpr size_t kLogBytesBudget = size_t{64} << 20;
// Rounds whose log slots (timing row, exchange, cost, transcript entry: ~170 bytes) are written
// ahead: ~11 MiB at most.
constexpr size_t kLogSlotsWritten = 65536;

}  // namespace

// A page fault costs a round 20-40 us on the reference VM (benchmarks.md "Page faults in the
// challenger's rounds"), and each round's stores grow the log: so its memory is written now.
void SessionRun::PrepareRoundStorage() {
  // At most one round per batch of each device (occupancy rounds: one per batch): reserved. Written:
  // the rounds a session runs when its proof rounds go to every device at once (round_planner.h)
  // and its holding rounds one device at a time, at most kLogSlotsWritten.
  const size_t most_rounds = size_t{challenges_.batches() - challenges_.occupancy_batches()} * devices_.size() +
                             challenges_.occupancy_batches();
  const size_t likely_rounds = std::min<size_t>(
      kLogSlotsWritten, size_t{challenges_.proof_batches()} + size_t{challenges_.holding_batches()} * devices_.size() +
                            challenges_.occupancy_batches());
  ReserveWritten(s_.out.costs.rounds, most_rounds, likely_rounds);
  ReserveWritten(s_.out.rounds, most_rounds, likely_rounds);
  ReserveWritten(s_.out.exchanges, most_rounds, likely_rounds);
  ReserveWritten(transcript_pending_, most_rounds, likely_rounds);
  // One buffer per batch index of each kind, sized for a round of that batch on every device
  // (only the batch's size is read here: its indices stay unread until the round is sent).
  struct Kind {
    uint32_t first_batch, batches;
  };
  const Kind kinds[] = {{0, challenges_.proof_batches()},
                        {challenges_.proof_batches(), challenges_.holding_batches()},
                        {challenges_.first_occupancy_batch(), challenges_.occupancy_batches()}};
  for (const Kind& kind : kinds) {
    if (kind.batches == 0) continue;
    size_t indices = 0;
    for (size_t d = 0; d < devices_.size(); ++d) indices += challenges_.Indices(d, kind.first_batch).size();
    log_bytes_.Reserve(kind.batches, RoundWordsBound(devices_.size(), indices) * sizeof(capnp::word), kLogBytesBudget);
    log_bytes_.Reserve(kind.batches, AnswerBytesBound(indices), 2 * kLogBytesBudget);
  }
}

StatusOr<proto::Bytes> SessionRun::LogCopy(capnp::AnyStruct::Reader reader) {
  WP_ASSIGN_OR_RETURN(kj::Array<capnp::word> words, proto::CanonicalWords(reader));
  const kj::ArrayPtr<const kj::byte> bytes = words.asBytes();
  return log_bytes_.CopyOf(bytes.begin(), bytes.size());
}

void SessionRun::Drive(proto::ProverAgent::Client& agent, AgentConnector& connector) {
  // Before the order's time is taken: the fill's time does not include it.
  PrepareRoundStorage();
  agent_ = &agent;
  s_.sent.monotonic_us = s_.env.clock->MonotonicMicros();
  s_.sent.unix_us = s_.env.clock->UnixMicros();
  s_.sent.real = s_.env.timer->now();
  s_.out.order_sent_unix_us = s_.sent.unix_us;
  s_.out.order_sent_monotonic_us = s_.sent.monotonic_us;
  next_round_at_ = s_.sent.real;
  // The session thread's CPU from here to the last round (round_costs.h).
  const uint64_t cpu_start_ns = ThreadRusageCpuNs();
  // The wave's fill and end wake this loop from the member that completes them.
  struct Listening {
    WaveGuard& wave;
    uint64_t id;
    ~Listening() { wave.RemoveListener(id); }
  } listening{s_.wave, s_.wave.AddListener([wake = wave_wake_] { wake->Fire(); })};
  SendRequests(agent);
  OpenRoundChannel(agent, connector);
  for (;;) {
    CheckRealTimeLimits();
    if (s_.failure.failed()) break;
    if (OccupancyOpen() && OccupancyWindowOver()) CloseOccupancyWindow();
    MaybeSendRound();
    if (s_.failure.failed()) break;
    if (!in_flight_ && s_.fills.report_verified() && s_.fills.AllNoticed() && ProofDone() && OccupancyDone() &&
        s_.wave.WaveDone()) {
      break;
    }
    ReportProgress();
    ++s_.out.costs.loop_turns;
    WaitUntil(NextWake());
  }
  if (OccupancyOpen()) CloseOccupancyWindow();  // a failure ended it early
  if (channel_open_ && !channel_busy_) {
    // No more rounds: the agent's end of the channel closes at once (it would at the session's end).
    try {
      channel_stream_->shutdownWrite();
    } catch (const kj::Exception&) {
      // Already closed by the agent.
    }
  }
  s_.occupancy = occupancy_;
  // On a loop shared with other sessions the thread's CPU is theirs too: its owner counts it.
  if (!s_.env.thread_shared) s_.out.costs.thread_cpu_ns = ThreadRusageCpuNs() - cpu_start_ns;
  LOG(INFO) << s_.name << ": " << s_.out.rounds.size() << " rounds (" << s_.plan.profile.rounds
            << " proof rounds per device)";
}

// startSession, and deviceFilled for every device at once.
void SessionRun::SendRequests(proto::ProverAgent::Client& agent) {
  auto start = agent.startSessionRequest();
  proto::WriteEnvelope(s_.out.order, start.initOrder());
  tasks_.add(start.send().then([this](auto&& response) { OnReport(response.getReport()); },
                               [this](kj::Exception&& e) {
                                 report_arrived_ = true;
                                 s_.out.fill_us = s_.SinceOrderUs();
                                 Fail(FillFailure(e));
                               }));
  for (size_t d = 0; d < s_.plan.devices.size(); ++d) {
    auto request = agent.deviceFilledRequest();
    request.setSessionId(proto::AsView(s_.plan.session_id.data(), s_.plan.session_id.size()));
    request.setDeviceIndex(static_cast<uint16_t>(d));
    tasks_.add(request.send().then([this, d](auto&& response) { OnNotice(d, response.getNotice()); },
                                   [this, d](kj::Exception&& e) {
                                     // Usually the session ended: startSession says why. Decided there.
                                     s_.fills.NoticeFailed(d, FailureFromException(e, FailureReason::PROTOCOL_ERROR,
                                                                                 "deviceFilled(" +
                                                                                     s_.plan.devices[d].selector + ")"));
                                     if (report_arrived_ && !s_.failure.failed()) Fail(*s_.fills.notice_failure(d));
                                     Wake();
                                   }));
  }
}

// startSession's failure. Once a round went out it is no refusal of the order: never "busy" (which
// says nothing was wiped), and it says, as OnRoundError does, that the node's indices were on the
// wire (a retry is a new session); a round refused meanwhile is named too.
SessionFailure SessionRun::FillFailure(const kj::Exception& e) const {
  SessionFailure f = FailureFromException(e, FailureReason::ORDER_REFUSED, "startSession");
  if (s_.out.rounds_sent == 0) return f;
  if (f.reason == FailureReason::NODE_BUSY) f.reason = FailureReason::ORDER_REFUSED;
  std::string text = f.text + " (after " + std::to_string(s_.out.rounds_sent) +
                     " round(s) were sent: the node's failed wipe; a retry is a new session and does not replace this "
                     "verdict)";
  if (round_failure_before_report_) text += "; before it: " + round_failure_before_report_->text;
  f.text = PeerText(text, kMaxFailureTextBytes);
  return f;
}

// The round channel: a token from the agent over RPC (pipelined after startSession, so the session
// exists), a second connection, the hello. Until it is open and the fill report is in (SendRound),
// or if it never opens, rounds go over RPC. No round ever waits for it: the node decides when its `ready` comes, and a wait it could
// stretch would be time between its fill report and the first round (threat-model T-EARLY-FILL).
void SessionRun::OpenRoundChannel(proto::ProverAgent::Client& agent, AgentConnector& connector) {
  if (!connector.HasRoundChannel()) return;
  auto request = agent.openRoundChannelRequest();
  request.setSessionId(proto::AsView(s_.plan.session_id.data(), s_.plan.session_id.size()));
  auto token = std::make_shared<proto::Bytes>();
  tasks_.add(request.send()
                 .then([&connector, token](auto&& response) {
                   auto t = response.getToken();
                   KJ_REQUIRE(t.size() == kRoundChannelTokenBytes, "a round channel token of another size", t.size());
                   token->assign(t.begin(), t.end());
                   return connector.ConnectRoundChannel();
                 })
                 .then([this, token](kj::Own<kj::AsyncIoStream> stream) {
                   channel_stream_ = kj::mv(stream);
                   channel_ = std::make_unique<proto::RoundChannelClient>(*channel_stream_);
                   // Its own deadline: a channel still opening in the proof rounds would only take the
                   // event loop's time from them.
                   return s_.env.timer->timeoutAfter(
                       kRoundChannelHelloUs * kj::MICROSECONDS,
                       channel_->Open(proto::AsView(s_.plan.session_id.data(), s_.plan.session_id.size()),
                                      proto::AsView(*token)));
                 })
                 .then(
                     [this]() {
                       channel_open_ = true;
                       VLOG(1) << s_.name << ": round channel open";
                     },
                     [this](kj::Exception&& e) {
                       const std::string why = PeerText(e.getDescription().cStr());
                       if (s_.failure.failed()) {
                         VLOG(1) << s_.name << ": no round channel (the session has failed): " << why;
                       } else if (e.getType() == kj::Exception::Type::UNIMPLEMENTED) {
                         LOG(INFO) << s_.name << ": rounds over RPC: " << why;
                       } else {
                         LOG(WARNING) << s_.name << ": rounds over RPC, the round channel did not open: " << why;
                       }
                     }));
}

// The next time the loop must look: the idle wake, the fill's and the round's real-time limits,
// the next holding round's gap.
kj::TimePoint SessionRun::NextWake() const {
  const kj::TimePoint now = s_.env.timer->now();
  kj::TimePoint wake = now + kIdleWakeUs * kj::MICROSECONDS;
  if (!report_arrived_) wake = std::min(wake, s_.sent.real + FillWaitLimitUs(s_.plan.fill_deadline_us) * kj::MICROSECONDS);
  if (in_flight_) {
    wake = std::min(wake, in_flight_->sent_real + RoundWaitLimitUs(s_.plan.profile.round_deadline_us) * kj::MICROSECONDS);
  } else if (next_round_at_ > now) {
    wake = std::min(wake, next_round_at_);
  }
  if (OccupancyOpen()) wake = std::min(wake, std::max(now, occupancy_end_real_));
  return wake;
}

void SessionRun::OnNotice(size_t d, proto::Envelope::Reader wire) {
  if (s_.failure.failed()) return;
  const uint64_t fill_us = s_.SinceOrderUs();
  SessionFailure refused = s_.fills.AcceptNotice(d, wire, fill_us);
  if (refused.failed()) return Fail(std::move(refused));
  devices_[d].sent.noticed = true;
  VLOG(1) << s_.name << ": device " << s_.plan.devices[d].selector << " filled after " << fill_us << " us";
  if (s_.fills.report_verified() && s_.fills.AllNoticed()) s_.wave.Filled(true);
  // The device is challenged in this same turn of the event loop (unless a round is on the wire,
  // whose answer sends the next round at once, with this device in it).
  MaybeSendRound();
  Wake();
}

void SessionRun::OnReport(proto::Envelope::Reader wire) {
  report_arrived_ = true;
  s_.out.fill_us = s_.SinceOrderUs();
  auto envelope = proto::DecodeEnvelope(wire);
  if (!envelope.ok()) {
    Fail(SessionFailure::Of(FailureReason::PROTOCOL_ERROR, "fill report: " + PeerText(envelope.status().ToString())));
    return;
  }
  s_.out.report = *envelope;
  SessionFailure refused = s_.fills.AcceptReport(*envelope, s_.out.fill_us);
  if (refused.failed()) Fail(std::move(refused));
  LOG(INFO) << s_.name << ": fill report after " << s_.out.fill_us << " us (deadline " << s_.plan.fill_deadline_us << " us)";
  if (s_.failure.failed()) return;
  for (size_t d = 0; d < devices_.size(); ++d) {
    if (s_.fills.notice_failure(d)) return Fail(*s_.fills.notice_failure(d));
  }
  if (round_failure_before_report_) return Fail(*round_failure_before_report_);
  // Filled for the wave only once every device's notice is in too: a report alone says nothing a
  // round can check on a device whose notice is still to come.
  if (s_.fills.AllNoticed()) s_.wave.Filled(true);
  MaybeSendRound();
  Wake();
}

void SessionRun::OnAnswer(proto::RoundAnswer::Reader answer, int64_t answered_us, uint64_t received_ns) {
  if (!in_flight_) return;
  const uint64_t cpu_start_ns = measure_cpu_ ? ThreadCpuNs() : 0;
  InFlight round = std::move(*in_flight_);
  in_flight_.reset();
  auto received = LogCopy(answer);
  Status received_status = received.ok() ? Status::Ok() : received.status();
  RoundRecord& record = EndRound(round, received.ok() ? *std::move(received) : proto::Bytes(), answered_us);
  const uint64_t deadline = s_.plan.profile.round_deadline_us;
  record.deadline_met = record.elapsed_us <= deadline;
  if (!s_.failure.failed()) {
    // EndRound moved the round's and the answer's canonical bytes into the round log.
    const RoundExchange& logged = s_.out.exchanges.back();
    const bool correct = CheckAnswer(round, answer, logged, received_status);
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
      occupancy_.rounds += round.occupancy;
    }
  }
  VLOG(1) << s_.name << " round " << round.index << ": " << record.elapsed_us << " us";
  RoundCost* cost = round.index < s_.out.costs.rounds.size() ? &s_.out.costs.rounds[round.index] : nullptr;
  if (cost != nullptr) {
    cost->check_ns = SteadyNowNs() - received_ns;
    cost->round_ns = record.elapsed_us * 1000;
    if (measure_cpu_) cost->check_cpu_ns = ThreadCpuNs() - cpu_start_ns;
    cost->answered = true;
  }
  if (!s_.failure.failed() && s_.fills.report_verified() && s_.fills.AllNoticed() && ProofDone()) {
    // Once per session, before the next round is planned (the last member's report ends the
    // wave's holding rounds); timed apart: the last one wakes every member's loop.
    const uint64_t report_start_ns = SteadyNowNs();
    s_.wave.ProofDone(true);
    if (cost != nullptr) cost->wave_report_ns = SteadyNowNs() - report_start_ns;
  }
  if (s_.failure.failed()) return Wake();
  if (!occupancy_.ran && s_.plan.occupancy_window_us > 0 && round.proof && ProofDone()) {
    OpenOccupancyWindow(answered_us);
  }
  // The next round: proof rounds follow at once; holding rounds after a uniform gap, occupancy
  // rounds after an exponential one (occupancy_bound.h), drawn now and never disclosed.
  const uint64_t gap_us = OccupancyOpen()                 ? std::min(ExponentialGapUs(s_.plan.occupancy_mean_gap_us),
                                                                      s_.plan.occupancy_window_us + 1'000'000)
                          : s_.plan.hold_gap_max_us == 0 ? 0
                                                         : UniformBelow(s_.plan.hold_gap_max_us + 1);
  next_round_at_ = s_.env.timer->now() + gap_us * kj::MICROSECONDS;
  if (OccupancyOpen()) {
    occupancy_gap_us_ = gap_us;
    occupancy_gap_from_us_ = s_.SinceOrderUs();
    occupancy_gap_running_ = true;
  }
  MaybeSendRound();
  // Off the critical path: only while no round is on the wire (a gap, the session's end), so a
  // fast answer never waits for the challenger's hashing.
  if (!in_flight_) HashPendingRounds();
  Wake();
}

void SessionRun::OnReceived(const std::function<proto::RoundAnswer::Reader()>& answer_of) {
  // The round ends here, as it is received: what follows is the challenger's own check.
  const int64_t answered_us = s_.env.clock->MonotonicMicros();
  const uint64_t received_ns = SteadyNowNs();
  proto::RoundAnswer::Reader answer;
  try {
    answer = answer_of();
    // Every pointer checked now (a malformed answer is the node's protocol error, never the
    // challenger's), and no larger than the round's labels need, so the checks that read it again
    // stay within the reader's traversal limit.
    const uint64_t words = answer.totalSize().wordCount;
    if (in_flight_) {
      uint64_t labels = 0;
      for (const auto& [d, b] : in_flight_->parts) labels += challenges_.Indices(d, b).size();
      const uint64_t most = labels * proto::kLabelBytes / 8 + kAnswerSlackWords;
      KJ_REQUIRE(words <= most, "an answer larger than its round's labels need", words, most);
    }
  } catch (const kj::Exception& e) {
    return OnRoundError(e);
  }
  OnAnswer(answer, answered_us, received_ns);
}

void SessionRun::HashPendingRounds() {
  for (size_t i = 0; i < transcript_pending_.size() && !s_.failure.failed(); ++i) {
    const size_t index = transcript_pending_[i];  // of the exchange (and timing row) in the log
    const uint64_t start_ns = SteadyNowNs();
    const RoundExchange& logged = s_.out.exchanges[index];
    Status hashed = s_.transcript.AddRoundBytes(proto::AsView(logged.round), proto::AsView(logged.answer));
    const uint32_t round = s_.out.rounds[index].round;
    if (round < s_.out.costs.rounds.size()) s_.out.costs.rounds[round].transcript_ns = SteadyNowNs() - start_ns;
    if (hashed.ok()) continue;
    SessionFailure f =
        SessionFailure::Of(FailureReason::PROTOCOL_ERROR, "round answer: transcript: " + PeerText(hashed.message()));
    f.has_round = true;
    f.round = round;
    Fail(std::move(f));
  }
  transcript_pending_.clear();
}

void SessionRun::OnRoundError(const kj::Exception& e) {
  if (!in_flight_) return;
  InFlight round = std::move(*in_flight_);
  in_flight_.reset();
  EndRound(round, {}, s_.env.clock->MonotonicMicros());
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
  if (!report_arrived_ && f.reason != FailureReason::DISCONNECTED) {
    // A refusal while the fill runs: usually the session ended (a device failed), and startSession
    // says why, as for a notice (SendRequests). Decided there, or by the fill's wait limit; no
    // round is sent meanwhile.
    round_failure_before_report_ = std::move(f);
    return Wake();
  }
  Fail(std::move(f));
}

// The round's own message is read where it was built (round.message): no copy, no re-parse. The
// checks of the round as logged that a re-parse made stay: its canonical bytes exist, fit a
// ChallengeRound and have its shape (round_log.h parses them again when the log is built).
bool SessionRun::CheckAnswer(const InFlight& round, proto::RoundAnswer::Reader answer, const RoundExchange& logged,
                             const Status& answer_canonical) {
  auto protocol_error = [this, &round](const std::string& text) {
    SessionFailure f = SessionFailure::Of(FailureReason::PROTOCOL_ERROR, "round answer: " + text);
    f.has_round = true;
    f.round = round.index;
    Fail(std::move(f));
    return false;
  };
  if (!round.not_logged.empty()) return protocol_error("round not logged: " + round.not_logged);
  if (logged.round.size() > proto::kMaxChallengeRoundBytes) {
    return protocol_error("round not logged: " + std::to_string(logged.round.size()) + " bytes, over the limit of " +
                          std::to_string(proto::kMaxChallengeRoundBytes));
  }
  const proto::ChallengeRound::Reader sent =
      round.on_channel ? proto::RoundChannelClient::RoundOf(*round.message)
                       : round.message->getRoot<proto::ChallengeRound>().asReader();
  if (Status shape = proto::ValidateShape(sent); !shape.ok()) {
    return protocol_error("round not logged: " + shape.ToString());
  }
  Status fits = proto::CheckAnswerFitsRound(sent, answer);
  if (!fits.ok()) return protocol_error(fits.message());
  // The transcript hashes both messages in canonical form: the bytes just logged (an answer that
  // cannot be put in that form fails here, as it did when the hasher encoded it itself). It does so
  // while no round is in flight (HashPendingRounds), off the critical path; rounds stay in order,
  // as they are queued in the order their answers were checked.
  if (!answer_canonical.ok()) return protocol_error("transcript: " + PeerText(answer_canonical.message()));
  transcript_pending_.push_back(s_.out.exchanges.size() - 1);  // `logged`
  // Every label against its expected one: each part's answered labels are contiguous in the answer
  // and its expected labels contiguous in their batch, in the same order (CheckAnswerFitsRound
  // passed: the answer holds exactly the round's labels), so one comparison per part covers every
  // byte. Only on a difference is each label compared alone, to name the first wrong one.
  const uint8_t* got = answer.getLabels().begin();
  size_t offset = 0;
  bool all_same = true;
  for (const auto& [d, b] : round.parts) {
    const size_t bytes = challenges_.Indices(d, b).size() * proto::kLabelBytes;
    if (bytes > 0 && std::memcmp(got + offset, expected_.Batch(d, b), bytes) != 0) {
      all_same = false;
      break;
    }
    offset += bytes;
  }
  if (all_same) return true;
  // The expected labels in the round's order: its parts, each batch's labels in send order.
  expected_scratch_.clear();
  for (const auto& [d, b] : round.parts) {
    const uint8_t* batch = expected_.Batch(d, b);
    const size_t n = challenges_.Indices(d, b).size();
    for (size_t k = 0; k < n; ++k) expected_scratch_.push_back(batch + k * proto::kLabelBytes);
  }
  SessionFailure wrong =
      CompareLabels(s_.facts, sent, answer.getLabels().begin(), [this](size_t k) { return expected_scratch_[k]; });
  if (!wrong.failed()) return true;
  Fail(std::move(wrong));
  return false;
}

void SessionRun::MaybeSendRound() {
  if (s_.failure.failed() || in_flight_ || agent_ == nullptr || round_failure_before_report_) return;
  const uint64_t cpu_start_ns = measure_cpu_ ? ThreadCpuNs() : 0;
  const uint64_t decided_ns = SteadyNowNs();
  std::vector<DeviceRounds>& rounds = rounds_scratch_;
  rounds.clear();
  for (const DeviceRoundState& d : devices_) rounds.push_back(d.sent);
  RoundPlanInput in;
  in.devices = &rounds;
  in.proof_batches = challenges_.proof_batches();
  in.closing = Closing();
  in.wave_done = s_.wave.WaveDone();
  in.gap_elapsed = s_.env.timer->now() >= next_round_at_;
  in.holding_batches = challenges_.holding_batches();
  in.occupancy_batches = challenges_.occupancy_batches();
  in.occupancy_open = OccupancyOpen();
  const PlannedRound planned = PlanNextRound(in);
  if (planned.occupancy && !planned.parts.empty() && !OccupancyBatchReady(planned.parts.front().second)) return;
  ApplyPlannedRound(planned, in.proof_batches, in.holding_batches, &rounds);
  for (size_t d = 0; d < devices_.size(); ++d) devices_[d].sent = rounds[d];
  if (planned.holding_used_up && !holding_used_up_logged_) {
    holding_used_up_logged_ = true;
    LOG(WARNING) << s_.name
                 << ": holding rounds used up while the node or its wave is still filling or proving; waiting "
                    "without probes (the bound counts only the proof rounds, which follow the last fill)";
  }
  if (planned.occupancy_used_up) {
    LOG(WARNING) << s_.name << ": occupancy rounds used up before the window's end; the window ends now and states "
                               "nothing (a pool of OccupancyPoolRounds runs out with a chance below 1e-12)";
    CloseOccupancyWindow();
  }
  if (!planned.parts.empty()) SendRound(planned, decided_ns, cpu_start_ns);
}

// An occupancy batch's expected labels are computed while the window runs (expected_labels.h).
// One not ready yet delays its round: the loop looks again in a millisecond, and the delay is
// time the window does not protect (CloseOccupancyWindow counts it). A worker that stopped ends
// the window, which then states nothing.
bool SessionRun::OccupancyBatchReady(uint32_t batch) {
  expected_.AskFor(batch);
  if (expected_.BatchReady(batch)) return true;
  const Status worker = expected_.WorkerStatus();
  if (!worker.ok()) {
    LOG(ERROR) << s_.name << ": occupancy window ends early, its expected labels stopped: " << worker.ToString();
    CloseOccupancyWindow();
    return false;
  }
  if (!occupancy_behind_logged_) {
    occupancy_behind_logged_ = true;
    LOG(WARNING) << s_.name << ": occupancy round delayed: the challenger has not computed its expected labels yet "
                              "(the delay is unprotected time of the window; fewer threads than the window's rounds need)";
  }
  next_round_at_ = s_.env.timer->now() + kOccupancyNotReadyRetryUs * kj::MICROSECONDS;
  return false;
}

void SessionRun::SendRound(const PlannedRound& planned, uint64_t decided_ns, uint64_t cpu_start_ns) {
  InFlight round;
  round.index = s_.out.rounds_sent++;
  round.proof = planned.proof;
  round.occupancy = planned.occupancy;
  round.parts = planned.parts;
  // One first segment that holds the whole round (root, session id, one entry and one index list
  // per part; words, with room to spare): no second segment, no zeroed 8 KiB for a small round.
  size_t indices = 0;
  for (const auto& [d, b] : round.parts) indices += challenges_.Indices(d, b).size();
  const size_t words = RoundWordsBound(round.parts.size(), indices);
  // On the channel only once the fill report is in: until then startSession's outcome (a refused or
  // failed fill) and deviceFilled's share the RPC connection with the rounds, whose order on it
  // decides which failure the session is recorded with (a round refused because the fill failed
  // arrives after the fill's failure). Proof rounds, after the last fill, all go on the channel.
  round.on_channel = channel_open_ && !channel_busy_ && s_.fills.report_verified();
  round.message = std::make_shared<capnp::MallocMessageBuilder>(static_cast<unsigned>(words + 4));
  auto msg = round.on_channel ? proto::RoundChannelClient::InitRound(*round.message)
                              : round.message->initRoot<proto::ChallengeRound>();
  msg.setSessionId(proto::AsView(s_.plan.session_id.data(), s_.plan.session_id.size()));
  msg.setRoundIndex(round.index);
  auto devices = msg.initDevices(static_cast<unsigned>(round.parts.size()));
  for (size_t i = 0; i < round.parts.size(); ++i) {
    const auto [d, b] = round.parts[i];
    // A batch's indices are read here, just before they are sent, and nowhere earlier.
    const ChallengeSet::Batch idx = challenges_.Indices(d, b);
    devices[static_cast<unsigned>(i)].setDeviceIndex(static_cast<uint16_t>(d));
    auto list = devices[static_cast<unsigned>(i)].initLabelIndices(static_cast<unsigned>(idx.size()));
    for (size_t k = 0; k < idx.size(); ++k) list.set(static_cast<unsigned>(k), idx[k]);
  }
  auto sent = LogCopy(msg.asReader());
  if (sent.ok()) {
    round.round = *std::move(sent);
  } else {
    round.not_logged = sent.status().ToString();
  }
  // Over RPC the round is copied into the call's request; on the channel it is sent as built.
  std::optional<capnp::Request<proto::ProverAgent::RoundParams, proto::ProverAgent::RoundResults>> request;
  if (!round.on_channel) {
    // The round's size as the request's (its first segment then holds it, as the channel's does).
    request.emplace(agent_->roundRequest(capnp::MessageSize{words + 4, 0}));
    request->setRound(msg.asReader());
  }
  RoundCost cost;
  cost.build_ns = SteadyNowNs() - decided_ns;
  if (measure_cpu_) cost.build_cpu_ns = ThreadCpuNs() - cpu_start_ns;
  const size_t index = round.index;
  s_.out.costs.rounds.resize(std::max(s_.out.costs.rounds.size(), index + 1));
  s_.out.costs.rounds[index] = cost;
  round.sent_us = s_.env.clock->MonotonicMicros();
  if (round.occupancy) {
    const uint64_t sent_after_order = static_cast<uint64_t>(round.sent_us - s_.sent.monotonic_us);
    occupancy_sent_before_us_ = sent_after_order + 1;
    // The gap ran whole (the send came at its end or after); never more than the clock saw.
    if (occupancy_gap_running_) {
      occupancy_protected_us_ +=
          std::min(occupancy_gap_us_, sent_after_order > occupancy_gap_from_us_ ? sent_after_order - occupancy_gap_from_us_ : 0);
      occupancy_gap_running_ = false;
    }
  }
  round.sent_real = s_.env.timer->now();
  std::shared_ptr<capnp::MallocMessageBuilder> message = round.message;  // kept by the send, whatever the round
  in_flight_ = std::move(round);
  const uint64_t send_start_ns = SteadyNowNs();
  if (in_flight_->on_channel) {
    channel_busy_ = true;
    tasks_.add(channel_->Send(*message).attach(std::move(message)).then(
        [this]() {
          channel_busy_ = false;
          OnReceived([this] { return channel_->answer(); });
        },
        [this](kj::Exception&& e) {
          channel_busy_ = false;
          OnRoundError(e);
        }));
  } else {
    tasks_.add(request->send().then([this](auto&& response) { OnReceived([&response] { return response.getAnswer(); }); },
                                    [this](kj::Exception&& e) { OnRoundError(e); }));
  }
  s_.out.costs.rounds[index].send_ns = SteadyNowNs() - send_start_ns;
}

void SessionRun::CheckRealTimeLimits() {
  if (s_.failure.failed()) return;
  const kj::TimePoint now = s_.env.timer->now();
  if (!report_arrived_ && now - s_.sent.real > FillWaitLimitUs(s_.plan.fill_deadline_us) * kj::MICROSECONDS) {
    s_.out.fill_us = s_.SinceOrderUs();
    if (round_failure_before_report_) return Fail(*round_failure_before_report_);
    Fail(SessionFailure::Of(FailureReason::LATE_FILL,
                            "no fill report within " + std::to_string(FillWaitLimitUs(s_.plan.fill_deadline_us)) +
                                " us (deadline " + std::to_string(s_.plan.fill_deadline_us) + " us)"));
    return;
  }
  // Each device's notice within its own fill wait limit, report or not: a node that reports the
  // fill and withholds one notice would otherwise keep the session (and its wave) waiting.
  for (size_t d = 0; d < s_.plan.devices.size(); ++d) {
    if (s_.fills.noticed(d)) continue;
    const uint64_t limit = FillWaitLimitUs(std::max(s_.plan.devices[d].fill_deadline_us, s_.plan.fill_deadline_us));
    if (now - s_.sent.real > limit * kj::MICROSECONDS) {
      SessionFailure f =
          SessionFailure::Of(FailureReason::LATE_FILL, "no fill notice of device " + s_.plan.devices[d].selector +
                                                           " within " + std::to_string(limit) + " us");
      f.device = s_.plan.devices[d].selector;
      Fail(std::move(f));
      return;
    }
  }
  const uint64_t round_limit = RoundWaitLimitUs(s_.plan.profile.round_deadline_us);
  if (in_flight_ && now - in_flight_->sent_real > round_limit * kj::MICROSECONDS) {
    InFlight round = std::move(*in_flight_);
    in_flight_.reset();
    EndRound(round, {}, s_.env.clock->MonotonicMicros());
    SessionFailure f = SessionFailure::Of(FailureReason::LATE_ROUND,
                                          "no answer within " + std::to_string(round_limit) + " us (deadline " +
                                              std::to_string(s_.plan.profile.round_deadline_us) + " us)");
    f.has_round = true;
    f.round = round.index;
    Fail(std::move(f));
  }
}

RoundRecord& SessionRun::EndRound(InFlight& round, proto::Bytes answer, int64_t ended_us) {
  RoundRecord record;
  record.round = round.index;
  record.sent_after_order_us = static_cast<uint64_t>(round.sent_us - s_.sent.monotonic_us);
  record.proof = round.proof;
  record.on_channel = round.on_channel;
  record.elapsed_us = static_cast<uint64_t>(ended_us - round.sent_us);
  s_.out.rounds.push_back(record);
  s_.out.exchanges.push_back({std::move(round.round), std::move(answer)});
  return s_.out.rounds.back();
}

void SessionRun::Fail(SessionFailure failure) {
  s_.Fail(std::move(failure));
  Wake();
}

void SessionRun::Wake() {
  if (wake_) {
    wake_->fulfill();
    wake_ = nullptr;
  }
}

// Runs the event loop until `when` (real time), until a handler calls Wake(), or, while the wave
// is not done, until the wave's state changes (another member's thread fires wave_wake_).
void SessionRun::WaitUntil(kj::TimePoint when) {
  auto paf = kj::newPromiseAndFulfiller<void>();
  wake_ = kj::mv(paf.fulfiller);
  kj::Promise<void> waiting = paf.promise.exclusiveJoin(s_.env.timer->atTime(when));
  // Armed whenever the session is in a wave, also when the wave looks done: a change that fired
  // between the loop's last look and here left the wake pending, and Arm() returns at once for it
  // (not arming then would sleep until NextWake, up to kIdleWakeUs).
  const bool wave_pending = s_.wave.active();
  if (wave_pending) waiting = waiting.exclusiveJoin(wave_wake_->Arm());
  KJ_DEFER(if (wave_pending) wave_wake_->Disarm());
  waiting.wait(*s_.env.wait_scope);
  wake_ = nullptr;
}

// ---------------------------------------------------------------------------------------------
// Where the session stands.

bool SessionRun::ProofDone() const {
  return std::all_of(devices_.begin(), devices_.end(),
                     [this](const DeviceRoundState& d) { return d.proof_correct >= challenges_.proof_batches(); });
}

void SessionRun::OpenOccupancyWindow(int64_t answered_us) {
  occupancy_.ran = true;
  occupancy_.start_after_order_us = static_cast<uint64_t>(answered_us - s_.sent.monotonic_us);
  // A millisecond late: the timer's now() may lag the clock, and the clock decides (OccupancyWindowOver).
  occupancy_end_real_ = s_.env.timer->now() + (s_.plan.OccupancyRunUs() + 1'000) * kj::MICROSECONDS;
  LOG(INFO) << s_.name << ": proof rounds passed; occupancy window of " << s_.plan.occupancy_window_us
            << " us opens (mean gap " << s_.plan.occupancy_mean_gap_us << " us"
            << (s_.plan.OccupancyRunUs() < s_.plan.occupancy_window_us ? "; it closes earlier, at the wave's next run"
                                                                         : "")
            << ")";
}

// The window's length is measured on the session's clock, as the statement uses it; the event loop's
// timer (whose now() is read once per turn) only wakes the loop, and ends a window whose clock does
// not advance one second late.
bool SessionRun::OccupancyWindowOver() const {
  return s_.SinceOrderUs() >= occupancy_.start_after_order_us + s_.plan.OccupancyRunUs() ||
         s_.env.timer->now() >= occupancy_end_real_ + 1'000'000 * kj::MICROSECONDS;
}

void SessionRun::CloseOccupancyWindow() {
  occupancy_closed_ = true;
  // The window is [start, end): every occupancy round was sent before its end.
  occupancy_.end_after_order_us = std::max(s_.SinceOrderUs(), occupancy_sent_before_us_);
  if (occupancy_gap_running_) {  // the part of the last gap that ran
    const uint64_t end = occupancy_.end_after_order_us;
    occupancy_protected_us_ +=
        std::min(occupancy_gap_us_, end > occupancy_gap_from_us_ ? end - occupancy_gap_from_us_ : 0);
    occupancy_gap_running_ = false;
  }
  const uint64_t length = occupancy_.end_after_order_us - occupancy_.start_after_order_us;
  occupancy_.unprotected_us = length - std::min(length, occupancy_protected_us_);
  LOG(INFO) << s_.name << ": occupancy window closed after "
            << occupancy_.end_after_order_us - occupancy_.start_after_order_us << " us, " << occupancy_.rounds
            << " occupancy rounds passed";
}

// Proof rounds start once this node's report and every notice verified and every member of its
// wave reported filled: the bound then speaks of one moment after the last fill.
bool SessionRun::Closing() const { return s_.fills.report_verified() && s_.fills.AllNoticed() && s_.wave.AllFilled(); }

void SessionRun::ReportProgress() const {
  if (!s_.env.progress) return;
  SessionProgress p;
  p.filled = s_.fills.report_verified() && s_.fills.AllNoticed();
  p.waited_us = static_cast<uint64_t>((s_.env.timer->now() - s_.sent.real) / kj::MICROSECONDS);
  p.fill_deadline_us = s_.plan.fill_deadline_us;
  p.rounds_answered = static_cast<uint32_t>(s_.out.rounds.size());
  p.proof_rounds_total = challenges_.proof_batches();
  p.proof_rounds_done = p.proof_rounds_total;
  for (const DeviceRoundState& d : devices_) p.proof_rounds_done = std::min(p.proof_rounds_done, d.sent.proof_sent);
  if (in_flight_ && in_flight_->proof && p.proof_rounds_done > 0) --p.proof_rounds_done;  // sent, not answered
  s_.env.progress(p);
}

}  // namespace wipeproof
