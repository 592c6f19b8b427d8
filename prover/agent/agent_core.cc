#include "prover/agent/agent_core.h"

#include <capnp/message.h>
#include <glog/logging.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <utility>
#include <vector>

#include "common/hex.h"
#include "common/terminal_text.h"
#include "proto/codec.h"
#include "proto/delegation.h"
#include "proto/label_wire.h"
#include "proto/node_messages.h"
#include "proto/session_rules.h"
#include "prover/agent/agent_metrics.h"
#include "prover/agent/device_fill.h"
#include "prover/agent/device_match.h"
#include "prover/agent/fill_progress.h"
#include "prover/agent/fill_report.h"
#include "prover/agent/order_checks.h"
#include "prover/agent/session_transcript.h"

namespace wipeproof {

struct AgentCore::Session {
  Session(const proto::Parsed<proto::WipeOrder>& o, ConnectionId owner_id) : order(o), owner(owner_id) {}

  proto::Held<proto::WipeOrder> order;  // read by every round's rules (proto/session_rules.h)
  ConnectionId owner;
  SessionId id{};
  std::string name;                                // "session <hex id>" for messages
  std::vector<std::unique_ptr<DeviceSlot>> slots;  // plan order
  std::atomic<bool> cancel{false};                 // stops the fill
  Status end_status;                               // why the session is ending; set once, while filling
  bool fill_started = false;                       // FillSession has taken the session over
  bool filled = false;                             // phase ready: the report was returned
  bool verdict_pass = false;                       // the verdict in finish passed (when completed)
  // Per slot: its signed DeviceFillNotice once the device holds all its labels (it may then be
  // challenged, while other devices still fill), and the deviceFilled calls waiting for it.
  std::vector<std::optional<proto::SignedEnvelope>> notices;
  std::vector<std::vector<NoticeCallback>> waiters;
  // Order, notices and report as they come; rounds hashed on its own thread (session_transcript.h).
  std::unique_ptr<SessionTranscript> transcript;
  uint32_t rounds_answered = 0;
  // The last answered round, until HashAnsweredRound hands it to the transcript (after its answer
  // went out).
  bool answered_pending = false;
  AnsweredRound answered;
  // Reused by every round (no allocation per round once the first has sized them).
  std::vector<proto::ChallengedLabel> asked;
  std::vector<uint64_t> indices;
  std::vector<uint32_t> lookup_order;  // entries of the round's device list: GPUs first, host memory last
  bool proof_rounds_begun = false;     // a proof-shaped round (every device, its full q) was answered
  std::optional<RoundChannelToken> round_channel_token;  // issued by OpenRoundChannel, not yet used
  int64_t arrived_us = 0;   // monotonic
  uint64_t timeout_us = 0;  // microseconds after arrived_us
};

namespace {

SessionId ToSessionId(proto::ByteView bytes) {
  SessionId id{};
  std::memcpy(id.data(), bytes.begin(), std::min(bytes.size(), id.size()));
  return id;
}

bool SameBytes(proto::ByteView a, const SessionId& b) {
  return a.size() == b.size() && std::memcmp(a.begin(), b.data(), b.size()) == 0;
}

}  // namespace

AgentCore::AgentCore(AgentConfig config, BackendSet backends, const Clock& clock)
    : config_(std::move(config)),
      backends_(std::move(backends)),
      clock_(clock),
      start_unix_us_(clock.UnixMicros()),
      node_key_id_(proto::KeyIdOf(config_.node_key.public_key)),
      seen_(config_.replay_capacity) {
  CHECK(!config_.node_name.empty()) << "AgentConfig.node_name is required";
  phase_since_unix_us_ = start_unix_us_;
  for (const std::string& line : backends_.disabled) LOG(WARNING) << line;
}

AgentCore::~AgentCore() { Shutdown("agent stopping"); }

// ---------------------------------------------------------------------------------------------
// State helpers.

Status AgentCore::Refuse(const Status& status, const std::string& what, const char* reason) {
  last_error_ = what + ": " + status.ToString();
  if (config_.metrics != nullptr) config_.metrics->OnRefusal(reason, clock_.UnixMicros());
  LOG(WARNING) << TerminalSafe(last_error_);  // quotes the order's (peer-supplied) fields
  return status;
}

proto::AgentPhase AgentCore::PhaseLocked() const {
  if (!session_) return proto::AgentPhase::IDLE;
  if (!session_->end_status.ok()) return proto::AgentPhase::RELEASING;
  return session_->filled ? proto::AgentPhase::READY : proto::AgentPhase::FILLING;
}

void AgentCore::SetPhaseSinceLocked() { phase_since_unix_us_ = clock_.UnixMicros(); }

void AgentCore::EndSessionLocked(const Status& why) {
  Session& s = *session_;
  if (s.filled) {
    ReleaseSessionLocked(why, /*completed=*/false);
    return;
  }
  if (!s.end_status.ok()) return;  // already ending
  s.end_status = why;
  s.cancel.store(true);
  SetPhaseSinceLocked();
  LOG(WARNING) << s.name << ": stopping the fill: " << why.ToString();
}

void AgentCore::ReleaseSessionLocked(const Status& why, bool completed) {
  Session& s = *session_;
  // deviceFilled calls still waiting learn that the session ended.
  const Status ended = FailedPreconditionError(s.name + (completed ? " finished" : ": " + why.ToString()));
  for (auto& list : s.waiters) {
    for (NoticeCallback& done : list) done(ended);
  }
  const int64_t t0 = clock_.MonotonicMicros();
  const uint64_t bytes = ReleaseSlots(s.slots);
  const int64_t release_us = clock_.MonotonicMicros() - t0;
  if (config_.metrics != nullptr) config_.metrics->OnSessionEnded(completed, s.verdict_pass, why, clock_.UnixMicros());
  last_ended_id_ = s.id;
  if (completed) {
    last_ended_ = s.name + " finished";
    LOG(INFO) << s.name << ": finished after " << s.rounds_answered << " rounds; released " << bytes << " bytes in "
              << release_us << " us";
  } else {
    last_ended_ = s.name + " ended: " + why.ToString();
    last_error_ = last_ended_;
    // A failed or stopped fill has already given its memory back (device_fill.h): bytes is 0 then.
    LOG(WARNING) << last_ended_ << "; memory freed (" << bytes << " bytes released here in " << release_us << " us)";
  }
  session_.reset();
  SetPhaseSinceLocked();
  idle_cv_.notify_all();
}

// ---------------------------------------------------------------------------------------------
// StartSession: admission (checks 1-6) and the fill (step 7).

AgentCore::Admitted& AgentCore::Admitted::operator=(Admitted&& other) noexcept {
  if (this != &other) {
    if (core_ != nullptr) core_->AbandonAdmitted();
    core_ = other.core_;
    other.core_ = nullptr;
  }
  return *this;
}

AgentCore::Admitted::~Admitted() {
  if (core_ != nullptr) core_->AbandonAdmitted();
}

StatusOr<AgentCore::Admitted> AgentCore::AdmitSession(const proto::SignedEnvelope& order_envelope, ConnectionId owner,
                                                      const PeerKeyId& authenticated_as) {
  std::lock_guard<std::mutex> lock(mu_);
  const char* kRefused = "order refused";
  if (session_) {
    // Typed (BUSY), so the challenger never reads busyness from text (wipe.capnp FailureReason nodeBusy).
    return Refuse(BusyError(session_->name + " in progress (" + AgentPhaseName(PhaseLocked()) + ")"), kRefused,
                  AgentMetrics::kRefusedBusy);
  }
  // The signature is verified over the bytes before anything parses them (proto/signing.h).
  // The challenger signs orders; the authority's key stays offline and vouches for the challenger
  // through the delegation the order carries (proto/delegation.h).
  auto parsed = proto::VerifyAndParse<proto::WipeOrder>(order_envelope, config_.challenger_key);
  if (!parsed.ok()) return Refuse(parsed.status(), kRefused, AgentMetrics::kRefusedSignature);
  proto::WipeOrder::Reader order = parsed->root();
  const SessionId id = ToSessionId(order.getSessionId());
  const std::string name = "session " + HexEncode(id.data(), id.size());
  const int64_t now = clock_.UnixMicros();
  auto delegated = proto::CheckOrderDelegation(order, config_.authority_key, config_.challenger_key, now,
                                               config_.clock_skew_us);
  if (!delegated.ok()) {
    return Refuse(delegated.status(), kRefused + (" " + name), AgentMetrics::kRefusedDelegation);
  }

  Status checked = CheckOrderAddress(order, config_.node_name, node_key_id_, proto::KeyIdOf(config_.challenger_key));
  if (checked.ok()) checked = CheckOrderConnection(order, authenticated_as);
  const char* reason = AgentMetrics::kRefusedAddress;
  if (checked.ok()) {
    reason = AgentMetrics::kRefusedTime;
    OrderTimePolicy policy;
    policy.clock_skew_us = config_.clock_skew_us;
    policy.agent_start_unix_us = start_unix_us_;
    policy.max_order_lifetime_us = config_.max_order_lifetime_us;
    checked = CheckOrderTime(order, now, policy);
    if (checked.ok()) checked = CheckOrderOccupancy(order, config_.session_timeout_us);
  }
  if (checked.ok()) {
    reason = AgentMetrics::kRefusedReplayed;
    // Remembered until the order could no longer be accepted anyway.
    const int64_t expires = order.getExpiresAtUnixUs();
    const int64_t forget_at = expires > INT64_MAX - config_.clock_skew_us ? INT64_MAX : expires + config_.clock_skew_us;
    checked = seen_.Insert(id, forget_at, now);
  }
  if (!checked.ok()) return Refuse(checked, kRefused + (" " + name), reason);

  HostLimits host;
  host.budget_bytes = config_.host_budget_bytes;
  host.reserve_bytes = config_.host_reserve_bytes;
  auto planned = MatchOrderDevices(order, backends_, host);
  if (!planned.ok()) return Refuse(planned.status(), kRefused + (" " + name), AgentMetrics::kRefusedDevices);

  session_ = std::make_unique<Session>(*parsed, owner);
  Session* s = session_.get();
  s->id = id;
  s->name = name;
  for (MatchedDevice& p : *planned) s->slots.push_back(std::make_unique<DeviceSlot>(std::move(p)));
  s->notices.resize(s->slots.size());
  s->waiters.resize(s->slots.size());
  s->transcript = std::make_unique<SessionTranscript>(id, config_.transcript_thread, config_.round_stages);
  CHECK(s->transcript->AddOrder(s->order.bytes()).ok());  // a fresh transcript takes its order
  s->arrived_us = clock_.MonotonicMicros();
  const uint64_t asked = s->order.root().getSessionTimeoutUs();
  s->timeout_us = asked == 0 ? config_.session_timeout_us : std::min(asked, config_.session_timeout_us);
  SetPhaseSinceLocked();
  std::string devices;
  for (const auto& slot : s->slots) {
    devices +=
        (devices.empty() ? "" : ", ") + slot->plan.selector + " " + std::to_string(slot->plan.label_count) + " labels";
  }
  LOG(INFO) << name << ": order accepted (node " << config_.node_name << ", m=" << s->order.root().getChunkLabels()
            << ", timeout " << s->timeout_us << " us, connection " << owner << "): filling " << devices;
  return Admitted(this);
}

void AgentCore::AbandonAdmitted() {
  std::lock_guard<std::mutex> lock(mu_);
  // Only the Admitted handle may remove a session whose fill has not started, so it is still here.
  if (!session_ || session_->fill_started) return;
  Session& s = *session_;
  const Status why = s.end_status.ok() ? UnavailableError("the fill never started") : s.end_status;
  s.filled = true;  // no fill thread: release now
  ReleaseSessionLocked(why, /*completed=*/false);
}

StatusOr<proto::SignedEnvelope> AgentCore::StartSession(const proto::SignedEnvelope& order_envelope, ConnectionId owner,
                                                        const PeerKeyId& authenticated_as) {
  WP_ASSIGN_OR_RETURN(Admitted admitted, AdmitSession(order_envelope, owner, authenticated_as));
  return FillSession(std::move(admitted));
}

StatusOr<proto::SignedEnvelope> AgentCore::FillSession(Admitted admitted) {
  std::unique_lock<std::mutex> lock(mu_);
  CHECK(admitted.core_ == this && session_ && !session_->fill_started) << "FillSession without its admitted session";
  admitted.core_ = nullptr;  // from here on this call ends the session
  Session* s = session_.get();
  s->fill_started = true;
  const std::string name = s->name;
  proto::WipeOrder::Reader order = s->order.root();

  FillSettings settings;
  settings.session = proto::SessionRegion(order);
  settings.host_threads = config_.host_fill_threads;
  settings.cancel = &s->cancel;
  settings.clock = &clock_;
  settings.on_filled = [this, s](size_t i) { OnDeviceFilled(*s, i); };

  // The fill runs without the lock: status, abort, disconnect and timeouts act meanwhile. Nothing
  // but this thread removes a session that is not filled, so `s` stays valid. A session ended
  // between admission and here (it waited for a thread) is not filled at all.
  Status filled = s->end_status.ok() ? Status::Ok() : FailedPreconditionError("cancelled");
  if (filled.ok()) {
    lock.unlock();
    {
      FillProgressLogger progress(name, s->slots, config_.fill_progress);
      filled = AcquireAndFill(s->slots, settings);
      if (!filled.ok()) progress.StopWithoutLastLines();
    }
    lock.lock();
  }

  const uint64_t fill_us = static_cast<uint64_t>(clock_.MonotonicMicros() - s->arrived_us);
  if (!s->end_status.ok() || !filled.ok()) {
    // An ending (abort, disconnect, timeout) wins over the "cancelled" it caused in the fill; it
    // is returned naming the session. Fill errors stay as they are ("device 'SEL' short ...").
    const bool ended = !s->end_status.ok();
    const Status why = ended ? s->end_status : filled;
    s->filled = true;                                // no fill thread any more: release now
    ReleaseSessionLocked(why, /*completed=*/false);  // destroys *s
    return ended ? why.WithContext(name) : why;
  }
  auto report =
      SignFillReport(s->order.bytes(), proto::AsView(s->id), s->slots, fill_us, clock_.UnixMicros(), config_.node_key);
  Status hashed = report.ok() ? s->transcript->AddReport(proto::AsView(report->payload)) : report.status();
  s->filled = true;
  if (!hashed.ok()) {
    ReleaseSessionLocked(hashed.WithContext("signing the fill report"), /*completed=*/false);
    return hashed;
  }
  last_fill_micros_ = fill_us;
  SetPhaseSinceLocked();
  LOG(INFO) << name << ": filled and reported in " << fill_us << " us; answering rounds";
  return std::move(report).value();
}

void AgentCore::OnDeviceFilled(Session& s, size_t i) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!s.end_status.ok()) return;  // ending: no notice, the waiters learn why when it is released
  auto notice = proto::SignDeviceFillNotice(s.order.bytes(), proto::AsView(s.id), static_cast<uint16_t>(i),
                                            DeviceFillFactsOf(*s.slots[i]), clock_.UnixMicros(), config_.node_key);
  Status hashed =
      notice.ok() ? s.transcript->AddNotice(static_cast<uint16_t>(i), proto::AsView(notice->payload)) : notice.status();
  if (!hashed.ok()) {
    EndSessionLocked(hashed.WithContext("signing the fill notice of device '" + s.slots[i]->plan.selector + "'"));
    return;
  }
  s.notices[i] = *std::move(notice);
  LOG(INFO) << s.name << ": device '" << s.slots[i]->plan.selector << "' filled in " << s.slots[i]->fill_micros
            << " us; it may be challenged now";
  for (NoticeCallback& done : s.waiters[i]) done(*s.notices[i]);
  s.waiters[i].clear();
}

void AgentCore::AwaitDeviceFilled(ConnectionId from, proto::ByteView session_id, uint32_t device_index,
                                  NoticeCallback done) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!session_ || !SameBytes(session_id, session_->id)) {
    // Why it ended only for the session that ended last, never another's.
    const bool ended_last = !last_ended_.empty() && SameBytes(session_id, last_ended_id_);
    done(FailedPreconditionError("no session " +
                                 HexEncode(session_id.begin(), std::min<size_t>(session_id.size(), 64)) + " running" +
                                 (ended_last ? " (" + last_ended_ + ")" : "")));
    return;
  }
  Session& s = *session_;
  if (from != s.owner) {
    done(PermissionDeniedError(s.name + " belongs to another connection"));
    return;
  }
  if (device_index >= s.slots.size()) {
    done(InvalidArgumentError("device index " + std::to_string(device_index) + " out of range (the plan has " +
                              std::to_string(s.slots.size()) + ")"));
    return;
  }
  if (!s.end_status.ok()) {
    done(FailedPreconditionError(s.name + " is ending: " + s.end_status.ToString()));
    return;
  }
  if (s.notices[device_index]) {
    done(*s.notices[device_index]);
    return;
  }
  s.waiters[device_index].push_back(std::move(done));
}

// ---------------------------------------------------------------------------------------------
// Rounds.

Status AgentCore::AnswerRound(ConnectionId from, proto::ChallengeRound::Reader round,
                              proto::RoundAnswer::Builder answer) {
  const int64_t started_us = clock_.MonotonicMicros();
  std::lock_guard<std::mutex> lock(mu_);
  if (!session_) {
    return FailedPreconditionError("no session running" + (last_ended_.empty() ? "" : " (" + last_ended_ + ")"));
  }
  Session& s = *session_;
  if (from != s.owner) return PermissionDeniedError(s.name + " belongs to another connection");
  Status status = HashAnsweredRoundLocked(s);
  if (status.ok()) status = AnswerRoundLocked(s, round, answer, started_us);
  if (!status.ok()) {
    status = status.WithContext("round refused (protocol error; session ended)");
    EndSessionLocked(status);
  }
  return status;
}

namespace {

// A session id for messages: its hex when it has the size of one, else only its size (a peer's
// megabytes are never copied into a message or a log line).
std::string SessionIdText(proto::ByteView id) {
  if (id.size() == proto::kSessionIdBytes) return HexEncode(id.begin(), id.size());
  return "id of " + std::to_string(id.size()) + " bytes (" + std::to_string(proto::kSessionIdBytes) + " expected)";
}

}  // namespace

StatusOr<AgentCore::RoundChannelToken> AgentCore::OpenRoundChannel(ConnectionId from, proto::ByteView session_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!session_ || !SameBytes(session_id, session_->id)) {
    return FailedPreconditionError("no session " + SessionIdText(session_id) + " running");
  }
  Session& s = *session_;
  if (from != s.owner) return PermissionDeniedError(s.name + " belongs to another connection");
  if (!s.end_status.ok()) return FailedPreconditionError(s.name + " is ending: " + s.end_status.ToString());
  RoundChannelToken token;
  proto::RandomBytes(token.data(), token.size());
  s.round_channel_token = token;
  return token;
}

StatusOr<ConnectionId> AgentCore::RedeemRoundChannel(proto::ByteView session_id, proto::ByteView token,
                                                     const PeerKeyId& authenticated_as) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!session_ || !SameBytes(session_id, session_->id)) {
    return PermissionDeniedError("round channel: no session " + SessionIdText(session_id) + " running");
  }
  Session& s = *session_;
  if (!s.round_channel_token) return PermissionDeniedError("round channel: no unused token of " + s.name);
  if (!proto::SameSecretBytes(token, s.round_channel_token->data(), s.round_channel_token->size())) {
    return PermissionDeniedError("round channel: not the token of " + s.name);
  }
  WP_RETURN_IF_ERROR(CheckOrderConnection(s.order.root(), authenticated_as).WithContext("round channel"));
  s.round_channel_token.reset();
  return s.owner;
}

bool AgentCore::SessionRunsFor(ConnectionId owner, const SessionId& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return session_ != nullptr && session_->owner == owner && session_->id == id && session_->end_status.ok();
}

namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Status AgentCore::AnswerRoundLocked(Session& s, proto::ChallengeRound::Reader round, proto::RoundAnswer::Builder answer,
                                    int64_t started_us) {
  const bool staged = static_cast<bool>(config_.round_stages);
  const int64_t t_start = staged ? NowNs() : 0;
  if (!s.end_status.ok()) return FailedPreconditionError("session is ending: " + s.end_status.ToString());
  // A canonical copy, parsed with the same bounds as any received message (proto/codec.h): the
  // RPC reader is untrusted, the copy is validated and cheap (q = 256: 2 KiB). The same bytes go
  // into the transcript.
  WP_ASSIGN_OR_RETURN(proto::Bytes bytes, proto::EncodeCanonical(round));
  WP_ASSIGN_OR_RETURN(auto parsed, proto::ParseMessage<proto::ChallengeRound>(proto::AsView(bytes)));
  proto::ChallengeRound::Reader r = parsed.root();
  if (!SameBytes(r.getSessionId(), s.id)) {
    return InvalidArgumentError("round for session " + SessionIdText(r.getSessionId()));
  }
  if (r.getRoundIndex() != s.rounds_answered) {
    return InvalidArgumentError("round index " + std::to_string(r.getRoundIndex()) + ", expected " +
                                std::to_string(s.rounds_answered));
  }
  s.asked.clear();
  WP_RETURN_IF_ERROR(proto::CheckRoundFitsOrder(s.order.root(), r, &s.asked));
  if (!s.proof_rounds_begun && proto::IsProofRound(s.order.root(), r)) s.proof_rounds_begun = true;
  auto devices = r.getDevices();
  for (uint32_t i = 0; i < devices.size(); ++i) {
    const uint32_t d = devices[i].getDeviceIndex();
    if (!s.notices[d]) {
      return InvalidArgumentError("device '" + s.slots[d]->plan.selector + "' is challenged before its fill notice");
    }
  }
  if (s.asked.size() > (proto::kMaxRoundAnswerBytes - 1024) / proto::kLabelBytes) {
    return InvalidArgumentError(std::to_string(s.asked.size()) + " labels asked, more than one answer may carry");
  }
  s.indices.clear();
  for (const proto::ChallengedLabel& label : s.asked) s.indices.push_back(label.label);
  const int64_t t_checked = staged ? NowNs() : 0;

  answer.setSessionId(r.getSessionId());
  answer.setRoundIndex(r.getRoundIndex());
  WP_RETURN_IF_ERROR(LookUpRoundLocked(s, r, answer));
  const int64_t t_looked = staged ? NowNs() : 0;
  const int64_t elapsed = clock_.MonotonicMicros() - started_us;
  const uint32_t agent_micros = static_cast<uint32_t>(std::clamp<int64_t>(elapsed, 0, UINT32_MAX));
  answer.setAgentMicros(agent_micros);

  // What HashAnsweredRound needs once the answer went out (the answer's memory is the RPC
  // layer's then): the round's bytes and a copy of the labels (q = 256: 8 KiB).
  AnsweredRound& a = s.answered;
  a.round_canonical = std::move(bytes);
  auto labels = answer.getLabels();
  a.labels.assign(labels.begin(), labels.end());
  a.round_index = r.getRoundIndex();
  a.agent_micros = agent_micros;
  s.answered_pending = true;
  ++s.rounds_answered;
  last_round_micros_ = agent_micros;
  if (staged) {
    a.stages.round_index = a.round_index;
    a.stages.checks_ns = t_checked - t_start;
    a.stages.lookups_ns = t_looked - t_checked;
    a.stages.answer_ns = NowNs() - t_start;
  }
  return Status::Ok();
}

Status AgentCore::LookUpRoundLocked(Session& s, proto::ChallengeRound::Reader r, proto::RoundAnswer::Builder answer) {
  auto devices = r.getDevices();
  auto labels = answer.initLabels(static_cast<unsigned>(s.indices.size() * proto::kLabelBytes));
  // Where each entry's indices start in s.indices (and its labels in the answer).
  auto first_of = [&devices](uint32_t entry) {
    size_t at = 0;
    for (uint32_t i = 0; i < entry; ++i) at += devices[i].getLabelIndices().size();
    return at;
  };
  // Devices whose lookup runs on its own (GPUs) are started first, so that host memory's lookup,
  // which is the copying itself, overlaps them.
  s.lookup_order.clear();
  for (int pass = 0; pass < 2; ++pass) {
    for (uint32_t i = 0; i < devices.size(); ++i) {
      const bool host = s.slots[devices[i].getDeviceIndex()]->memory->device().kind == DeviceKind::kHost;
      if (host == (pass == 1)) s.lookup_order.push_back(i);
    }
  }
  Status failed;
  size_t started = 0;
  for (; started < s.lookup_order.size(); ++started) {
    const uint32_t entry = s.lookup_order[started];
    const DeviceSlot& slot = *s.slots[devices[entry].getDeviceIndex()];
    const size_t at = first_of(entry);
    failed = slot.memory->StartLookup(s.indices.data() + at, devices[entry].getLabelIndices().size(),
                                      labels.begin() + at * proto::kLabelBytes);
    if (!failed.ok()) {
      failed = failed.WithContext("device '" + slot.plan.selector + "'");
      break;
    }
  }
  // Every started lookup is finished, also after a failure: a device takes one lookup at a time,
  // and its kernel may still be writing into the device's lookup buffer.
  for (size_t k = 0; k < started; ++k) {
    const uint32_t entry = s.lookup_order[k];
    const DeviceSlot& slot = *s.slots[devices[entry].getDeviceIndex()];
    Status finished = slot.memory->FinishLookup();
    if (!finished.ok() && failed.ok()) failed = finished.WithContext("device '" + slot.plan.selector + "'");
  }
  return failed;
}

void AgentCore::HashAnsweredRound() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!session_ || !session_->answered_pending) return;
  Status hashed = HashAnsweredRoundLocked(*session_);
  if (!hashed.ok()) EndSessionLocked(hashed.WithContext("adding a round to the transcript"));
}

Status AgentCore::HashAnsweredRoundLocked(Session& s) {
  if (s.answered_pending) {
    s.answered_pending = false;
    if (config_.metrics != nullptr) config_.metrics->OnRoundAnswered(s.answered.agent_micros);
    VLOG(1) << s.name << ": round " << s.answered.round_index << " answered, "
            << s.answered.labels.size() / proto::kLabelBytes << " labels in " << s.answered.agent_micros << " us";
    s.transcript->AddRound(s.answered);  // leaves buffers to reuse in s.answered
  }
  // A round hashed earlier may have failed (a bug, session_transcript.h): the session ends now.
  return s.transcript->Error();
}

// ---------------------------------------------------------------------------------------------
// Finish.

StatusOr<proto::SignedEnvelope> AgentCore::Finish(ConnectionId from, const proto::SignedEnvelope& verdict) {
  return FinishDecoded(from, verdict);
}

StatusOr<proto::SignedEnvelope> AgentCore::Finish(ConnectionId from, proto::Envelope::Reader verdict) {
  return FinishDecoded(from, proto::DecodeEnvelope(verdict));
}

StatusOr<proto::SignedEnvelope> AgentCore::FinishDecoded(ConnectionId from,
                                                         const StatusOr<proto::SignedEnvelope>& verdict) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!session_) {
    return FailedPreconditionError("no session running" + (last_ended_.empty() ? "" : " (" + last_ended_ + ")"));
  }
  Session& s = *session_;
  if (from != s.owner) return PermissionDeniedError(s.name + " belongs to another connection");
  auto transcript = verdict.ok() ? FinishLocked(s, *verdict) : StatusOr<proto::SignedEnvelope>(verdict.status());
  if (!transcript.ok()) {
    Status status = transcript.status().WithContext("finish refused (protocol error; session ended)");
    EndSessionLocked(status);
    return status;
  }
  return transcript;
}

StatusOr<proto::SignedEnvelope> AgentCore::FinishLocked(Session& s, const proto::SignedEnvelope& verdict_envelope) {
  if (!s.end_status.ok()) return FailedPreconditionError("session is ending: " + s.end_status.ToString());
  if (!s.filled) return FailedPreconditionError("finish before the fill report");
  WP_ASSIGN_OR_RETURN(auto verdict, proto::VerifyAndParse<proto::Verdict>(verdict_envelope, config_.challenger_key));
  if (!SameBytes(verdict.root().getSessionId(), s.id)) {
    auto other = verdict.root().getSessionId();
    return InvalidArgumentError("verdict for session " + HexEncode(other.begin(), other.size()));
  }
  const proto::Digest order_digest = proto::Blake2b256(s.order.bytes());
  if (verdict.root().getOrderDigest() != proto::AsView(order_digest)) {
    return InvalidArgumentError("verdict names a different order (orderDigest differs)");
  }
  WP_RETURN_IF_ERROR(HashAnsweredRoundLocked(s));
  // Waits for the transcript's thread to hash the last rounds (at most a few, session_transcript.h).
  WP_ASSIGN_OR_RETURN(auto digest_and_rounds, s.transcript->Finish());
  const auto& [digest, round_count] = digest_and_rounds;
  WP_ASSIGN_OR_RETURN(proto::SignedEnvelope transcript,
                      proto::SignTranscriptDigest(proto::AsView(s.id), digest, round_count, verdict.bytes(),
                                                  clock_.UnixMicros(), config_.node_key));
  const bool pass = verdict.root().getPass();
  LOG(INFO) << s.name << ": verdict " << (pass ? "pass" : "FAIL")
            << (pass ? "" : " (" + TerminalSafe(verdict.root().getFailure().getText().cStr()) + ")")
            << "; transcript signed over " << round_count << " rounds";
  ++sessions_completed_;
  s.verdict_pass = pass;
  ReleaseSessionLocked(Status::Ok(), /*completed=*/true);
  return transcript;
}

// ---------------------------------------------------------------------------------------------
// Ending sessions from outside.

Status AgentCore::Abort(ConnectionId from, proto::ByteView session_id, const std::string& reason_text) {
  constexpr size_t kMaxReasonChars = 256;  // it comes from the wire and goes into logs
  const std::string reason = reason_text.substr(0, kMaxReasonChars);
  std::lock_guard<std::mutex> lock(mu_);
  if (!session_ || !SameBytes(session_id, session_->id)) {
    LOG(INFO) << "abort of session " << HexEncode(session_id.begin(), std::min<size_t>(session_id.size(), 64))
              << " from connection " << from << " ignored: it is not running";
    return Status::Ok();
  }
  if (from != session_->owner) {
    // Not recorded as last_error: a third party must not be able to overwrite what status shows.
    LOG_EVERY_N(WARNING, 100) << "abort of " << session_->name << " from connection " << from
                              << " refused: it belongs to connection " << session_->owner << " (" << google::COUNTER
                              << " such refusals so far)";
    return PermissionDeniedError(session_->name +
                                 " belongs to another connection; only the connection that started it may abort it");
  }
  EndSessionLocked(FailedPreconditionError("aborted: " + reason));
  return Status::Ok();
}

bool AgentCore::OwnsSession(ConnectionId connection) const {
  std::lock_guard<std::mutex> lock(mu_);
  return session_ != nullptr && session_->owner == connection;
}

bool AgentCore::HasSession() const {
  std::lock_guard<std::mutex> lock(mu_);
  return session_ != nullptr;
}

std::string AgentCore::AnsweringRounds() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!session_ || !session_->end_status.ok()) return "";
  for (const auto& notice : session_->notices) {
    if (notice) return session_->name + (session_->proof_rounds_begun ? " (proof rounds)" : " (holding rounds)");
  }
  return "";
}

void AgentCore::OnDisconnect(ConnectionId connection) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!session_ || session_->owner != connection) return;
  EndSessionLocked(UnavailableError("the challenger disconnected"));
}

void AgentCore::CheckTimeouts() {
  std::lock_guard<std::mutex> lock(mu_);
  seen_.Prune(clock_.UnixMicros());
  if (!session_ || !session_->end_status.ok()) return;
  const int64_t elapsed = clock_.MonotonicMicros() - session_->arrived_us;
  if (elapsed >= 0 && static_cast<uint64_t>(elapsed) >= session_->timeout_us) {
    EndSessionLocked(DeadlineExceededError("timed out: not finished " + std::to_string(elapsed) +
                                           " us after the order arrived (timeout " +
                                           std::to_string(session_->timeout_us) + " us)"));
  }
}

void AgentCore::Shutdown(const std::string& reason) {
  std::unique_lock<std::mutex> lock(mu_);
  if (session_) EndSessionLocked(UnavailableError(reason));
  idle_cv_.wait(lock, [this] { return session_ == nullptr; });
}

bool AgentCore::WaitUntilIdle(int64_t timeout_us) {
  std::unique_lock<std::mutex> lock(mu_);
  return idle_cv_.wait_for(lock, std::chrono::microseconds(timeout_us), [this] { return session_ == nullptr; });
}

// ---------------------------------------------------------------------------------------------
// Queries.

AgentStatusSnapshot AgentCore::GetStatus() const {
  std::lock_guard<std::mutex> lock(mu_);
  AgentStatusSnapshot out;
  out.phase = PhaseLocked();
  out.phase_since_unix_us = phase_since_unix_us_;
  out.fill_micros = last_fill_micros_;
  out.last_round_micros = last_round_micros_;
  out.sessions_completed = sessions_completed_;
  out.last_error = last_error_;
  if (session_) {
    out.session_id.assign(session_->id.begin(), session_->id.end());
    out.rounds_answered = session_->rounds_answered;
    for (const auto& slot : session_->slots) {
      DeviceProgress d;
      d.selector = slot->plan.selector;
      d.labels_filled = slot->labels_filled.load();
      d.bytes_held = d.labels_filled * proto::kLabelBytes;
      d.label_count = slot->plan.label_count;
      out.devices.push_back(std::move(d));
      out.bytes_acquired += slot->bytes_acquired.load();
    }
  }
  return out;
}

NodeDescriptionInfo AgentCore::Describe() const {
  NodeDescriptionInfo out;
  out.node_key_id = node_key_id_;
  out.node_public_key = config_.node_key.public_key;
  out.agent_version = config_.agent_version;
  out.devices = backends_.Devices();
  out.disabled = backends_.DisabledNow();
  return out;
}

}  // namespace wipeproof
